package buffer

import (
	"fmt"
	"maps"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/visitor"
)

// A buffer rebuilt from the database's progress record (package recovery)
// when the state dir was lost: the last acknowledged batch's snapshot, the
// batch in flight re-read, the coarse counts and the ledger marks of what
// was re-read.

// Coarse is what Rebuild restores of the coarse counts (see
// Seal.MinuteOnly): for a lost buffer that wrote the daily and monthly
// buckets less often than the minute ones, Counts wait in the coarse
// counts (a full batch in flight takes them at once, as its seal did), and
// Snapshot is where the daily and monthly counts end.
type Coarse struct {
	// Snapshot is where the daily and monthly counts end: the last
	// acknowledged full batch's snapshot. Its Finished (nil: not known)
	// become the files finished since, as the AckedFullBatch's snapshot
	// reports them.
	Snapshot Snapshot
	// Counts are the counts acknowledged in the minute buckets only,
	// waiting for a full batch (re-read from Snapshot on).
	Counts map[string]measure.Vector
	// MinuteOnly: the batch in flight was minute-only.
	MinuteOnly bool
}

// Rebuilt is what Rebuild sets up.
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
	// Sources their replay sources' settings (Tx.PutArchiveSource).
	Archives []ArchiveRange
	Sources  map[string][]byte
	// Coarse is the coarse counts' state.
	Coarse Coarse
	// Visitors are the visitor sketches of the lines re-read.
	Visitors map[string]*visitor.Sketch
	// Dims are the counts by dimension of the lines re-read (both
	// windows): a full batch rebuilt carries them, else they wait for
	// the next full one, as Seal does.
	Dims []DimCount
}

// Rebuild sets up a buffer rebuilt from the database's progress record,
// before anything else is written to it: r.Acked becomes the last
// acknowledged batch's snapshot, the stored checkpoints become
// r.Checkpoints, and the last-commit time becomes r.Since (the time the
// rebuilt position was reached, so the tailers read rotated files written
// after it). When r.Counts is not nil, they are sealed at once as batch
// r.Batch (the batch the lost buffer had in flight, rebuilt), whose
// snapshot is r.Checkpoints, sealed at r.Since (the lost batch's own seal
// time). It writes in several transactions: rebuild into a new file, and
// put it in place once Rebuild and Close returned (package recovery does).
func (b *Buffer) Rebuild(r Rebuilt) error {
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
	com := Commit{Counts: CountsOf(counts), Checkpoints: cps, Marks: r.Marks, Visitors: r.Visitors, Dims: r.Dims}
	if counts != nil {
		com.Finished, com.Archives = r.Finished, r.Archives
	}
	err := b.Update(func(tx *Tx) error {
		for name, set := range r.Sources {
			if err := tx.PutArchiveSource(name, set); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if err := b.Commit(com); err != nil {
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
	b.wmu.Lock()
	b.countCoarse()
	b.wmu.Unlock()
	err = b.update(func(tx *bolt.Tx) error {
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
