package pipeline

// Run: the run's goroutines, in stages that stop in the order the
// exactly-once protocol needs.

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/buffer"
)

// A stage is a group of a run's goroutines that stop together: stop
// cancels their context and waits for them. A goroutine that returns an
// error while its stage runs fails the run (fail); an error returned once
// the stage is stopped (the aggregator's final commit) is stop's.
type stage struct {
	ctx    context.Context
	cancel context.CancelFunc
	fail   func(error)
	g      errgroup.Group
}

// newStage returns a stage whose goroutines run until stop.
func newStage(fail func(error)) *stage {
	ctx, cancel := context.WithCancel(context.Background())
	return &stage{ctx: ctx, cancel: cancel, fail: fail}
}

// Go runs f in the stage.
func (s *stage) Go(f func(context.Context) error) {
	s.g.Go(func() error {
		err := f(s.ctx)
		if err != nil && s.ctx.Err() == nil {
			s.fail(err)
			return nil
		}
		return err
	})
}

// stop cancels the stage's context and waits for its goroutines. It
// returns the first error one returned after the cancel.
func (s *stage) stop() error {
	s.cancel()
	return s.g.Wait()
}

// Run runs the pipeline until ctx is cancelled, Close is called or a
// component fails. Then it stops reading, commits what was parsed (chunks
// still queued are read again from their checkpoints at the next start),
// and drains the buffer to MongoDB within Config.ShutdownTimeout; what it
// cannot write stays in the buffer for the next start. It returns once
// every goroutine it started has returned: nil after a stop by ctx or
// Close, else the component's error. Call it once, after Open.
//
// The components run in stages, stopped in this order:
//
//	reading      the tailers and the commit gate (replays read Reading)
//	aggregating  the aggregator: its final commit
//	flushing     the flusher (and its expirer and preallocator); then
//	             Drain, unless the stop is a reload (ErrReload)
//	watching     the buffer-file watch; then the restore of a deleted
//	             buffer.db
//	leasing      the progress record's lease: marks the last batch
//	             acknowledged and releases it
//
// and Close closes the buffer last.
func (p *Pipeline) Run(ctx context.Context) error {
	stopped, stopRun := context.WithCancel(ctx)
	defer stopRun()
	if err := p.begin(stopRun); err != nil {
		return err
	}
	defer close(p.ran)

	// The first component error stops the run.
	run, failed := context.WithCancel(stopped)
	defer failed()
	var (
		failMu  sync.Mutex
		failErr error
	)
	fail := func(err error) {
		failMu.Lock()
		if failErr == nil {
			failErr = err
		}
		failMu.Unlock()
		failed()
	}
	reading := &stage{ctx: p.readCtx, cancel: p.stopReading, fail: fail}
	aggregating, flushing, watching, leasing := newStage(fail), newStage(fail), newStage(fail), newStage(fail)

	watching.Go(func(ctx context.Context) error { return p.watchBuffer(ctx, p.cfg.CommitInterval) })
	if p.rec != nil {
		leasing.Go(func(ctx context.Context) error {
			if err := p.rec.Keep(ctx); err != nil {
				p.log.Error("stopping: this instance's progress record belongs to another logtally", "err", err)
				return fmt.Errorf("progress record: %w", err)
			}
			return nil
		})
	}
	for _, t := range p.tailers {
		reading.Go(func(ctx context.Context) error {
			if err := t.Run(ctx); err != nil {
				return fmt.Errorf("tailer: %w", err)
			}
			return nil
		})
	}
	reading.Go(func(ctx context.Context) error { p.gateCommits(ctx); return nil })
	// The channel is never closed: replays send on it too. The
	// aggregator stops by its context, after reading has stopped.
	aggregating.Go(func(ctx context.Context) error {
		switch err := p.agg.Run(ctx); {
		case ctx.Err() != nil && err != nil:
			return fmt.Errorf("final commit: %w", err)
		case ctx.Err() != nil:
			return nil
		case err != nil:
			return fmt.Errorf("aggregator stopped: %w", err)
		default:
			return errors.New("aggregator stopped")
		}
	})
	if p.salts != nil {
		flushing.Go(p.salts.Run)
	}
	flushing.Go(func(ctx context.Context) error {
		if err := p.flush.Run(ctx); err != nil {
			return fmt.Errorf("flusher stopped: %w", err)
		}
		return nil
	})

	p.log.Info("pipeline running", "sources", len(p.tailers), "buffer", p.buf.Path())
	for running := true; running; {
		select {
		case <-run.Done():
			running = false
		case <-p.cfg.Clock.After(p.cfg.StatsInterval):
			p.logStats()
		}
	}
	failMu.Lock()
	runErr := failErr
	failMu.Unlock()
	join := func(err error) {
		if err != nil {
			runErr = errors.Join(runErr, err)
		}
	}

	reading.cancel()
	if p.buf.Truncated() != nil {
		// Nothing more is read from or written to the buffer: its
		// final commit fails with buffer.ErrTruncated, the drain and
		// the restore are skipped.
		truncErr := p.buf.Truncated()
		if !errors.Is(runErr, buffer.ErrTruncated) {
			join(truncErr)
		}
		p.log.Error("buffer file truncated while running: stopping without touching it again; "+
			"the restart moves it aside and rebuilds it from MongoDB's record (with no instance, it must be moved aside by hand)",
			"path", p.buf.Path(), "err", truncErr)
	}
	join(aggregating.stop())
	join(flushing.stop())
	join(reading.stop())
	if p.buf.Truncated() != nil {
		// Neither a drain nor a restore can read it.
	} else if errors.Is(context.Cause(stopped), ErrReload) {
		// The next Pipeline on this buffer flushes what is pending.
		p.log.Info("stopped for a reload: what is buffered is written by the reloaded pipeline")
	} else {
		dctx, cancel := context.WithTimeout(context.Background(), p.cfg.ShutdownTimeout)
		defer cancel()
		if err := p.flush.Drain(dctx); err != nil {
			st := p.Stats()
			p.log.Warn("shutdown flush incomplete: the rest stays buffered for the next start",
				"err", err, "pending_keys", st.PendingKeys, "pending_hits", st.PendingHits)
		}
	}
	join(watching.stop())
	if errors.Is(runErr, ErrBufferReplaced) && p.buf.Truncated() == nil {
		// After the final commit and drain: the copy holds everything.
		aside, err := p.buf.Restore()
		if err != nil {
			join(fmt.Errorf("restore the buffer file: %w", err))
			p.log.Error("cannot restore the buffer file: the next start rebuilds it from MongoDB's record", "err", err)
		} else {
			p.log.Error("buffer file restored from the open file: restart logtally to resume exactly",
				"path", p.buf.Path(), "moved_aside", aside)
		}
	}
	join(leasing.stop()) // marks the last batch acknowledged and releases the lease
	p.logStats()
	return runErr
}

