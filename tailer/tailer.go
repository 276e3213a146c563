package tailer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/logtally/logtally/clock"
)

// Values of zero Config fields.
const (
	defaultPollInterval   = 250 * time.Millisecond
	defaultRescanInterval = 5 * time.Second
	defaultRotateGrace    = 10 * time.Second
	defaultMaxLineBytes   = 1 << 20
	defaultReadSize       = 256 << 10
)

// errLogEvery is how often the same stat/open error is logged again.
const errLogEvery = time.Minute

// Config configures a Tailer. Zero durations and sizes take the defaults.
type Config struct {
	Source         string        // source name (stable across restarts), goes into checkpoints
	Paths          []string      // globs (filepath.Glob syntax)
	Checkpoints    []Checkpoint  // restored state for this source (from the buffer)
	PollInterval   time.Duration // default 250ms: how often an idle file is checked for growth/rotation/truncation
	RescanInterval time.Duration // default 5s: how often globs are re-expanded
	// RotateGrace (default 10s) is how long a rotated-away file (its path now
	// names another inode, or nothing) is kept open and read after it
	// stopped growing: nginx keeps writing the renamed file until it reopens.
	RotateGrace  time.Duration
	MaxLineBytes int         // default 1 MiB; longer lines are skipped whole and counted in Chunk.Skipped
	ReadSize     int         // default 256 KiB: read buffer; a Chunk carries at most about this much
	Clock        clock.Clock // default clock.Real{}
	Logger       *slog.Logger
	// Since is the wall-clock time of the last commit of the previous run
	// (buffer.LastCommit), zero on the very first start. When it is set,
	// the rotated files written while the daemon was down that no
	// checkpoint accounts for are read from 0 at start; see the package
	// doc. Zero: rotated files without a checkpoint are history, not read.
	Since time.Time
}

// Tailer follows the files one source's globs match and sends their lines
// as Chunks. Create it with New and start it with Run.
type Tailer struct {
	cfg       Config
	out       chan<- Chunk
	log       *slog.Logger
	clk       clock.Clock
	rescanNow chan struct{}
	started   chan struct{} // closed when the start chunks have been sent
	wg        sync.WaitGroup

	mu      sync.Mutex
	running bool
	// files holds every claimed file: a follower, or nil for an identity
	// reserved until a retired checkpoint's Done chunk has been sent.
	files map[FileID]*follower

	// waiting holds restored checkpoints whose file could not be read
	// (an error other than not-exist), retried at every rescan. Their
	// identities are reserved in files. Only Run's goroutine uses it.
	waiting map[FileID]Checkpoint

	errMu     sync.Mutex
	errLogged map[string]time.Time
}

// New validates cfg and returns a Tailer that will send to out. A bad glob
// pattern, a missing source name or path, a negative setting, or a restored
// checkpoint of another source (or a duplicate) is an error.
func New(cfg Config, out chan<- Chunk) (*Tailer, error) {
	if out == nil {
		return nil, errors.New("new tailer: nil output channel")
	}
	if cfg.Source == "" {
		return nil, errors.New("new tailer: empty source name")
	}
	if len(cfg.Paths) == 0 {
		return nil, fmt.Errorf("new tailer %q: no paths", cfg.Source)
	}
	for _, p := range cfg.Paths {
		if _, err := filepath.Match(p, ""); err != nil {
			return nil, fmt.Errorf("new tailer %q: glob %q: %w", cfg.Source, p, err)
		}
	}
	if cfg.PollInterval < 0 || cfg.RescanInterval < 0 || cfg.RotateGrace < 0 || cfg.MaxLineBytes < 0 || cfg.ReadSize < 0 {
		return nil, fmt.Errorf("new tailer %q: negative interval or size", cfg.Source)
	}
	cfg.Paths = slices.Clone(cfg.Paths)
	cfg.Checkpoints = slices.Clone(cfg.Checkpoints)
	seen := make(map[FileID]bool, len(cfg.Checkpoints))
	for _, cp := range cfg.Checkpoints {
		if cp.Source != cfg.Source {
			return nil, fmt.Errorf("new tailer %q: checkpoint of source %q", cfg.Source, cp.Source)
		}
		if seen[cp.File] {
			return nil, fmt.Errorf("new tailer %q: duplicate checkpoint for file %s", cfg.Source, cp.File.str())
		}
		if cp.Offset < 0 || cp.FPLen < 0 || cp.FPLen > FingerprintSize {
			return nil, fmt.Errorf("new tailer %q: checkpoint %s out of range", cfg.Source, cp.File.str())
		}
		seen[cp.File] = true
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = defaultPollInterval
	}
	if cfg.RescanInterval == 0 {
		cfg.RescanInterval = defaultRescanInterval
	}
	if cfg.RotateGrace == 0 {
		cfg.RotateGrace = defaultRotateGrace
	}
	if cfg.MaxLineBytes == 0 {
		cfg.MaxLineBytes = defaultMaxLineBytes
	}
	if cfg.ReadSize == 0 {
		cfg.ReadSize = defaultReadSize
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Tailer{
		cfg:       cfg,
		out:       out,
		log:       log.With("component", "tailer", "source", cfg.Source),
		clk:       cfg.Clock,
		rescanNow: make(chan struct{}, 1),
		started:   make(chan struct{}),
		files:     make(map[FileID]*follower),
		waiting:   make(map[FileID]Checkpoint),
		errLogged: make(map[string]time.Time),
	}, nil
}

// Files returns the paths currently followed, sorted. A rotated-away file
// shows under the path it was last seen at.
func (t *Tailer) Files() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var paths []string
	for _, fl := range t.files {
		if fl != nil {
			paths = append(paths, fl.pubPath)
		}
	}
	slices.Sort(paths)
	return paths
}

