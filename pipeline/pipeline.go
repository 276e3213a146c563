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
	"github.com/logtally/logtally/ledger"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/record"
	"github.com/logtally/logtally/recovery"
	"github.com/logtally/logtally/salts"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
	"github.com/logtally/logtally/visitor"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// DefaultStatsInterval is how often a running Pipeline logs its totals.
const DefaultStatsInterval = time.Minute

// DefaultShutdownTimeout bounds the final flush when Config.ShutdownTimeout
// is zero.
const DefaultShutdownTimeout = 30 * time.Second

// DefaultCommitInterval is how often counts and checkpoints are committed
// when Config.CommitInterval is zero.
const DefaultCommitInterval = time.Second

// DefaultUnhealthyIntervals and MinDefaultUnhealthyAfter make the
// default of Config.UnhealthyAfter (DefaultUnhealthyAfter): five flush
// intervals, so a round or two lost to a blip is not an outage, and at
// least a minute.
const (
	DefaultUnhealthyIntervals = 5
	MinDefaultUnhealthyAfter  = time.Minute
)

// DefaultUnhealthyAfter is Config.UnhealthyAfter's default for a flush
// interval (zero: flusher.DefaultInterval): DefaultUnhealthyIntervals of
// them, at least MinDefaultUnhealthyAfter. With the default interval,
// 10 s, it is one minute.
func DefaultUnhealthyAfter(flushInterval time.Duration) time.Duration {
	return max(DefaultUnhealthyIntervals*cmp.Or(flushInterval, flusher.DefaultInterval), MinDefaultUnhealthyAfter)
}

// idlePollFactor times the tailers' PollInterval is their
// IdlePollInterval, unless Source.Tailer sets one.
const idlePollFactor = 4

// chunkQueue is the capacity of the channel between the tailers and the
// aggregator, and readSize the tailers' read buffer (tailer.Config.ReadSize,
// unless Source.Tailer sets one): about the most a chunk carries. While a
// tailer catches up it fills the channel and waits, and every chunk the
// aggregator takes wakes it for one read: a thread woken and put to sleep
// again per chunk, the largest cost of the catch-up after parsing (2 cores,
// bench/catchup). Chunks of 1 MiB take a quarter of the wake-ups of 256 KiB
// ones; with 4 queued instead of 16 as much is read ahead (4 MiB), and a
// tailer keeps at most the queue and two more in read buffers (tailer's free
// list: 6 MiB, against 4.5 before).
const (
	chunkQueue = 4
	readSize   = 1 << 20
)

// readSizeFor is the tailers' read size beside a buffer of maxSize bytes
// (buffer.Options.MaxSize): readSize, or a sixteenth of maxSize when that
// is less, at least 64 KiB. Reading pauses once the buffer is full, past
// max_size by one chunk's counts at most (aggregate): beside a small
// buffer chunks are kept small (1 MiB: 64 KiB reads, their counts a few
// percent of it).
func readSizeFor(maxSize int64) int {
	if maxSize <= 0 { // the default (1 GiB), or no limit
		return readSize
	}
	return int(min(readSize, max(64<<10, maxSize/16)))
}

// Source is one log source: the files its globs match, parsed alike.
type Source struct {
	// Name identifies the source's checkpoints across restarts.
	Name string
	// Paths are the file globs.
	Paths []string
	// Parser parses the source's lines.
	Parser parser.Config
	// Tailer holds tailer settings (intervals, sizes); its Source, Paths,
	// Checkpoints, Since, Clock and Logger are set by Open.
	Tailer tailer.Config
}

