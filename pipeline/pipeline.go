package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/progress"
	"github.com/logtally/logtally/recovery"
	"github.com/logtally/logtally/tailer"
)

// DefaultStatsInterval is how often a running Pipeline logs its totals.
const DefaultStatsInterval = time.Minute

// DefaultShutdownTimeout bounds the final flush when Config.ShutdownTimeout
// is zero.
const DefaultShutdownTimeout = 30 * time.Second

// DefaultCommitInterval is how often counts and checkpoints are committed
// when Config.CommitInterval is zero.
const DefaultCommitInterval = time.Second

// chunkQueue is the capacity of the channel between the tailers and the
// aggregator.
const chunkQueue = 16

// Source is one log source: the files its globs match, parsed alike.
type Source struct {
	// Name identifies the source's checkpoints across restarts.
	Name string
	// Paths are the file globs.
	Paths []string
	// Parser parses the source's lines.
	Parser parser.Config
	// Tailer holds tailer settings (intervals, sizes); its Source, Paths,
	// Checkpoints, Since, Clock and Logger are set by New.
	Tailer tailer.Config
}

// Config configures New.
type Config struct {
	// BufferPath is the buffer file, opened (or created) by New and
	// closed by Close.
	BufferPath string
	// Buffer holds the buffer's options; its Logger is set by New.
	Buffer buffer.Options
	// Flush configures the flusher. DB is required; Buffer, Clock and
	// Logger are set by New.
	Flush flusher.Config
	// Sources are the sources to follow. At least one.
	Sources []Source
	// CommitInterval is how often counts and checkpoints are committed.
	// Default DefaultCommitInterval.
	CommitInterval time.Duration
	// ShutdownTimeout bounds the final flush when Run stops. Default
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// StatsInterval is how often Run logs the running totals. Default
	// DefaultStatsInterval.
	StatsInterval time.Duration
	// Instance names this logtally in its progress record in MongoDB
	// (package progress). Empty: no record is kept, and a lost buffer
	// cannot be rebuilt (tests, tools).
	Instance string
	// ProgressCollection holds the records. Default
	// progress.DefaultCollection.
	ProgressCollection string
	// LeaseTTL is the progress record's lease time. Default
	// progress.DefaultLeaseTTL.
	LeaseTTL time.Duration
	// NoTail makes no tailer: the pipeline counts only what Replay hands
	// it (`logtally replay` with no daemon running), and its commits
	// leave the buffer's last-commit time alone.
	NoTail bool
	// Clock defaults to clock.Real.
	Clock clock.Clock
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// ErrReload, as the cause of the context given to Run
// (context.WithCancelCause), stops a run for a reload: Run then skips the
// final drain to MongoDB, since the next Pipeline on the same buffer goes on
// writing it.
var ErrReload = errors.New("reload")

// Stats are a Pipeline's running totals and pending counts.
type Stats struct {
	Aggregator aggregate.Stats
	Flusher    flusher.Stats
	// PendingKeys and PendingHits are the counts in the buffer not yet
	// acknowledged by MongoDB, the sealed batch in flight included.
	PendingKeys int
	PendingHits uint64
	// BufferBytes is the buffer's live data size.
	BufferBytes int64
	// Tailers holds each source's tailer counters, by source name.
	Tailers map[string]tailer.Stats
}

// Pipeline is one run of tailers -> aggregator -> buffer <- flusher. New
// restores the restart state from the buffer; Run runs it once; Close
// closes the buffer. A Pipeline is not restarted: make a new one.
type Pipeline struct {
	cfg     Config
	log     *slog.Logger
	buf     *buffer.Buffer
	flush   *flusher.Flusher
	agg     *aggregate.Aggregator
	tailers []*tailer.Tailer
	chunks  chan tailer.Chunk
	rec     *recovery.Recorder // nil without Config.Instance
	rebuilt *recovery.Stats

	// readCtx ends when Run stops reading: tailers and replays stop
	// sending chunks.
	readCtx     context.Context
	stopReading context.CancelFunc
}

// New opens the buffer, restores the checkpoints it holds and wires a
// tailer per source, the aggregator and the flusher. A bad source (parser
// settings, globs) is an error naming it.
//
// With Config.Instance set and no buffer file, New first asks MongoDB for
// the instance's progress record, waiting (until ctx ends) while MongoDB
// cannot be reached, and rebuilds the buffer from it: see package
// progress. No record means a genuine first start.
func New(ctx context.Context, cfg Config) (_ *Pipeline, err error) {
	if len(cfg.Sources) == 0 {
		return nil, errors.New("new pipeline: no sources")
	}
	cfg.Clock = cmp.Or[clock.Clock](cfg.Clock, clock.Real{})
	cfg.CommitInterval = cmp.Or(cfg.CommitInterval, DefaultCommitInterval)
	cfg.ShutdownTimeout = cmp.Or(cfg.ShutdownTimeout, DefaultShutdownTimeout)
	cfg.StatsInterval = cmp.Or(cfg.StatsInterval, DefaultStatsInterval)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Pipeline{
		cfg:    cfg,
		log:    log.With("component", "pipeline"),
		chunks: make(chan tailer.Chunk, chunkQueue),
	}
	p.readCtx, p.stopReading = context.WithCancel(context.Background())
	defer func() {
		if err != nil {
			p.Close()
		}
	}()

	var store *progress.Store
	if cfg.Instance != "" && cfg.Flush.DB != nil {
		store, err = progress.NewStore(progress.Config{
			DB: cfg.Flush.DB, Collection: cfg.ProgressCollection, Instance: cfg.Instance,
			Holder: progress.NewHolder(), Timeout: cfg.Flush.Timeout, LeaseTTL: cfg.LeaseTTL, Clock: cfg.Clock, Logger: log,
		})
		if err != nil {
			return nil, err
		}
	}
	if err := p.openBuffer(ctx, store); err != nil {
		return nil, err
	}
	fcfg := cfg.Flush
	fcfg.Buffer, fcfg.Clock, fcfg.Logger = p.buf, cfg.Clock, log
	if store != nil {
		p.rec = recovery.NewRecorder(store, p.buf, cfg.Clock, log, cfg.Flush.User)
		fcfg.Recorder = p.rec
	}
	if p.flush, err = flusher.New(fcfg); err != nil {
		return nil, err
	}

	names := make([]string, len(cfg.Sources))
	for i, s := range cfg.Sources {
		names[i] = s.Name
	}
	state, err := loadRestart(p.buf, names, log)
	if err != nil {
		return nil, fmt.Errorf("new pipeline: %w", err)
	}
	parsers := map[string]*parser.Parser{}
	limiters := map[string]*parser.PageLimiter{}
	for _, s := range cfg.Sources {
		if _, dup := parsers[s.Name]; dup {
			return nil, fmt.Errorf("source %q: defined twice", s.Name)
		}
		pr, err := parser.New(s.Parser)
		if err != nil {
			return nil, fmt.Errorf("source %q: %w", s.Name, err)
		}
		parsers[s.Name] = pr
		limiters[s.Name] = parser.NewPageLimiter(s.Parser.Page.MaxPagesPerMinute)
		if cfg.NoTail {
			continue
		}
		tc := s.Tailer
		tc.Source, tc.Paths, tc.Checkpoints, tc.Since = s.Name, s.Paths, state.bySource[s.Name], state.since
		tc.Clock, tc.Logger = cfg.Clock, log
		tc.Counted = p.countedLocally(s.Name)
		t, err := tailer.New(tc, p.chunks)
		if err != nil {
			return nil, fmt.Errorf("source %q: %w", s.Name, err)
		}
		p.tailers = append(p.tailers, t)
	}
	p.agg, err = aggregate.New(aggregate.Config{
		Buffer: p.buf, Parsers: parsers, Limiters: limiters, HoldUntilStart: !cfg.NoTail, KeepLastCommit: cfg.NoTail,
		CommitInterval: cfg.CommitInterval, Clock: cfg.Clock, Logger: log,
	}, p.chunks)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// openBuffer opens the buffer file. With a progress store, a missing file
// is rebuilt from the instance's record first, and a corrupt one is moved
// aside (buffer.db.corrupt-<UTC time>) and rebuilt; without one, a corrupt
// file is an error.
func (p *Pipeline) openBuffer(ctx context.Context, store *progress.Store) error {
	cfg, log := p.cfg, p.cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rebuildNow := func() error {
		ok, st, err := recovery.Rebuild(ctx, p.recoveryConfig(), store, log)
		if err != nil {
			return fmt.Errorf("rebuild the buffer from MongoDB's record: %w", err)
		}
		if ok {
			p.rebuilt = &st
		}
		return nil
	}
	if store != nil {
		if _, err := os.Stat(cfg.BufferPath); errors.Is(err, os.ErrNotExist) {
			if err := rebuildNow(); err != nil {
				return err
			}
		}
	}
	bopts := cfg.Buffer
	bopts.Logger = log
	buf, err := buffer.Open(cfg.BufferPath, bopts)
	if errors.Is(err, buffer.ErrCorrupt) {
		if store == nil {
			return fmt.Errorf("%w; the file is left in place. Starting afresh means moving it aside: "+
				"every file the globs match is then read again from its start and its lines counted again", err)
		}
		aside := cfg.BufferPath + ".corrupt-" + cfg.Clock.Now().UTC().Format("20060102T150405Z")
		if rerr := os.Rename(cfg.BufferPath, aside); rerr != nil {
			return fmt.Errorf("%w; moving it aside failed: %w", err, rerr)
		}
		log.Error("buffer file is corrupt: moved aside; the state is rebuilt from this instance's progress record in MongoDB",
			"path", cfg.BufferPath, "moved_to", aside, "err", err)
		if err := rebuildNow(); err != nil {
			return err
		}
		buf, err = buffer.Open(cfg.BufferPath, bopts)
	}
	if err != nil {
		return err
	}
	p.buf = buf
	return nil
}

// recoveryConfig is what a rebuild of the buffer needs of the config.
func (p *Pipeline) recoveryConfig() recovery.Config {
	rc := recovery.Config{BufferPath: p.cfg.BufferPath, Buffer: p.cfg.Buffer, Clock: p.cfg.Clock}
	for _, s := range p.cfg.Sources {
		rc.Sources = append(rc.Sources, recovery.Source{
			Name:   s.Name,
			Files:  tailer.SourceFiles{Paths: s.Paths, Rotated: s.Tailer.Rotated, FollowSymlinks: s.Tailer.FollowSymlinks},
			Parser: s.Parser, MaxLineBytes: s.Tailer.MaxLineBytes,
		})
	}
	return rc
}

// Buffer returns the open buffer.
func (p *Pipeline) Buffer() *buffer.Buffer { return p.buf }

// Flusher returns the flusher, for callers that flush outside Run (tests,
// tools).
func (p *Pipeline) Flusher() *flusher.Flusher { return p.flush }

// Close closes the buffer. Call it after Run has returned.
func (p *Pipeline) Close() error {
	if p.buf == nil {
		return nil
	}
	err := p.buf.Close()
	p.buf = nil
	if err != nil {
		return fmt.Errorf("close buffer: %w", err)
	}
	return nil
}

// Run runs the pipeline until ctx is cancelled or a component fails. Then
// it stops reading, commits what was parsed (chunks still queued are read
// again from their checkpoints at the next start), and drains the buffer to
// MongoDB within Config.ShutdownTimeout; what it cannot write stays in the
// buffer for the next start. It returns nil after a stop by ctx, else the
// component's error. Call it once.
func (p *Pipeline) Run(ctx context.Context) error {
	readCtx, stopReading := p.readCtx, p.stopReading
	defer stopReading()
	aggCtx, stopAggregating := context.WithCancel(context.Background())
	defer stopAggregating()
	flushCtx, stopFlushing := context.WithCancel(context.Background())
	defer stopFlushing()

	fatal := make(chan error, len(p.tailers)+2)
	watchCtx, stopWatching := context.WithCancel(context.Background())
	defer stopWatching()
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		if err := p.watchBuffer(watchCtx, p.cfg.CommitInterval); err != nil {
			fatal <- err
		}
	}()
	recCtx, stopRecording := context.WithCancel(context.Background())
	defer stopRecording()
	recDone := make(chan struct{})
	if p.rec != nil {
		go func() {
			defer close(recDone)
			if err := p.rec.Keep(recCtx); err != nil {
				p.log.Error("stopping: this instance's progress record belongs to another logtally", "err", err)
				fatal <- fmt.Errorf("progress record: %w", err)
			}
		}()
	} else {
		close(recDone)
	}
	var tails sync.WaitGroup
	for _, t := range p.tailers {
		tails.Add(1)
		go func() {
			defer tails.Done()
			if err := t.Run(readCtx); err != nil {
				fatal <- fmt.Errorf("tailer: %w", err)
			}
		}()
	}
	tails.Add(1)
	go func() {
		defer tails.Done()
		p.gateCommits(readCtx)
	}()
	// The channel is never closed: replays send on it too. The
	// aggregator stops by its context, after reading has stopped.

	aggDone := make(chan error, 1)
	go func() { aggDone <- p.agg.Run(aggCtx) }()
	flushDone := make(chan error, 1)
	go func() { flushDone <- p.flush.Run(flushCtx) }()

	p.log.Info("pipeline running", "sources", len(p.tailers), "buffer", p.buf.Path())
	var runErr error
	aggFinished, flushFinished := false, false
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-fatal:
			runErr = err
			break loop
		case err := <-aggDone:
			aggFinished = true
			runErr = fmt.Errorf("aggregator stopped: %w", err)
			break loop
		case err := <-flushDone:
			flushFinished = true
			runErr = fmt.Errorf("flusher stopped: %w", err)
			break loop
		case <-p.cfg.Clock.After(p.cfg.StatsInterval):
			p.logStats()
		}
	}

	stopReading()
	if p.buf.Truncated() != nil {
		// Nothing more is read from or written to the buffer: its
		// final commit fails with buffer.ErrTruncated, the drain and
		// the restore are skipped.
		truncErr := p.buf.Truncated()
		if !errors.Is(runErr, buffer.ErrTruncated) {
			runErr = errors.Join(runErr, truncErr)
		}
		p.log.Error("buffer file truncated while running: stopping without touching it again; "+
			"the restart moves it aside and rebuilds it from MongoDB's record (with no instance, it must be moved aside by hand)",
			"path", p.buf.Path(), "err", truncErr)
	}
	stopAggregating()
	if !aggFinished {
		if err := <-aggDone; err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("final commit: %w", err))
		}
	}
	stopFlushing()
	if !flushFinished {
		<-flushDone
	}
	tails.Wait()
	if p.buf.Truncated() != nil {
		// Neither a drain nor a restore can read it.
	} else if errors.Is(context.Cause(ctx), ErrReload) {
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
	stopWatching()
	<-watchDone
	if errors.Is(runErr, ErrBufferReplaced) && p.buf.Truncated() == nil {
		// After the final commit and drain: the copy holds everything.
		aside, err := p.buf.Restore()
		if err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("restore the buffer file: %w", err))
			p.log.Error("cannot restore the buffer file: the next start rebuilds it from MongoDB's record", "err", err)
		} else {
			p.log.Error("buffer file restored from the open file: restart logtally to resume exactly",
				"path", p.buf.Path(), "moved_aside", aside)
		}
	}
	stopRecording() // marks the last batch acknowledged and releases the lease
	<-recDone
	p.logStats()
	return runErr
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
