package buffer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/visitor"
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
	// SealMinuteOnly). Set by SealedSnapshot.
	MinuteOnly bool
	// Layout is the batch's layout (Batch.Layout). Set by
	// SealedSnapshot.
	Layout Layout
	// Finished are the last checkpoints of the files finished (their
	// checkpoints deleted) within the batch: SealedSnapshot's, the
	// batch's; CoarseSnapshot's, those of the minute-only batches
	// acknowledged since. Nil when not known (sealed by an older
	// logtally).
	Finished map[string][]byte
	// Archives are the parts of replayed archives the batch counts
	// (CoarseSnapshot: the minute-only batches acknowledged since).
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

// SealedSnapshot returns the snapshot of the batch in flight: where its
// counts end. Batch is empty when no batch is sealed (or the batch was
// sealed by a logtally without snapshots).
func (b *Buffer) SealedSnapshot() (Snapshot, error) {
	var s Snapshot
	err := b.view(func(tx *bolt.Tx) error {
		sealed := tx.Bucket(bktSealed)
		if sealed.Bucket(subCounts) != nil {
			s = readSnapshot(sealed, sealed.Get(keyID))
			s.MinuteOnly = sealed.Get(keyMinuteOnly) != nil
			s.Layout = readLayout(sealed)
			if s.Batch != "" {
				s.Finished = readFinished(sealed.Bucket(subFinished))
				s.Archives = readArchives(sealed.Bucket(subArchives))
			}
		}
		return nil
	})
	if err != nil {
		return Snapshot{}, fmt.Errorf("read sealed snapshot: %w", err)
	}
	return s, nil
}

// CoarseSnapshot returns the snapshot of the last acknowledged full batch:
// where the counts of the daily and monthly buckets end. Batch is empty
// when none is known (no full batch acknowledged by this buffer yet).
func (b *Buffer) CoarseSnapshot() (Snapshot, error) {
	var s Snapshot
	err := b.view(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bktMeta)
		id := meta.Get(keyCoarseID)
		if id == nil || meta.Bucket(subCoarseSnap) == nil {
			return nil
		}
		s = Snapshot{Batch: string(id), Checkpoints: map[string][]byte{}, Finished: readFinished(meta.Bucket(subCoarseFinished)),
			Archives: readArchives(meta.Bucket(subCoarseArchives))}
		if v := meta.Get(keyCoarseSealed); len(v) == 8 {
			s.SealedAt = time.Unix(0, int64(binary.BigEndian.Uint64(v)))
		}
		return meta.Bucket(subCoarseSnap).ForEach(func(k, v []byte) error {
			s.Checkpoints[string(k)] = bytes.Clone(v)
			return nil
		})
	})
	if err != nil {
		return Snapshot{}, fmt.Errorf("read coarse snapshot: %w", err)
	}
	return s, nil
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

// AckedSnapshot returns the snapshot of the last acknowledged batch: where
// the counts MongoDB has acknowledged end. Batch is empty when no batch
// was acknowledged yet.
func (b *Buffer) AckedSnapshot() (Snapshot, error) {
	var s Snapshot
	err := b.view(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bktMeta)
		s = readSnapshot(meta, meta.Get(keyAckedID))
		return nil
	})
	if err != nil {
		return Snapshot{}, fmt.Errorf("read acked snapshot: %w", err)
	}
	return s, nil
}

// Rebuild sets up a buffer rebuilt from the database's progress record,
// before anything else is written to it: acked becomes the last
// acknowledged batch's snapshot, the stored checkpoints become cps, and
// the last-commit time becomes since (the time the rebuilt position was
// reached, so the tailers read rotated files written after it). When
// counts is not nil, it is sealed at once as a batch with id inflight (the
// batch the lost buffer had in flight, rebuilt), whose snapshot is cps,
// sealed at since (the lost batch's own seal time).
func (b *Buffer) Rebuild(acked Snapshot, cps map[string][]byte, counts map[string]measure.Vector, inflight string, since time.Time) error {
	return b.RebuildCoarse(acked, cps, counts, inflight, since, Coarse{})
}

// Coarse is what RebuildCoarse restores of the coarse counts (see
// SealMinuteOnly).
type Coarse struct {
	// Snapshot is where the daily and monthly counts end: the last
	// acknowledged full batch's snapshot. Its Finished (nil: not known)
	// become the files finished since, as CoarseSnapshot reports them.
	Snapshot Snapshot
	// Counts are the counts acknowledged in the minute buckets only,
	// waiting for a full batch (re-read from Snapshot on).
	Counts map[string]measure.Vector
	// MinuteOnly: the batch in flight was minute-only.
	MinuteOnly bool
}

// RebuildCoarse is Rebuild for a lost buffer that wrote the daily and
// monthly buckets less often than the minute ones: c.Counts wait in the
// coarse counts (a full batch in flight takes them at once, as its seal
// did), and c.Snapshot is where the daily and monthly counts end.
func (b *Buffer) RebuildCoarse(acked Snapshot, cps map[string][]byte, counts map[string]measure.Vector, inflight string, since time.Time, c Coarse) error {
	return b.RebuildWith(Rebuilt{Acked: acked, Checkpoints: cps, Counts: counts, Batch: inflight, Since: since, Coarse: c})
}