// begin checks that Run may start (the Pipeline is open and has not run)
// and lets Close stop it.
func (p *Pipeline) begin(stop context.CancelFunc) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.opened || p.buf == nil:
		return errors.New("run pipeline: not open")
	case p.ran != nil:
		return errors.New("run pipeline: Run called twice")
	}
	p.stopRun, p.ran = stop, make(chan struct{})
	return nil
}

// gateCommits sends StartMarker once every tailer has sent its start
// chunks. The aggregator commits nothing before it reads the marker, and
// channel order puts every start chunk before it, so the buffer's
// last-commit time (the next start's Since) never moves past a file whose
// checkpoint is not committed yet.
func (p *Pipeline) gateCommits(ctx context.Context) {
	for _, t := range p.tailers {
		select {
		case <-t.Started():
		case <-ctx.Done():
			return
		}
	}
	select {
	case p.chunks <- aggregate.StartMarker():
	case <-ctx.Done():
	}
}

// commitBarrier is the flusher's Barrier, before each seal: it puts a
// barrier (aggregate.Barrier) on the aggregator's input, behind every
// chunk sent so far, and waits until the aggregator has committed them,
// so that the batch sealed next holds every line read before it. It waits
// CommitInterval at most, as long as a commit tick: while the aggregator
// reads nothing (the buffer full, which only the flusher's seals relieve,
// or the state dir full) the seal goes on without it; what was not
// committed yet goes into the next batch. It returns at once when the
// aggregator has stopped (Run's staged stop: its final commit is made)
// or ctx ends. A barrier left on the channel holds nothing: the
// aggregator answers it when it reads it, or drops it with the channel.
func (p *Pipeline) commitBarrier(ctx context.Context) error {
	c, done := aggregate.Barrier()
	timeout := p.cfg.Clock.After(p.cfg.CommitInterval)
	select {
	case p.chunks <- c:
	case <-p.agg.Stopped():
		return errAggregatorStopped
	case <-timeout:
		return errBarrierWait
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-done:
		return err
	case <-p.agg.Stopped():
		return errAggregatorStopped
	case <-timeout:
		return errBarrierWait
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The reasons commitBarrier gives for a seal without the lines read last.
var (
	errAggregatorStopped = errors.New("the aggregator has stopped (its final commit is made)")
	errBarrierWait       = errors.New("the aggregator committed nothing within a commit interval (the buffer or the state dir full, or a long queue)")
)
