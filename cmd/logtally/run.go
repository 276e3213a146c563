package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/tailer"
)

// statsEvery is how often the daemon logs its running totals.
const statsEvery = time.Minute

func cmdRun(args []string, stderr io.Writer) error {
	fs, path := parseFlags("run", stderr)
	level := fs.String("log-level", "info", "log `level`: debug, info, warn or error")
	if err := requireConfig(fs, args, path); err != nil {
		return err
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return usagef("run: -log-level %q: %v", *level, err)
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return usageError{err}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl})).With("instance", cfg.Instance)

	d, err := newDaemon(cfg, log)
	if err != nil {
		return err
	}
	defer d.close()

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	stop := make(chan struct{})
	go func() {
		sig := <-sigs
		log.Info("stopping: reading stopped, flushing what is buffered", "signal", sig.String(), "timeout", cfg.ShutdownTimeout.D())
		close(stop)
		sig = <-sigs
		log.Warn("second signal: exiting at once; the buffer keeps what was not written", "signal", sig.String())
		os.Exit(1)
	}()
	return d.run(stop)
}

// daemon is the wired pipeline: tailers -> aggregator -> buffer <- flusher.
type daemon struct {
	cfg     config.Config
	log     *slog.Logger
	buf     *buffer.Buffer
	flush   *flusher.Flusher
	agg     *pipeline.Aggregator
	tailers []*tailer.Tailer
	chunks  chan tailer.Chunk
	closeDB func()
}

func newDaemon(cfg config.Config, log *slog.Logger) (*daemon, error) {
	d := &daemon{cfg: cfg, log: log, chunks: make(chan tailer.Chunk, 16)}
	buf, err := buffer.Open(cfg.BufferPath(), buffer.Options{
		LockTimeout: 2 * time.Second, MaxSize: int64(cfg.Buffer.MaxSize), Logger: log,
	})
	if err != nil {
		return nil, err
	}
	d.buf = buf
	client, db, err := connect(cfg.Mongo, "logtally")
	if err != nil {
		d.close()
		return nil, err
	}
	d.closeDB = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		client.Disconnect(ctx)
	}
	d.flush, err = flusher.New(flusher.Config{
		Buffer: buf,
		DB:     db,
		Collections: flusher.Collections{
			Minute: cfg.Buckets.Minute, Daily: cfg.Buckets.Daily, Monthly: cfg.Buckets.Monthly,
		},
		Interval:   cfg.Flush.Interval.D(),
		MaxOps:     cfg.Flush.MaxOps,
		MaxBackoff: cfg.Flush.MaxBackoff.D(),
		Timeout:    cfg.Mongo.Timeout.D(),
		Logger:     log,
	})
	if err != nil {
		d.close()
		return nil, err
	}

	stored, err := buf.Checkpoints()
	if err != nil {
		d.close()
		return nil, err
	}
	// Rotated files modified since the last commit that no checkpoint
	// accounts for were written while logtally was down: the tailers read them.
	since, err := buf.LastCommit()
	if err != nil {
		d.close()
		return nil, err
	}
	bySource := map[string][]tailer.Checkpoint{}
	for k, v := range stored {
		var cp tailer.Checkpoint
		if err := cp.UnmarshalBinary(v); err != nil {
			log.Warn("unreadable checkpoint ignored", "key", k, "err", err)
			continue
		}
		bySource[cp.Source] = append(bySource[cp.Source], cp)
	}
	parsers := map[string]*parser.Parser{}
	limiters := map[string]*parser.PageLimiter{}
	for i, s := range cfg.Sources {
		p, err := parser.New(s.Parser())
		if err != nil {
			d.close()
			return nil, usagef("source[%d]: %v", i, err)
		}
		parsers[s.Name] = p
		limiters[s.Name] = parser.NewPageLimiter(s.Page.MaxPagesPerMinute)
		t, err := tailer.New(tailer.Config{
			Source: s.Name, Paths: s.Paths, Checkpoints: bySource[s.Name], Since: since, Logger: log,
		}, d.chunks)
		if err != nil {
			d.close()
			return nil, usagef("source[%d]: %v", i, err)
		}
		delete(bySource, s.Name)
		d.tailers = append(d.tailers, t)
	}
	for name, cps := range bySource {
		log.Warn("checkpoints of a source no longer configured are kept", "source", name, "files", len(cps))
	}
	ready := make(chan struct{})
	go func() {
		for _, t := range d.tailers {
			<-t.Started()
		}
		close(ready)
	}()
	d.agg, err = pipeline.NewAggregator(pipeline.AggregatorConfig{
		Buffer: buf, Parsers: parsers, Limiters: limiters, Ready: ready,
		CommitInterval: cfg.Buffer.CommitInterval.D(), Logger: log,
	}, d.chunks)
	if err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

