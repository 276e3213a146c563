package flusher

// One flush: seal (full or minute-only), record, write, acknowledge.

import (
	"context"
	"fmt"

	"github.com/logtally/logtally/buffer"
)

// seal seals a full batch, or with a coarse interval a minute-only one
// until the interval has passed since the last full one (the first batch
// of a run, and every batch while draining, are full).
func (f *Flusher) seal() (*buffer.Batch, error) {
	now := f.clock.Now()
	if f.cadence.minuteOnly(now) {
		return f.buf.Seal(buffer.Seal{MinuteOnly: true})
	}
	batch, err := f.buf.Seal(buffer.Seal{})
	if err == nil && batch != nil && !batch.MinuteOnly {
		f.cadence.lastFull = now
	}
	return batch, err
}

// Kick makes Run flush now rather than at the end of its interval (a
// replay that has read everything and waits for its acknowledgement). It
// never blocks; kicks while a flush runs make one more.
func (f *Flusher) Kick() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// Flush runs one round: it seals the pending counts (or takes the batch
// already in flight), writes the batch chunk by chunk, resuming after the
// last chunk written, and acknowledges it. sent reports whether there was
// a batch. On error the batch and its progress stay in the buffer.
func (f *Flusher) Flush(ctx context.Context) (sent bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer func() {
		if ctx.Err() == nil { // not a stop
			f.prog.attempt(f.clock.Now(), err)
		}
	}()
	if err := f.number(ctx); err != nil {
		return false, fmt.Errorf("flush: writer number: %w", err)
	}
	if f.numbers != nil && f.buf.Number() == 0 {
		// Nothing was to be sealed when number looked: counts committed
		// since wait for the next round, which claims the number first.
		f.prog.made(f.clock.Now())
		return false, nil
	}
	batch, err := f.seal()
	if err != nil {
		return false, fmt.Errorf("flush: %w", err)
	}
	if batch == nil {
		f.prog.made(f.clock.Now()) // nothing left to write
		return false, nil
	}
	start := f.clock.Now()
	defer func() {
		if err != nil {
			f.stats.timing.failed.Add(1)
		}
	}()
	if f.recorder != nil {
		if err := f.record(ctx); err != nil {
			return true, fmt.Errorf("flush batch %s: %w", batch.ID, err)
		}
	}
	if err := f.writeBatch(ctx, batch); err != nil {
		return true, fmt.Errorf("flush batch %s: %w", batch.ID, err)
	}
	if err := f.writeVisitors(ctx); err != nil {
		return true, fmt.Errorf("flush batch %s: visitors: %w", batch.ID, err)
	}
	if err := f.writeMarks(ctx, batch); err != nil {
		return true, fmt.Errorf("flush batch %s: %w", batch.ID, err)
	}
	if err := f.buf.Ack(batch.ID); err != nil {
		return true, fmt.Errorf("flush batch %s: %w", batch.ID, err)
	}
	f.stats.batches.Add(1)
	f.stats.hits.Add(batch.Hits)
	now := f.clock.Now()
	f.stats.timing.done(now.Sub(start), now)
	f.prog.made(now)
	f.log.Debug("batch written", "batch", batch.ID, "keys", batch.Keys, "hits", batch.Hits,
		"took", f.clock.Now().Sub(start))
	return true, nil
}

// record hands the recorder the snapshots of the batch in flight and of
// the last acknowledged one.
func (f *Flusher) record(ctx context.Context) error {
	var sealed, acked buffer.Snapshot
	err := f.buf.View(func(tx *buffer.ReadTx) error {
		sealed, acked = tx.Snapshot(buffer.SealedBatch), tx.Snapshot(buffer.AckedBatch)
		return nil
	})
	if err != nil {
		return err
	}
	if err := f.recorder.Begin(ctx, sealed, acked); err != nil {
		return fmt.Errorf("record batch: %w", err)
	}
	return nil
}
