package buffer

import (
	"bytes"
	"encoding/binary"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The checkpoint snapshots a batch carries for the database's progress
// record: the checkpoints at the moment a batch is sealed are exactly where
// its counts end, so the sealed batch keeps a copy of them, and
// acknowledging it keeps that copy as the last acknowledged batch's.
var (
	subSnapshot = []byte("checkpoints") // in sealed, and in meta for the acked batch
	keySealedAt = []byte("sealed_at")   // in sealed, and in meta for the acked batch
	keyAckedID  = []byte("acked_batch") // in meta
)

// Snapshot is the position a batch's counts end at.
type Snapshot struct {
	// Batch is the batch's id; empty when there is none.
	Batch string
	// SealedAt is when the batch was sealed.
	SealedAt time.Time
	// Checkpoints are the stored checkpoints (key -> value, as Commit
	// takes them) at that moment: every line before them is counted in
	// this batch or an earlier one, none after them.
	Checkpoints map[string][]byte
	// MinuteOnly: the batch goes to the minute buckets only (see
	// Seal.MinuteOnly). Set for the SealedBatch.
	MinuteOnly bool
	// Layout is the batch's layout (Batch.Layout). Set for the
	// SealedBatch.
	Layout Layout
	// Finished are the last checkpoints of the files finished (their
	// checkpoints deleted) within the batch: the SealedBatch's, the
	// batch's; the AckedFullBatch's, those of the minute-only batches
	// acknowledged since. Nil when not known (sealed by an older
	// logtally).
	Finished map[string][]byte
	// Archives are the parts of replayed archives the batch counts
	// (AckedFullBatch: the minute-only batches acknowledged since).
	Archives []ArchiveRange
}

// The snapshot of the last acknowledged full batch: where the counts in
// the daily and monthly buckets end (with a coarse interval, the minute
// buckets' end later).
var (
	subCoarseSnap   = []byte("coarse_checkpoints") // in meta
	keyCoarseID     = []byte("coarse_batch")       // in meta
	keyCoarseSealed = []byte("coarse_sealed_at")   // in meta
)

// snapshotCheckpoints copies the checkpoints into the batch being sealed.
func snapshotCheckpoints(tx *bolt.Tx, sealed *bolt.Bucket, at time.Time) error {
	if sealed.Bucket(subSnapshot) != nil {
		if err := sealed.DeleteBucket(subSnapshot); err != nil {
			return err
		}
	}
	snap, err := sealed.CreateBucket(subSnapshot)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bktCheckpoints).ForEach(func(k, v []byte) error { return snap.Put(k, v) }); err != nil {
		return err
	}
	return sealed.Put(keySealedAt, u64(uint64(at.UnixNano())))
}

// ackSnapshot keeps the acknowledged batch's snapshot in meta.
func ackSnapshot(tx *bolt.Tx, sealed *bolt.Bucket) error {
	meta := tx.Bucket(bktMeta)
	if meta.Bucket(subSnapshot) != nil {
		if err := meta.DeleteBucket(subSnapshot); err != nil {
			return err
		}
	}
	if sealed.Bucket(subSnapshot) == nil { // sealed by an older logtally
		for _, k := range [][]byte{keyAckedID, keySealedAt} {
			if err := meta.Delete(k); err != nil {
				return err
			}
		}
		return nil
	}
	if err := sealed.MoveBucket(subSnapshot, meta); err != nil {
		return err
	}
	if sealed.Get(keyMinuteOnly) == nil { // a full batch: the daily and monthly counts end here too
		cs := readSnapshot(meta, sealed.Get(keyID))
		if v := sealed.Get(keySealedAt); len(v) == 8 {
			cs.SealedAt = time.Unix(0, int64(binary.BigEndian.Uint64(v)))
		}
		if err := putCoarseSnapshot(meta, cs); err != nil {
			return err
		}
	}
	if err := meta.Put(keyAckedID, sealed.Get(keyID)); err != nil {
		return err
	}
	if err := meta.Put(keySealedAt, sealed.Get(keySealedAt)); err != nil {
		return err
	}
	return sealed.Delete(keySealedAt)
}

