package flusher

// Run and Drain: the flush loop, its retries with backoff, and the
// components beside it (the expirer, the preallocator).

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/logtally/logtally/buffer"
)

// Run starts the expirer (which ensures the indexes, retrying) and the
// preallocator beside it, then every Interval (from the start of one round
// to the next) seals the pending counts and writes them, retrying failures
// with exponential backoff and full jitter capped at MaxBackoff. A batch
// left over from before (a failed or crashed write) is finished first,
// then the counts pending at that moment are sent. Run returns nil when ctx is cancelled; whatever is
// not yet written stays in the buffer. It returns once they have returned.
func (f *Flusher) Run(ctx context.Context) error {
	f.heartbeat()
	f.prog.made(f.clock.Now()) // a start, for Progress: nothing written yet
	// Beside the flushes, the expirer ensures the indexes and expires
	// old buckets, and the preallocator creates the next period's.
	var side sync.WaitGroup
	defer side.Wait()
	side.Go(func() { f.maint.expirer.Run(ctx) })
	if f.maint.prealloc != nil {
		side.Go(func() { f.maint.prealloc.Run(ctx) })
	}
	// Rounds begin an Interval apart: the time a round takes to write its
	// batch does not delay the next seal, so a hit waits at most about
	// one interval to be sealed, whatever the database's speed. A round
	// that took longer than the interval is followed by the next at once.
	next := f.clock.Now().Add(f.interval)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-f.clock.After(next.Sub(f.clock.Now())):
		case <-f.kick:
		}
		f.heartbeat()
		next = f.clock.Now().Add(f.interval)
		if !f.retry(ctx, "flush", f.tick) {
			return nil
		}
	}
}

// tick writes the batch in flight, if any, and then one freshly sealed
// batch of everything pending.
func (f *Flusher) tick(ctx context.Context) error {
	for {
		var leftover *buffer.Batch
		err := f.buf.View(func(tx *buffer.ReadTx) error {
			leftover = tx.Sealed()
			return nil
		})
		if err != nil {
			return fmt.Errorf("flush: %w", err)
		}
		if leftover == nil && f.barrier != nil { // Flush seals next
			if err := f.barrier(ctx); err != nil && ctx.Err() == nil {
				f.log.Debug("sealing without the lines read last: they go into the next batch", "err", err)
			}
		}
		sent, err := f.Flush(ctx)
		if err != nil || !sent || leftover == nil {
			return err
		}
	}
}

// Drain is for shutdown: it writes batches (retrying with backoff) until
// no batch is in flight and nothing is pending, or ctx is done, in which
// case it returns ctx's error and the buffer keeps everything not written.
// Do not call it while Run is running.
func (f *Flusher) Drain(ctx context.Context) error {
	f.mu.Lock()
	f.cadence.draining = true
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.cadence.draining = false
		f.mu.Unlock()
	}()
	more := true
	ok := f.retry(ctx, "drain", func(ctx context.Context) error {
		for more {
			sent, err := f.Flush(ctx)
			if err != nil {
				return err
			}
			more = sent
		}
		return nil
	})
	if !ok {
		return ctx.Err()
	}
	return nil
}

// retry calls fn until it succeeds (true) or ctx is done (false), waiting
// a full-jitter exponential backoff between attempts.
func (f *Flusher) retry(ctx context.Context, what string, fn func(context.Context) error) bool {
	// MongoDB refusing the credentials is logged at ERROR, rate-limited
	// (autherr.go); other failures at WARN.
	var refused authReport
	for attempt := 1; ; attempt++ {
		f.heartbeat()
		err := fn(ctx)
		if err == nil {
			refused.succeeded(f.log, what)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		f.stats.retries.Add(1)
		if authFailure(err) {
			refused.failed(f.log, f.clock.Now(), what, attempt, err, f.user)
		} else {
			f.log.Warn(what+" failed", "attempt", attempt, "err", err)
		}
		select {
		case <-ctx.Done():
			return false
		case <-f.clock.After(rand.N(backoffCeiling(attempt, f.maxBackoff) + 1)):
		}
	}
}

// backoffCeiling is the longest wait after the attempt-th failure in a
// row: baseBackoff doubled per failure, at most maxBackoff.
func backoffCeiling(attempt int, maxBackoff time.Duration) time.Duration {
	if attempt < 32 && baseBackoff<<(attempt-1) < maxBackoff {
		return baseBackoff << (attempt - 1)
	}
	return maxBackoff
}
