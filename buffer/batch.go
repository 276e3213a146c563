package buffer

import (
	"bytes"
	"fmt"
	"time"

	"github.com/logtally/logtally/measure"
	bolt "go.etcd.io/bbolt"
)

// Sealed returns the batch in flight, or nil.
func (t *ReadTx) Sealed() *Batch { return readBatch(t.tx.Bucket(bktSealed)) }

func readBatch(sealed *bolt.Bucket) *Batch {
	if sealed.Bucket(subCounts) == nil {
		return nil
	}
	return &Batch{
		ID:         string(sealed.Get(keyID)),
		Keys:       int(getU64(sealed.Get(keyKeys))),
		Hits:       getU64(sealed.Get(keyHits)),
		Progress:   bytes.Clone(sealed.Get(keyProgress)),
		MinuteOnly: sealed.Get(keyMinuteOnly) != nil,
		Layout:     readLayout(sealed),
	}
}

// Seal is the kind of batch Buffer.Seal seals.
type Seal struct {
	// MinuteOnly seals a batch written to the minute buckets only: its
	// counts, once acknowledged, are added to the coarse counts, which
	// the next full batch (MinuteOnly false) carries, with its own, to
	// the daily and monthly buckets (ScanCoarse).
	MinuteOnly bool
}

// Seal returns the batch in flight if there is one, as it was sealed.
// Otherwise it moves all pending counts into a new batch of kind s with a
// fresh id (the next numbered one once the buffer has a writer number,
// else random), in one transaction, and returns it. It returns nil when
// nothing is to be sealed: no pending counts or marks, nor, for a full
// batch, coarse counts waiting.
func (b *Buffer) Seal(s Seal) (*Batch, error) {
	return b.seal("", b.files.Now(), s.MinuteOnly, sealLayout)
}

// Sealable reports whether a full Seal would return a batch: one in
// flight, or pending counts, marks or coarse counts to seal.
func (t *ReadTx) Sealable() bool { return t.sealable(false) }

// sealable is Sealable for a batch of the kind minuteOnly says (a
// minute-only batch does not take the coarse counts).
func (t *ReadTx) sealable(minuteOnly bool) bool {
	pending := t.tx.Bucket(bktPending)
	return readBatch(t.tx.Bucket(bktSealed)) != nil || getU64(pending.Get(keyKeys)) != 0 ||
		!empty(pending.Bucket(subMarks)) || !minuteOnly && !empty(pending.Bucket(subCoarse))
}

// seal is Seal with the new batch's id (empty: the next one; a numbered
// id given is adopted, adoptBatchIDs), seal time, kind and layout given.
// The seal time is the wall clock's, not b.clock's: a rebuild from the
// progress record makes it the last-commit time, compared with file
// modification times (tailer.Config.Since).
func (b *Buffer) seal(id string, at time.Time, minuteOnly bool, layout Layout) (*Batch, error) {
	var batch *Batch
	var sealedNow bool
	var number int64
	// Nothing to seal is the common answer of an idle daemon: found in a
	// read transaction, without a write (and its fsync).
	idle := false
	b.view(func(tx *bolt.Tx) error {
		idle = !(&ReadTx{tx: tx}).sealable(minuteOnly)
		return nil
	})
	if idle {
		return nil, nil
	}
	b.wmu.Lock()
	defer b.wmu.Unlock()
	err := b.write(func(tx *bolt.Tx) error {
		sealedNow = false
		sealed := tx.Bucket(bktSealed)
		if batch = readBatch(sealed); batch != nil {
			return nil
		}
		pending := tx.Bucket(bktPending)
		keys, hits := getU64(pending.Get(keyKeys)), getU64(pending.Get(keyHits))
		coarse := !empty(pending.Bucket(subCoarse))
		if keys == 0 && empty(pending.Bucket(subMarks)) && (minuteOnly || !coarse) {
			return nil
		}
		if err := pending.MoveBucket(subCounts, sealed); err != nil {
			return fmt.Errorf("move pending counts: %w", err)
		}
		if _, err := pending.CreateBucket(subCounts); err != nil {
			return err
		}
		if sealed.Bucket(subMarks) != nil { // left by a failed ack
			if err := sealed.DeleteBucket(subMarks); err != nil {
				return err
			}
		}
		if err := pending.MoveBucket(subMarks, sealed); err != nil {
			return fmt.Errorf("move pending marks: %w", err)
		}
		if _, err := pending.CreateBucket(subMarks); err != nil {
			return err
		}
		if err := sealCoarse(sealed, pending, minuteOnly, coarse); err != nil {
			return err
		}
		if err := sealDims(sealed, pending, minuteOnly); err != nil {
			return err
		}
		if err := sealFinished(sealed, pending); err != nil {
			return fmt.Errorf("move finished files: %w", err)
		}
		if err := sealArchives(sealed, pending); err != nil {
			return fmt.Errorf("move archive ranges: %w", err)
		}
		if now := b.clock.Now(); now.Sub(b.pruned) >= ledgerPruneEvery {
			n, err := pruneLedger(tx, now.Add(-b.keep))
			if err != nil {
				return fmt.Errorf("prune ledger: %w", err)
			}
			if n > 0 {
				b.log.Info("ledger entries expired", "count", n, "retention", b.keep)
			}
			b.pruned = now
		}
		batchID := id
		if batchID == "" {
			var err error
			if batchID, err = nextBatchID(tx.Bucket(bktMeta)); err != nil {
				return err
			}
		} else if err := adoptBatchIDs(tx.Bucket(bktMeta), id); err != nil {
			return err
		}
		batch = &Batch{ID: batchID, Keys: int(keys), Hits: hits, MinuteOnly: minuteOnly, Layout: layout}
		if err := putLayout(sealed, layout); err != nil {
			return err
		}
		number = int64(getU64(tx.Bucket(bktMeta).Get(keyNumber)))
		if err := snapshotCheckpoints(tx, sealed, at); err != nil {
			return err
		}
		for k, v := range map[string][]byte{
			string(keyID): []byte(batch.ID), string(keyKeys): u64(keys), string(keyHits): u64(hits),
		} {
			if err := sealed.Put([]byte(k), v); err != nil {
				return err
			}
		}
		if err := sealed.Delete(keyProgress); err != nil {
			return err
		}
		if err := pending.Put(keyKeys, u64(0)); err != nil {
			return err
		}
		sealedNow = true
		return pending.Put(keyHits, u64(0))
	})
	if err != nil {
		return nil, fmt.Errorf("seal batch: %w", err)
	}
	if sealedNow {
		b.number.Store(number)
		b.mu.Lock()
		b.sealedBytes, b.pendingBytes = b.pendingBytes, 0
		b.pendingKeys, b.pendingHits = 0, 0
		b.mu.Unlock()
		b.countCoarse()
	}
	return batch, nil
}