// Run follows the files until ctx is cancelled, then returns nil once every
// goroutine it started has exited and every file is closed. No Chunk is
// sent after Run returns. Run may be called only once.
func (t *Tailer) Run(ctx context.Context) error {
	t.mu.Lock()
	if t.running {
		t.mu.Unlock()
		return errors.New("tailer: Run called twice")
	}
	t.running = true
	t.mu.Unlock()

	defer t.wg.Wait()
	if err := t.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	close(t.started)
	tick := t.clk.After(t.cfg.RescanInterval)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
			tick = t.clk.After(t.cfg.RescanInterval)
		case <-t.rescanNow:
		}
		t.rescan(ctx)
	}
}

// rescan retries the waiting checkpoints, re-expands the globs and follows
// new files from 0.
func (t *Tailer) rescan(ctx context.Context) {
	if err := t.retryWaiting(ctx); err != nil {
		return
	}
	for _, fi := range t.expand() {
		if ctx.Err() != nil {
			return
		}
		if t.claimed(fi.id) {
			continue
		}
		if t.isCopy(fi.path, t.heads(fi.id)) {
			continue
		}
		fl, err := t.openFollower(fi.path, fi.id, Checkpoint{Source: t.cfg.Source})
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				t.logErr("open "+fi.path, slog.LevelWarn, "cannot open file", "err", err, "path", fi.path)
			}
			continue
		}
		fl.fresh, fl.pubFresh = true, true
		if !t.claim(fl) {
			fl.close()
			continue
		}
		t.log.Info("following new file", "path", fi.path)
		t.spawn(ctx, fl)
	}
}

// Started returns a channel closed once Run has resolved the restored
// checkpoints and sent every chunk of that start (Done chunks of dropped
// checkpoints, checkpoints of files recovered by Config.Since). A caller
// that commits checkpoints should not commit before every tailer has
// started: see Config.Since.
func (t *Tailer) Started() <-chan struct{} { return t.started }

// triggerRescan asks Run to re-expand the globs now.
func (t *Tailer) triggerRescan() {
	select {
	case t.rescanNow <- struct{}{}:
	default:
	}
}

// send hands c on, waiting for the consumer. Nothing is sent once ctx is
// cancelled.
func (t *Tailer) send(ctx context.Context, c Chunk) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case t.out <- c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// logErr logs at most once per errLogEvery for each key.
func (t *Tailer) logErr(key string, level slog.Level, msg string, args ...any) {
	now := t.clk.Now()
	t.errMu.Lock()
	last, ok := t.errLogged[key]
	if ok && now.Sub(last) < errLogEvery {
		t.errMu.Unlock()
		return
	}
	t.errLogged[key] = now
	t.errMu.Unlock()
	t.log.Log(context.Background(), level, msg, args...)
}
