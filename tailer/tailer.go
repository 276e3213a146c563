package tailer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/stream"
)

// The values New gives zero Config fields.
const (
	// DefaultPollInterval is how often an idle file is checked for
	// growth, rotation and truncation.
	DefaultPollInterval = 250 * time.Millisecond
	// DefaultRescanInterval is how often the globs are expanded again to
	// find new files.
	DefaultRescanInterval = 5 * time.Second
	// DefaultRotateGrace is how long a rotated-away file is kept open and
	// read after it stopped growing; keep it above the time the writer
	// takes to reopen its logs, and above one second (see the package doc).
	DefaultRotateGrace = 10 * time.Second
	// DefaultMaxLineBytes is the longest line handed on; longer lines are
	// skipped whole and counted in skip chunks.
	DefaultMaxLineBytes = 1 << 20
	// DefaultReadSize is the size of a read buffer, and so about the most
	// a Chunk carries.
	DefaultReadSize = 256 << 10
)

// Config configures a Tailer. Zero durations and sizes take the defaults.
type Config struct {
	Source string   // source name (stable across restarts), goes into checkpoints
	Paths  []string // globs (filepath.Glob syntax)
	// Rotated are globs naming where the files' rotated generations go
	// (logrotate's olddir, for example /var/log/nginx/old/access.log*).
	// They are searched, instead of the names beside each file (P.* and
	// P-*), for a renamed file at start and for the copy a copytruncate
	// leaves; compressed names are left out. Empty: the names beside each
	// file. They must name only this source's files.
	Rotated []string
	// FollowSymlinks reads files through symbolic links whose target lies
	// outside the directories of Paths and Rotated. Off, such a link is
	// not read (logged at WARN once per path and counted in Stats): who
	// can create a file in a log directory could otherwise make the
	// daemon read any file it can.
	FollowSymlinks bool
	Checkpoints    []stream.Checkpoint // restored state for this source (from the buffer)
	PollInterval   time.Duration       // default DefaultPollInterval: how often an idle file is checked for growth/rotation/truncation
	RescanInterval time.Duration       // default DefaultRescanInterval: how often globs are re-expanded
	// IdlePollInterval, when above PollInterval, is how often a file that
	// has not grown for IdlePollInterval is polled: a quiet log wakes the
	// daemon less often, and its next line is seen within
	// IdlePollInterval; a file that grows is polled every PollInterval
	// again. Zero: every file is polled every PollInterval.
	IdlePollInterval time.Duration
	// RotateGrace (default DefaultRotateGrace) is how long a rotated-away
	// file (its path now names another inode, or nothing) is kept open and
	// read after it stopped growing: nginx keeps writing the renamed file
	// until it reopens.
	RotateGrace  time.Duration
	MaxLineBytes int         // default DefaultMaxLineBytes; longer lines are skipped whole and counted in Chunk.Skipped
	ReadSize     int         // default DefaultReadSize: read buffer; a Chunk carries at most about this much
	Clock        clock.Clock // default clock.Real{}
	Logger       *slog.Logger
	// Since is the wall-clock time of the last commit of the previous run
	// (buffer.LastCommit), zero on the very first start. When it is set,
	// the rotated files written while the daemon was down that no
	// checkpoint accounts for are read from 0 at start; see the package
	// doc. Zero: rotated files without a checkpoint are history, not read.
	Since time.Time
	// MaxOpenFiles (default DefaultMaxOpenFiles) is the most files the
	// Tailer keeps open, each with a goroutine reading it; past it, quiet
	// files are closed and polled by path, and opened again by identity
	// once they change (see park.go).
	MaxOpenFiles int
	// Counted, when not nil, is asked about every file that is to be read
	// from 0 for want of a checkpoint, or resumed from one, with the
	// file's first bytes (up to FingerprintSize): it returns where streams
	// beginning with those bytes are counted (the ledger, fed by replays
	// and earlier runs). Reading starts at the furthest of them that is
	// this file's (see Position). It must be cheap: it runs in the
	// tailer's goroutines.
	Counted func(head []byte) []Position
}

// Position is where a ledger entry says a stream is counted: Offset, and
// the tail check there (see Checkpoint.TailLen). A file is counted to
// Offset only if its bytes that end there hash to TailSum: streams that
// begin with the same bytes (a fixed banner, the same first requests)
// share their first bytes, not those. An entry of an older logtally has
// no tail check (TailLen 0): it is taken where Offset is a line end of the
// file.
type Position struct {
	Offset  int64
	TailLen int
	TailSum uint64
}