// ScanBatch calls fn for the counts of batch id in key order, starting at
// the first key >= from (nil: the first key), until fn returns false. key
// and v are valid only inside fn. An id not in flight is ErrNoBatch.
func (t *ReadTx) ScanBatch(id string, from []byte, fn func(key []byte, v *measure.Vector) bool) error {
	return t.scan(id, false, from, fn)
}

// scan is ScanBatch (coarse false) and ScanCoarse.
func (t *ReadTx) scan(id string, coarse bool, from []byte, fn func(key []byte, v *measure.Vector) bool) error {
	err := func() error {
		sealed := t.tx.Bucket(bktSealed)
		sc := sealed.Bucket(subCounts)
		if sc == nil || string(sealed.Get(keyID)) != id {
			return fmt.Errorf("%w: %s", ErrNoBatch, id)
		}
		if coarse {
			if sealed.Get(keyMinuteOnly) != nil {
				return fmt.Errorf("batch %s is for the minute buckets only", id)
			}
			if co := sealed.Bucket(subCoarse); co != nil {
				sc = co
			}
		}
		c := sc.Cursor()
		var k, v []byte
		if from == nil {
			k, v = c.First()
		} else {
			k, v = c.Seek(from)
		}
		var vec measure.Vector
		for ; k != nil; k, v = c.Next() {
			if err := vec.Decode(v); err != nil {
				return fmt.Errorf("a count stored in the buffer: %w", err)
			}
			if !fn(k, &vec) {
				return nil
			}
		}
		return nil
	}()
	if err != nil {
		return fmt.Errorf("scan batch: %w", err)
	}
	return nil
}

// SaveProgress stores the flusher's resume point for batch id.
func (b *Buffer) SaveProgress(id string, progress []byte) error {
	err := b.update(func(tx *bolt.Tx) error {
		sealed := tx.Bucket(bktSealed)
		if sealed.Bucket(subCounts) == nil || string(sealed.Get(keyID)) != id {
			return fmt.Errorf("%w: %s", ErrNoBatch, id)
		}
		return sealed.Put(keyProgress, bytes.Clone(progress))
	})
	if err != nil {
		return fmt.Errorf("save batch progress: %w", err)
	}
	return nil
}

// Ack deletes batch id after MongoDB acknowledged all of it.
func (b *Buffer) Ack(id string) error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	err := b.write(func(tx *bolt.Tx) error {
		sealed := tx.Bucket(bktSealed)
		if sealed.Bucket(subCounts) == nil || string(sealed.Get(keyID)) != id {
			return fmt.Errorf("%w: %s", ErrNoBatch, id)
		}
		if sealed.Get(keyMinuteOnly) == nil { // else ackCoarse keeps them
			if err := sealed.DeleteBucket(subCounts); err != nil {
				return err
			}
		}
		if err := ackSnapshot(tx, sealed); err != nil {
			return err
		}
		if err := ackFinished(tx, sealed); err != nil {
			return err
		}
		if err := ackArchives(tx, sealed); err != nil {
			return err
		}
		if err := ackMarks(tx, sealed); err != nil {
			return err
		}
		if err := ackCoarse(tx, sealed); err != nil {
			return err
		}
		if err := ackDims(sealed); err != nil {
			return err
		}
		for _, k := range [][]byte{keyID, keyKeys, keyHits, keyProgress, keyLayout} {
			if err := sealed.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ack batch: %w", err)
	}
	b.mu.Lock()
	b.sealedBytes = 0
	b.mu.Unlock()
	b.countCoarse()
	return nil
}

// empty reports whether b holds no key, without walking it (Stats does).
func empty(b *bolt.Bucket) bool {
	k, _ := b.Cursor().First()
	return k == nil
}
