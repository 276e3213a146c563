package buffer

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/logtally/logtally/measure"
)

// The coarse counts: with the flusher's coarse interval, most batches are
// written to the minute buckets only (Seal.MinuteOnly). Acknowledging one
// adds its counts to pending/coarse, in the same transaction, and the next
// full batch (Seal) carries pending/coarse plus its own counts to the
// daily and monthly buckets as sealed/coarse. Each bucket collection is
// still written by one batch at a time with the batch's id as its guard:
// a minute bucket takes every batch's counts once; a daily or monthly
// bucket takes the full batches', each holding every count acknowledged
// at the minute level since the previous full batch. A full batch sealed
// while nothing was waiting has no sealed/coarse: its daily and monthly
// passes read its own counts, as every batch did before coarse batches.
var (
	subCoarse     = []byte("coarse")      // in pending and sealed
	keyMinuteOnly = []byte("minute_only") // in sealed: a minute-only batch
)

// sealCoarse completes a seal (in its transaction): a minute-only batch is
// marked; a full one takes the waiting coarse counts, when there are
// some, with its own counts added.
func sealCoarse(sealed, pending *bolt.Bucket, minuteOnly, waiting bool) error {
	if sealed.Bucket(subCoarse) != nil { // left by a failed ack
		if err := sealed.DeleteBucket(subCoarse); err != nil {
			return err
		}
	}
	if minuteOnly {
		return sealed.Put(keyMinuteOnly, []byte{1})
	}
	if err := sealed.Delete(keyMinuteOnly); err != nil {
		return err
	}
	if !waiting {
		return nil
	}
	if err := pending.MoveBucket(subCoarse, sealed); err != nil {
		return fmt.Errorf("move coarse counts: %w", err)
	}
	if _, err := pending.CreateBucket(subCoarse); err != nil {
		return err
	}
	return addCounts(sealed.Bucket(subCoarse), sealed.Bucket(subCounts))
}

// addCounts adds every count of src to dst.
func addCounts(dst, src *bolt.Bucket) error {
	return src.ForEach(func(k, v []byte) error {
		var n, o measure.Vector
		if err := n.Decode(v); err != nil {
			return fmt.Errorf("a count stored in the buffer: %w", err)
		}
		if old := dst.Get(k); old != nil {
			if err := o.Decode(old); err != nil {
				return fmt.Errorf("a count stored in the buffer: %w", err)
			}
			n.Merge(&o)
		}
		return dst.Put(k, n.AppendBinary(nil))
	})
}

// ackCoarse completes an Ack (in its transaction): a minute-only batch's
// counts now wait for a full batch; a full batch's coarse counts are
// done.
func ackCoarse(tx *bolt.Tx, sealed *bolt.Bucket) error {
	if sealed.Get(keyMinuteOnly) != nil {
		if err := addCounts(tx.Bucket(bktPending).Bucket(subCoarse), sealed.Bucket(subCounts)); err != nil {
			return fmt.Errorf("keep coarse counts: %w", err)
		}
		if err := sealed.DeleteBucket(subCounts); err != nil {
			return err
		}
		return sealed.Delete(keyMinuteOnly)
	}
	if sealed.Bucket(subCoarse) != nil {
		return sealed.DeleteBucket(subCoarse)
	}
	return nil
}

// ScanCoarse is ScanBatch for the daily and monthly passes of a full
// batch: its coarse counts when it has some, else its own counts. A
// minute-only batch has none: an error.
func (t *ReadTx) ScanCoarse(id string, from []byte, fn func(key []byte, v *measure.Vector) bool) error {
	return t.scan(id, true, from, fn)
}

// Coarse returns how many keys and hits wait in the coarse counts for the
// next full batch: acknowledged in the minute buckets, not yet in the
// daily and monthly ones.
func (t *ReadTx) Coarse() (keys int, hits uint64) {
	t.tx.Bucket(bktPending).Bucket(subCoarse).ForEach(func(_, v []byte) error {
		keys++
		hits += views(v)
		return nil
	})
	return keys, hits
}

// countCoarse updates the size of the coarse counts, for Size. The caller
// holds b.wmu.
func (b *Buffer) countCoarse() {
	var n int64
	b.view(func(tx *bolt.Tx) error {
		n = dataBytes(tx.Bucket(bktPending).Bucket(subCoarse))
		if sc := tx.Bucket(bktSealed).Bucket(subCoarse); sc != nil {
			n += dataBytes(sc)
		}
		return nil
	})
	b.mu.Lock()
	b.coarseBytes = n
	b.mu.Unlock()
}