// readSnapshot reads the snapshot kept in bkt (sealed or meta).
func readSnapshot(bkt *bolt.Bucket, id []byte) Snapshot {
	snap := bkt.Bucket(subSnapshot)
	if snap == nil || id == nil {
		return Snapshot{}
	}
	s := Snapshot{Batch: string(id), Checkpoints: map[string][]byte{}}
	if v := bkt.Get(keySealedAt); len(v) == 8 {
		s.SealedAt = time.Unix(0, int64(binary.BigEndian.Uint64(v)))
	}
	snap.ForEach(func(k, v []byte) error {
		s.Checkpoints[string(k)] = append([]byte(nil), v...)
		return nil
	})
	return s
}

// SnapshotOf names the batch whose snapshot ReadTx.Snapshot reads.
type SnapshotOf int

const (
	// SealedBatch is the batch in flight: where its counts end, with its
	// kind, finished files and archives' parts.
	SealedBatch SnapshotOf = iota
	// AckedBatch is the last acknowledged batch: where the counts MongoDB
	// acknowledged end.
	AckedBatch
	// AckedFullBatch is the last acknowledged full batch: where the
	// counts of the daily and monthly buckets end, with the files
	// finished and archives' parts of the minute-only batches
	// acknowledged since.
	AckedFullBatch
)

// Snapshot returns the snapshot of the batch of: where its counts end.
// Batch is empty when there is none (no batch sealed or acknowledged yet,
// or sealed by a logtally without snapshots).
func (t *ReadTx) Snapshot(of SnapshotOf) Snapshot {
	switch of {
	case SealedBatch:
		var s Snapshot
		sealed := t.tx.Bucket(bktSealed)
		if sealed.Bucket(subCounts) != nil {
			s = readSnapshot(sealed, sealed.Get(keyID))
			s.MinuteOnly = sealed.Get(keyMinuteOnly) != nil
			s.Layout = readLayout(sealed)
			if s.Batch != "" {
				s.Finished = readFinished(sealed.Bucket(subFinished))
				s.Archives = readArchives(sealed.Bucket(subArchives))
			}
		}
		return s
	case AckedBatch:
		meta := t.tx.Bucket(bktMeta)
		return readSnapshot(meta, meta.Get(keyAckedID))
	case AckedFullBatch:
		meta := t.tx.Bucket(bktMeta)
		id := meta.Get(keyCoarseID)
		if id == nil || meta.Bucket(subCoarseSnap) == nil {
			return Snapshot{}
		}
		s := Snapshot{Batch: string(id), Checkpoints: map[string][]byte{}, Finished: readFinished(meta.Bucket(subCoarseFinished)),
			Archives: readArchives(meta.Bucket(subCoarseArchives))}
		if v := meta.Get(keyCoarseSealed); len(v) == 8 {
			s.SealedAt = time.Unix(0, int64(binary.BigEndian.Uint64(v)))
		}
		meta.Bucket(subCoarseSnap).ForEach(func(k, v []byte) error {
			s.Checkpoints[string(k)] = bytes.Clone(v)
			return nil
		})
		return s
	}
	return Snapshot{}
}

// putCoarseSnapshot stores s as the last acknowledged full batch's.
func putCoarseSnapshot(meta *bolt.Bucket, s Snapshot) error {
	if meta.Bucket(subCoarseSnap) != nil {
		if err := meta.DeleteBucket(subCoarseSnap); err != nil {
			return err
		}
	}
	snap, err := meta.CreateBucket(subCoarseSnap)
	if err != nil {
		return err
	}
	for k, v := range s.Checkpoints {
		if err := snap.Put([]byte(k), v); err != nil {
			return err
		}
	}
	if err := meta.Put(keyCoarseID, []byte(s.Batch)); err != nil {
		return err
	}
	return meta.Put(keyCoarseSealed, u64(uint64(s.SealedAt.UnixNano())))
}