func (d *daemon) close() {
	if d.closeDB != nil {
		d.closeDB()
	}
	if d.buf != nil {
		if err := d.buf.Close(); err != nil {
			d.log.Error("close buffer", "err", err)
		}
	}
}

// run runs the pipeline until stop is closed or a component fails, then
// stops reading, commits, and drains the buffer to MongoDB within the
// shutdown timeout.
func (d *daemon) run(stop <-chan struct{}) error {
	readCtx, stopReading := context.WithCancel(context.Background())
	defer stopReading()
	flushCtx, stopFlushing := context.WithCancel(context.Background())
	defer stopFlushing()

	fatal := make(chan error, len(d.tailers)+2)
	var tails sync.WaitGroup
	for _, t := range d.tailers {
		tails.Add(1)
		go func() {
			defer tails.Done()
			if err := t.Run(readCtx); err != nil {
				fatal <- fmt.Errorf("tailer: %w", err)
			}
		}()
	}
	go func() { tails.Wait(); close(d.chunks) }()

	aggCtx, stopAggregating := context.WithCancel(context.Background())
	defer stopAggregating()
	aggDone := make(chan error, 1)
	go func() { aggDone <- d.agg.Run(aggCtx) }()

	flushDone := make(chan error, 1)
	go func() { flushDone <- d.flush.Run(flushCtx) }()

	d.log.Info("logtally running", "sources", len(d.tailers), "buffer", d.buf.Path(),
		"mongo", d.cfg.Mongo.Redacted(), "database", d.cfg.Mongo.Database)
	stats := time.NewTicker(statsEvery)
	defer stats.Stop()

	var runErr error
	aggFinished := false
loop:
	for {
		select {
		case <-stop:
			break loop
		case err := <-fatal:
			runErr = err
			break loop
		case err := <-aggDone:
			aggFinished = true
			runErr = fmt.Errorf("aggregator stopped: %w", err)
			break loop
		case err := <-flushDone:
			runErr = fmt.Errorf("flusher stopped: %w", err)
			flushDone = nil
			break loop
		case <-stats.C:
			d.logStats()
		}
	}

	// Stop reading; the aggregator commits what it has parsed and stops
	// (chunks still in the channel are read again from their checkpoints
	// at the next start).
	stopReading()
	stopAggregating()
	if !aggFinished {
		if err := <-aggDone; err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("final commit: %w", err))
		}
	}
	stopFlushing()
	if flushDone != nil {
		<-flushDone
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.ShutdownTimeout.D())
	defer cancel()
	if err := d.flush.Drain(ctx); err != nil {
		keys, hits := d.buf.Pending()
		d.log.Warn("shutdown flush incomplete: the rest stays buffered for the next start",
			"err", err, "pending_keys", keys, "pending_hits", hits)
	}
	d.logStats()
	if runErr != nil {
		return runErr
	}
	d.log.Info("logtally stopped")
	return nil
}

func (d *daemon) logStats() {
	a, f := d.agg.Stats(), d.flush.Stats()
	keys, hits := d.buf.Pending()
	d.log.Info("stats",
		"lines", a.Lines, "hits", a.Hits, "malformed", a.Malformed, "filtered", a.Filtered, "other", a.Other,
		"too_long", a.TooLong, "commits", a.Commits, "by_reason", reasons(a.Outcomes),
		"pending_keys", keys, "pending_hits", hits, "buffer_bytes", d.buf.Size(),
		"batches", f.Batches, "hits_written", f.Hits, "bulk_writes", f.BulkWrites, "updates", f.Updates,
		"finds", f.Finds, "inserts", f.Inserts, "insert_calls", f.InsertCalls, "retries", f.Retries)
}

// reasons formats the non-zero malformed and filtered counters.
func reasons(c parser.Counts) string {
	var b strings.Builder
	for o, n := range c {
		if n == 0 || parser.Outcome(o) == parser.OK {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%d", parser.Outcome(o), n)
	}
	return b.String()
}