// Tailer follows the files one source's globs match and sends their lines
// as Chunks. Create it with New and start it with Run. It wires its parts
// (see the package doc) and owns their goroutines.
type Tailer struct {
	cfg       Config
	log       *logger
	clk       clock.Clock
	stats     tailerStats
	rescanNow chan struct{}  // the prospector asks for a rescan now
	started   chan struct{}  // closed when the start chunks have been sent
	wg        sync.WaitGroup // the followers' goroutines: Run waits for them

	mu      sync.Mutex
	running bool

	// Its parts (wire).
	reg   *registry   // the claimed files (registry.go)
	disc  *discovery  // finds the source's files (discovery.go, scan.go, symlink.go)
	slots *slots      // the open files within MaxOpenFiles (park.go)
	pros  *prospector // decides what becomes of the files (prospector.go)
	rest  *restorer   // matches the restored checkpoints at start (restore.go)
}

// New validates cfg and returns a Tailer that will send to out. A bad glob
// pattern, a missing source name or path, a negative setting, or a restored
// checkpoint of another source (or a duplicate) is an error.
func New(cfg Config, out chan<- stream.Chunk) (*Tailer, error) {
	if out == nil {
		return nil, errors.New("new tailer: nil output channel")
	}
	if cfg.Source == "" {
		return nil, errors.New("new tailer: empty source name")
	}
	if len(cfg.Paths) == 0 {
		return nil, fmt.Errorf("new tailer %q: no paths", cfg.Source)
	}
	if err := checkGlobs(cfg.Paths); err != nil {
		return nil, fmt.Errorf("new tailer %q: %w", cfg.Source, err)
	}
	if err := checkGlobs(cfg.Rotated); err != nil {
		return nil, fmt.Errorf("new tailer %q: rotated: %w", cfg.Source, err)
	}
	if cfg.PollInterval < 0 || cfg.IdlePollInterval < 0 || cfg.RescanInterval < 0 || cfg.RotateGrace < 0 || cfg.MaxLineBytes < 0 || cfg.ReadSize < 0 || cfg.MaxOpenFiles < 0 {
		return nil, fmt.Errorf("new tailer %q: negative interval or size", cfg.Source)
	}
	cfg.Paths = slices.Clone(cfg.Paths)
	cfg.Rotated = slices.Clone(cfg.Rotated)
	cfg.Checkpoints = slices.Clone(cfg.Checkpoints)
	seen := make(map[stream.FileID]bool, len(cfg.Checkpoints))
	for _, cp := range cfg.Checkpoints {
		if cp.Source != cfg.Source {
			return nil, fmt.Errorf("new tailer %q: checkpoint of source %q", cfg.Source, cp.Source)
		}
		if seen[cp.File] {
			return nil, fmt.Errorf("new tailer %q: duplicate checkpoint for file %d:%d", cfg.Source, cp.File.Dev, cp.File.Ino)
		}
		if cp.Offset < 0 || cp.FPLen < 0 || cp.FPLen > stream.FingerprintSize {
			return nil, fmt.Errorf("new tailer %q: checkpoint %d:%d out of range", cfg.Source, cp.File.Dev, cp.File.Ino)
		}
		seen[cp.File] = true
	}
	cfg.PollInterval = cmp.Or(cfg.PollInterval, DefaultPollInterval)
	cfg.RescanInterval = cmp.Or(cfg.RescanInterval, DefaultRescanInterval)
	cfg.RotateGrace = cmp.Or(cfg.RotateGrace, DefaultRotateGrace)
	cfg.MaxLineBytes = cmp.Or(cfg.MaxLineBytes, DefaultMaxLineBytes)
	cfg.ReadSize = cmp.Or(cfg.ReadSize, DefaultReadSize)
	cfg.MaxOpenFiles = cmp.Or(cfg.MaxOpenFiles, DefaultMaxOpenFiles)
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &Tailer{
		cfg:       cfg,
		log:       newLogger(log.With("component", "tailer", "source", cfg.Source), cfg.Clock),
		clk:       cfg.Clock,
		rescanNow: make(chan struct{}, 1),
		started:   make(chan struct{}),
	}
	t.wire(&output{ch: out, bufs: newFreeList(cfg.ReadSize, cap(out))})
	return t, nil
}

// wire makes the Tailer's parts, which share its Config, log, counters
// and output: the registry of the claimed files, discovery, the slots of
// the open files, the prospector and the restorer.
func (t *Tailer) wire(out *output) {
	cfg := &t.cfg
	t.reg = newRegistry()
	t.disc = newDiscovery(cfg, t.log, &t.stats, t.reg)
	t.slots = newSlots(cfg, t.log, t.disc)
	seen := newSeenFiles(t.reg)
	t.pros = &prospector{
		cfg: cfg,
		fcfg: followerConfig{
			source:       cfg.Source,
			maxLineBytes: cfg.MaxLineBytes,
			readSize:     cfg.ReadSize,
			clk:          cfg.Clock,
			open:         &t.slots.open,
			heads:        &t.reg.heads,
		},
		log:       t.log,
		clk:       cfg.Clock,
		out:       out,
		stats:     &t.stats,
		ledger:    ledgerView{ask: cfg.Counted, log: t.log},
		reg:       t.reg,
		disc:      t.disc,
		slots:     t.slots,
		seen:      seen,
		watched:   &watchList{clk: cfg.Clock},
		wg:        &t.wg,
		rescanNow: t.rescanNow,
	}
	t.rest = &restorer{
		cfg:     cfg,
		log:     t.log,
		clk:     cfg.Clock,
		out:     out,
		stats:   &t.stats,
		reg:     t.reg,
		disc:    t.disc,
		slots:   t.slots,
		seen:    seen,
		pros:    t.pros,
		waiting: make(map[stream.FileID]stream.Checkpoint),
	}
}