// Rebuilt is what RebuildWith sets up.
type Rebuilt struct {
	// Acked becomes the last acknowledged batch's snapshot.
	Acked Snapshot
	// Checkpoints become the stored checkpoints.
	Checkpoints map[string][]byte
	// Counts, when not nil, are sealed at once as batch Batch (the batch
	// the lost buffer had in flight, rebuilt), whose snapshot is
	// Checkpoints, sealed at Since.
	Counts map[string]measure.Vector
	Batch  string
	// Layout is the rebuilt batch's layout: the lost batch's, as its
	// record names it (none: LayoutPages, the layout of every batch
	// before layouts), so that the rebuilt batch goes where the lost
	// one's first attempts may have gone.
	Layout Layout
	// Since becomes the last-commit time (the time the rebuilt position
	// was reached, so the tailers read rotated files written after it).
	Since time.Time
	// Finished are the files the batch in flight finished (Commit's
	// Finished; nil: not known), carried by the rebuilt batch. Marks are
	// the ledger marks of what was re-read, recorded in the ledger and
	// carried by the next batch to the database's ledger.
	Finished map[string][]byte
	Marks    []Mark
	// Archives are the archives' parts of the batch in flight, and
	// Sources their replay sources' settings (PutArchiveSource).
	Archives []ArchiveRange
	Sources  map[string][]byte
	// Coarse is the coarse counts' state (see RebuildCoarse).
	Coarse Coarse
	// Visitors are the visitor sketches of the lines re-read.
	Visitors map[string]*visitor.Sketch
}

// RebuildWith sets up a buffer rebuilt from the database's progress
// record, before anything else is written to it (see Rebuild).
func (b *Buffer) RebuildWith(r Rebuilt) error {
	acked, cps, counts, inflight, since, c := r.Acked, r.Checkpoints, r.Counts, r.Batch, r.Since, r.Coarse
	if counts != nil && inflight == "" {
		return fmt.Errorf("rebuild: counts without a batch id")
	}
	// The lost buffer's writer number and sequence, before anything is
	// sealed: the rebuilt batch keeps its id, later ones follow it.
	if err := b.adoptIDs(inflight, acked.Batch, c.Snapshot.Batch); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if len(c.Counts) > 0 {
		err := b.update(func(tx *bolt.Tx) error {
			pc := tx.Bucket(bktPending).Bucket(subCoarse)
			for k, n := range c.Counts {
				if err := pc.Put([]byte(k), n.AppendBinary(nil)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
	}
	com := Commit{Counts: CountsOf(counts), Checkpoints: cps, Marks: r.Marks, Visitors: r.Visitors}
	if counts != nil {
		com.Finished, com.Archives = r.Finished, r.Archives
	}
	for name, set := range r.Sources {
		if err := b.PutArchiveSource(name, set); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
	}
	if err := b.CommitWith(com); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if counts != nil {
		batch, err := b.seal(inflight, since, c.MinuteOnly, r.Layout)
		if err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
		if batch == nil || batch.ID != inflight {
			return fmt.Errorf("rebuild: batch %s not sealed (nothing counted?)", inflight)
		}
		if r.Finished == nil { // not known to the lost buffer either
			err := b.update(func(tx *bolt.Tx) error { return putFinishedSet(tx.Bucket(bktSealed), subFinished, nil) })
			if err != nil {
				return fmt.Errorf("rebuild: %w", err)
			}
		}
	}
	if c.Snapshot.Batch != "" {
		err := b.update(func(tx *bolt.Tx) error {
			meta := tx.Bucket(bktMeta)
			if err := putCoarseSnapshot(meta, c.Snapshot); err != nil {
				return err
			}
			if len(c.Snapshot.Archives) > 0 {
				ca, err := meta.CreateBucketIfNotExists(subCoarseArchives)
				if err != nil {
					return err
				}
				if err := mergeRanges(ca, c.Snapshot.Archives); err != nil {
					return err
				}
			}
			return putFinishedSet(meta, subCoarseFinished, c.Snapshot.Finished)
		})
		if err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
	}
	b.countCoarse()
	err := b.update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bktMeta)
		if acked.Batch != "" {
			if meta.Bucket(subSnapshot) != nil {
				if err := meta.DeleteBucket(subSnapshot); err != nil {
					return err
				}
			}
			snap, err := meta.CreateBucket(subSnapshot)
			if err != nil {
				return err
			}
			for _, k := range slices.Sorted(maps.Keys(acked.Checkpoints)) {
				if err := snap.Put([]byte(k), acked.Checkpoints[k]); err != nil {
					return err
				}
			}
			if err := meta.Put(keyAckedID, []byte(acked.Batch)); err != nil {
				return err
			}
			if err := meta.Put(keySealedAt, u64(uint64(acked.SealedAt.UnixNano()))); err != nil {
				return err
			}
		}
		if !since.IsZero() {
			if err := meta.Put(keyLast, u64(uint64(since.UnixNano()))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	return nil
}