// Config configures New.
type Config struct {
	// BufferPath is the buffer file, opened (or created) by Open and
	// closed by Close.
	BufferPath string
	// Buffer holds the buffer's options; its Logger is set by Open.
	Buffer buffer.Options
	// Flush configures the flusher. DB is required; Buffer, Clock and
	// Logger are set by Open.
	Flush flusher.Config
	// Dims, when not nil, is every source's parser.Config.Dims (and a
	// replay's): the counts by where traffic comes from.
	Dims *parser.DimsConfig
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
	// UnhealthyAfter is how long Health lets counts wait with nothing
	// written to MongoDB, or reading stay paused on a full buffer, before
	// it fails ([http] unhealthy_after). Default
	// DefaultUnhealthyAfter(Flush.Interval).
	UnhealthyAfter time.Duration
	// Instance names this logtally in its progress record in MongoDB
	// (package record). Empty: no record is kept, and a lost buffer
	// cannot be rebuilt (tests, tools).
	Instance string
	// ProgressCollection holds the records. Default
	// record.DefaultCollection.
	ProgressCollection string
	// LeaseTTL is the progress record's lease time. Default
	// record.DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Visitors, when not nil, counts unique visitors: their salts are kept
	// by a salts.Keeper on Flush.DB, their sketches by the aggregator and
	// the buffer, written by the flusher.
	Visitors *Visitors
	// NoTail makes no tailer: the pipeline counts only what Replay hands
	// it (`logtally replay` with no daemon running), and its commits
	// leave the buffer's last-commit time alone.
	NoTail bool
	// Clock defaults to clock.Real.
	Clock clock.Clock
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// Visitors configures the unique visitors of a Pipeline.
type Visitors struct {
	// Period is the salt period; Grace how long a salt outlives it
	// (salts.Config).
	Period visitor.Period
	Grace  time.Duration
	// Pages counts each page's visitors too.
	Pages bool
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
// checks the config and touches nothing; Open opens the buffer, restores
// the restart state it holds and makes the components; Run runs them once;
// Close stops a Run still under way, waits for it and closes the buffer. A
// Pipeline is not restarted: make a new one. The methods other than Open,
// Run, Reading and Close are for an open Pipeline.
type Pipeline struct {
	cfg     Config
	log     *slog.Logger
	store   *record.Store // nil without Config.Instance
	parsers map[string]*parser.Parser

	// Made by Open.
	buf     *buffer.Buffer
	flush   *flusher.Flusher
	salts   *salts.Keeper // nil: visitors off
	agg     *aggregate.Aggregator
	tailers []*tailer.Tailer
	chunks  chan stream.Chunk
	claims  *ledger.Store      // MongoDB's ledger, for replays
	rec     *recovery.Recorder // nil without Config.Instance
	rebuilt *recovery.Stats

	// readCtx ends when Run stops reading: tailers and replays stop
	// sending chunks.
	readCtx     context.Context
	stopReading context.CancelFunc

	mu     sync.Mutex
	opened bool
	// stopRun stops the Run under way (Close); ran is closed once it has
	// returned. Both nil before Run.
	stopRun context.CancelFunc
	ran     chan struct{}
}

// New checks cfg (sources, their parser settings, the database) and
// returns a Pipeline to Open. It does no I/O. A bad source is an error
// naming it.
func New(cfg Config) (*Pipeline, error) {
	if len(cfg.Sources) == 0 {
		return nil, errors.New("new pipeline: no sources")
	}
	if cfg.Flush.DB == nil {
		return nil, errors.New("new pipeline: no database (Config.Flush.DB)")
	}
	cfg.Clock = cmp.Or[clock.Clock](cfg.Clock, clock.Real{})
	cfg.CommitInterval = cmp.Or(cfg.CommitInterval, DefaultCommitInterval)
	cfg.ShutdownTimeout = cmp.Or(cfg.ShutdownTimeout, DefaultShutdownTimeout)
	cfg.StatsInterval = cmp.Or(cfg.StatsInterval, DefaultStatsInterval)
	if cfg.UnhealthyAfter < 0 {
		return nil, fmt.Errorf("new pipeline: negative UnhealthyAfter %v", cfg.UnhealthyAfter)
	}
	cfg.UnhealthyAfter = cmp.Or(cfg.UnhealthyAfter, DefaultUnhealthyAfter(cfg.Flush.Interval))
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Pipeline{
		cfg:     cfg,
		log:     cfg.Logger.With("component", "pipeline"),
		parsers: map[string]*parser.Parser{},
		chunks:  make(chan stream.Chunk, chunkQueue),
		claims:  ledger.New(cfg.Flush.DB, cfg.Flush.Timeout),
	}
	for _, s := range cfg.Sources {
		if _, dup := p.parsers[s.Name]; dup {
			return nil, fmt.Errorf("source %q: defined twice", s.Name)
		}
		pr, err := parser.New(withDims(s.Parser, cfg.Dims))
		if err != nil {
			return nil, fmt.Errorf("source %q: %w", s.Name, err)
		}
		p.parsers[s.Name] = pr
	}
	if cfg.Instance != "" {
		var err error
		p.store, err = record.NewStore(record.Config{
			DB: cfg.Flush.DB, Collection: cfg.ProgressCollection, Instance: cfg.Instance,
			Holder: record.NewHolder(), Timeout: cfg.Flush.Timeout, LeaseTTL: cfg.LeaseTTL, Clock: cfg.Clock, Logger: cfg.Logger,
		})
		if err != nil {
			return nil, err
		}
	}
	p.readCtx, p.stopReading = context.WithCancel(context.Background())
	return p, nil
}

// startSaltWait bounds how long a start without the current period's salt
// waits for MongoDB before reading: the lines read before it add no
// visitors.
const startSaltWait = 30 * time.Second

// Open opens the buffer, restores the checkpoints it holds and wires a
// tailer per source, the aggregator and the flusher. Call it once, before
// Run; on an error, what it opened is closed again.
//
// With Config.Instance set and no buffer file, Open first asks MongoDB for
// the instance's progress record, waiting (until ctx ends) while MongoDB
// cannot be reached, and rebuilds the buffer from it: see package
// recovery. No record means a genuine first start.
func (p *Pipeline) Open(ctx context.Context) (err error) {
	p.mu.Lock()
	if p.opened {
		p.mu.Unlock()
		return errors.New("open pipeline: opened twice")
	}
	p.opened = true
	p.mu.Unlock()
	defer func() {
		if err != nil {
			p.closeBuffer()
		}
	}()
	cfg, log := p.cfg, p.cfg.Logger
	if err := p.openBuffer(ctx); err != nil {
		return err
	}
	fcfg := cfg.Flush
	fcfg.Buffer, fcfg.Clock, fcfg.Logger = p.buf, cfg.Clock, log
	var vis *aggregate.Visitors
	if v := cfg.Visitors; v != nil {
		fcfg.VisitorPeriod = v.Period
		if p.salts, err = salts.New(salts.Config{DB: cfg.Flush.DB, Buffer: p.buf, Period: v.Period, Grace: v.Grace,
			Timeout: cfg.Flush.Timeout, Clock: cfg.Clock, Logger: log}); err != nil {
			return fmt.Errorf("open pipeline: %w", err)
		}
		if err := p.salts.Load(); err != nil {
			return fmt.Errorf("open pipeline: %w", err)
		}
		// Hold the current period's salt before the first line is read
		// (a line read without it adds no visitor, ever), while MongoDB
		// answers, for startSaltWait at most: a failed round (a lost
		// reply, a late one) is tried again after 0.1, 0.2, 0.4… s. Only the salt counts: a failed expiry of old ones does
		// not hold reading back. MongoDB not reachable at all (no server
		// selected) does not hold it either: lines are keyed from the
		// first round that gets the salt (Run).
		sctx, cancel := context.WithTimeout(ctx, startSaltWait)
		held := func() bool { return p.salts.Holds(cfg.Clock.Now().Unix()) }
		var sel topology.ServerSelectionError
		err := p.salts.Round(sctx)
		for wait := 100 * time.Millisecond; !held() && sctx.Err() == nil && !errors.As(err, &sel); wait = min(2*wait, time.Second) {
			select {
			case <-sctx.Done():
			case <-cfg.Clock.After(wait):
			}
			err = p.salts.Round(sctx)
		}
		if !held() {
			log.Warn("salts not fetched at start: visitors are counted once they are", "err", err)
		}
		cancel()
		vis = &aggregate.Visitors{Salts: p.salts, Period: v.Period, Pages: v.Pages}
	}
	if p.store != nil {
		p.rec = recovery.NewRecorder(p.store, p.buf, cfg.Clock, log, cfg.Flush.User)
		fcfg.Recorder, fcfg.Numbers = p.rec, p.store
	}
	// Before each seal, a barrier on the aggregator's input: what was
	// read before it is committed (p.agg is made below, before Run).
	fcfg.Barrier = p.commitBarrier
	if p.flush, err = flusher.New(fcfg); err != nil {
		return err
	}

	state, err := loadRestart(p.buf, cfg.Sources, p.log)
	if err != nil {
		return fmt.Errorf("open pipeline: %w", err)
	}
	for _, s := range cfg.Sources {
		if cfg.NoTail {
			break
		}
		tc := s.Tailer
		tc.ReadSize = cmp.Or(tc.ReadSize, readSizeFor(cfg.Buffer.MaxSize))
		if tc.IdlePollInterval == 0 {
			// A quiet file is polled a quarter as often (once a
			// second by default): fewer wake-ups at rest.
			tc.IdlePollInterval = idlePollFactor * cmp.Or(tc.PollInterval, tailer.DefaultPollInterval)
		}
		tc.Source, tc.Paths, tc.Checkpoints, tc.Since = s.Name, s.Paths, state.bySource[s.Name], state.since
		tc.Clock, tc.Logger = cfg.Clock, log
		tc.Counted = p.countedLocally(s.Name)
		t, err := tailer.New(tc, p.chunks)
		if err != nil {
			return fmt.Errorf("source %q: %w", s.Name, err)
		}
		p.tailers = append(p.tailers, t)
	}
	p.agg, err = aggregate.New(aggregate.Config{
		Buffer: p.buf, Parsers: p.parsers, HoldUntilStart: !cfg.NoTail, KeepLastCommit: cfg.NoTail,
		CommitInterval: cfg.CommitInterval, Visitors: vis, Clock: cfg.Clock, Logger: log,
	}, p.chunks)
	return err
}

// openBuffer opens the buffer file. With a progress store, a missing file
// is rebuilt from the instance's record first, and a corrupt one is moved
// aside (buffer.db.corrupt-<UTC time>) and rebuilt; without one, a corrupt
// file is an error.
func (p *Pipeline) openBuffer(ctx context.Context) error {
	cfg, log, store := p.cfg, p.cfg.Logger, p.store
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
	bopts.Logger, bopts.Clock = log, cfg.Clock
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
	rc := recovery.Config{BufferPath: p.cfg.BufferPath, Buffer: p.cfg.Buffer, Clock: p.cfg.Clock, Dims: p.cfg.Dims}
	if v := p.cfg.Visitors; v != nil {
		rc.Visitors = &aggregate.Visitors{Salts: salts.NewLookup(p.cfg.Flush.DB, v.Period, p.cfg.Flush.Timeout), Period: v.Period, Pages: v.Pages}
	}
	for _, s := range p.cfg.Sources {
		rc.Sources = append(rc.Sources, recovery.Source{
			Name:   s.Name,
			Files:  tailer.SourceFiles{Paths: s.Paths, Rotated: s.Tailer.Rotated, FollowSymlinks: s.Tailer.FollowSymlinks},
			Parser: withDims(s.Parser, p.cfg.Dims), MaxLineBytes: s.Tailer.MaxLineBytes,
		})
	}
	return rc
}

// Buffer returns the open buffer.
func (p *Pipeline) Buffer() *buffer.Buffer { return p.buf }

// Flusher returns the flusher, for callers that flush outside Run (tests,
// tools).
func (p *Pipeline) Flusher() *flusher.Flusher { return p.flush }

// Close stops a Run still under way (as cancelling its ctx does: final
// commit and drain), waits for it to return and closes the buffer. If ctx
// ends first, Close returns its error and leaves the buffer open to the
// Run that still uses it.
func (p *Pipeline) Close(ctx context.Context) error {
	p.mu.Lock()
	stop, ran := p.stopRun, p.ran
	p.mu.Unlock()
	if stop != nil {
		stop()
		select {
		case <-ran:
		case <-ctx.Done():
			return fmt.Errorf("close pipeline: the run is still stopping: %w", context.Cause(ctx))
		}
	}
	p.stopReading()
	return p.closeBuffer()
}

// closeBuffer closes the buffer, if open.
func (p *Pipeline) closeBuffer() error {
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

// withDims returns pc with d as its Dims (the pipeline's, every source's).
func withDims(pc parser.Config, d *parser.DimsConfig) parser.Config {
	pc.Dims = d
	return pc
}