// Files returns the paths currently followed, sorted. A rotated-away file
// shows under the path it was last seen at.
func (t *Tailer) Files() []string { return t.reg.paths() }

// Run follows the files until ctx is cancelled, then returns nil once every
// goroutine it started has exited and every file is closed. No Chunk is
// sent after Run returns. Run may be called only once. Its stages: the
// restorer's start (then Started is closed), the rescans and the parked
// files' polls, and the stop (see the package doc).
func (t *Tailer) Run(ctx context.Context) error {
	t.mu.Lock()
	if t.running {
		t.mu.Unlock()
		return errors.New("tailer: Run called twice")
	}
	t.running = true
	t.mu.Unlock()

	defer t.wg.Wait()
	if err := t.rest.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	close(t.started)
	tick := t.clk.After(t.cfg.RescanInterval)
	var parkedTick <-chan time.Time // while files are parked
	for {
		t.pros.openQueued(ctx)
		if parkedTick == nil && t.slots.hasParked() {
			parkedTick = t.clk.After(max(t.cfg.IdlePollInterval, t.cfg.PollInterval))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
			tick = t.clk.After(t.cfg.RescanInterval)
			t.rescan(ctx)
		case <-t.rescanNow:
			t.rescan(ctx)
		case <-parkedTick:
			parkedTick = nil
			t.slots.pollParked()
			t.pros.openQueued(ctx)
		case <-t.slots.wake:
		}
	}
}

// rescan retries the waiting checkpoints, follows again the finished
// rotated files that grew, re-expands the globs, follows new files from 0
// and reads the rotated generations nobody saw (generations.go).
func (t *Tailer) rescan(ctx context.Context) {
	t.log.prune()
	if err := t.rest.retryWaiting(ctx); err != nil {
		return
	}
	t.pros.rewatch(ctx)
	lk := t.disc.look()
	if err := t.pros.followNew(ctx, lk); err != nil {
		return
	}
	t.pros.readMissed(ctx, lk)
}

// Started returns a channel closed once Run has resolved the restored
// checkpoints and sent every chunk of that start (Done chunks of dropped
// checkpoints, checkpoints of files recovered by Config.Since). A caller
// that commits checkpoints should not commit before every tailer has
// started: see Config.Since.
func (t *Tailer) Started() <-chan struct{} { return t.started }

// output hands a Tailer's chunks to the consumer, and holds the read
// buffers that come back from it. Its followers share it.
type output struct {
	ch   chan<- stream.Chunk
	bufs *freeList
}

// send hands c on, waiting for the consumer. Nothing is sent once ctx is
// cancelled.
func (o *output) send(ctx context.Context, c stream.Chunk) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case o.ch <- c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// logger is a Tailer's log: a slog.Logger, and logErr for messages that
// may repeat at every poll (stat, open and read errors), logged at most
// once per errLogEvery for each key. Its followers share it.
type logger struct {
	*slog.Logger
	clk clock.Clock

	mu     sync.Mutex
	logged map[string]time.Time // when each key was last logged
}

// errLogEvery is how often the same stat/open error is logged again.
const errLogEvery = time.Minute

func newLogger(log *slog.Logger, clk clock.Clock) *logger {
	return &logger{Logger: log, clk: clk, logged: make(map[string]time.Time)}
}

// logErr logs at most once per errLogEvery for each key.
func (l *logger) logErr(key string, level slog.Level, msg string, args ...any) {
	now := l.clk.Now()
	l.mu.Lock()
	last, ok := l.logged[key]
	if ok && now.Sub(last) < errLogEvery {
		l.mu.Unlock()
		return
	}
	l.logged[key] = now
	l.mu.Unlock()
	l.Log(context.Background(), level, msg, args...)
}

// prune forgets the keys logged errLogEvery or longer ago, which logErr
// would log again anyway: keys name paths, and date-named logs would make
// the map grow without bound.
func (l *logger) prune() {
	now := l.clk.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	maps.DeleteFunc(l.logged, func(_ string, last time.Time) bool { return now.Sub(last) >= errLogEvery })
}
