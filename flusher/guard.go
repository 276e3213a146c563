package flusher

// Which guard a batch carries, and the writer number that makes it short.

import (
	"context"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
)

// Numbers assigns a buffer its writer number (record.Store).
type Numbers interface {
	ClaimNumber(ctx context.Context, bufferID string) (int64, error)
}

// Guard returns the guard of batch id of buffer instance, decided by the
// id alone, so that a batch keeps one form however often it is sent,
// resumed or rebuilt: a numbered id (buffer.BatchID) gets the numbered
// guard, any other (sealed before the buffer had a number) the buffer
// id's.
func Guard(instance, id string) bucket.Guard {
	if n, seq, ok := buffer.ParseBatchID(id); ok {
		return bucket.NumberedGuard(n, seq)
	}
	return bucket.IDGuard(instance, id)
}

// guard is Guard of this flusher's buffer.
func (f *Flusher) guard(id string) bucket.Guard { return Guard(f.buf.InstanceID(), id) }

// number claims the buffer's writer number when it has none and anything
// waits to be sealed (buffer.ReadTx.Sealable): the batch sealed next is
// then numbered. An idle buffer claims nothing, and Flush seals nothing
// new while the buffer has no number (what is committed after this look
// waits for the next round's claim), so a batch is never sealed under
// the buffer id's guard for want of a claim made a moment too early.
func (f *Flusher) number(ctx context.Context) error {
	if f.numbers == nil || f.buf.Number() != 0 {
		return nil
	}
	var sealable bool
	if err := f.buf.View(func(tx *buffer.ReadTx) error { sealable = tx.Sealable(); return nil }); err != nil {
		return err
	}
	if !sealable {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	n, err := f.numbers.ClaimNumber(cctx, f.buf.InstanceID())
	if err != nil {
		return err
	}
	if err := f.buf.Update(func(tx *buffer.Tx) error { return tx.SetNumber(n) }); err != nil {
		return err
	}
	f.log.Info("batches numbered from now on", "writer", n)
	return nil
}
