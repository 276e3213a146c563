package buffer

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
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
}

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
	err := b.db.View(func(tx *bolt.Tx) error {
		sealed := tx.Bucket(bktSealed)
		if sealed.Bucket(subCounts) != nil {
			s = readSnapshot(sealed, sealed.Get(keyID))
		}
		return nil
	})
	if err != nil {
		return Snapshot{}, fmt.Errorf("read sealed snapshot: %w", err)
	}
	return s, nil
}

// AckedSnapshot returns the snapshot of the last acknowledged batch: where
// the counts MongoDB has acknowledged end. Batch is empty when no batch
// was acknowledged yet.
func (b *Buffer) AckedSnapshot() (Snapshot, error) {
	var s Snapshot
	err := b.db.View(func(tx *bolt.Tx) error {
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
func (b *Buffer) Rebuild(acked Snapshot, cps map[string][]byte, counts map[string]uint64, inflight string, since time.Time) error {
	if counts != nil && inflight == "" {
		return fmt.Errorf("rebuild: counts without a batch id")
	}
	if err := b.Commit(counts, cps); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if counts != nil {
		batch, err := b.seal(inflight, since, false)
		if err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
		if batch == nil || batch.ID != inflight {
			return fmt.Errorf("rebuild: batch %s not sealed (nothing counted?)", inflight)
		}
	}
	err := b.db.Update(func(tx *bolt.Tx) error {
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
