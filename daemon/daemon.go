package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/notify"
	"github.com/logtally/logtally/observe"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/replay"
)

// Options are what the daemon keeps across reloads besides its config.
type Options struct {
	// Clock is the process's one clock, handed to every component.
	// Default clock.Real.
	Clock clock.Clock
	// Logger is the daemon's logger, kept across reloads ([log] applies at
	// start only). Default: discarding.
	Logger *slog.Logger
	// Tap, when set, keeps each component's last warning or error for
	// /status (the Tap under Logger's handler).
	Tap *observe.Tap
	// Version is the version /status shows.
	Version string
}

// ConfigError is a value of the config the daemon cannot use when it
// applies it (a state_dir it cannot hold its buffer in): a bad config, as
// one Validate refuses is (cmd/logtally exits 2).
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// ErrClosed is the cause a Close gives the running pipeline's context: a
// stop, drained as a stop signal's is.
var ErrClosed = errors.New("daemon closed")

// Daemon is `logtally run`: one pipeline at a time (a turn), its HTTP
// endpoints, control socket and systemd notifications, a new turn on each
// Reload.
type Daemon struct {
	opts Options
	log  *slog.Logger

	stopOnce sync.Once // STOPPING=1, sent once

	mu     sync.Mutex
	cfg    config.Config  // the turn's running or opening
	next   *config.Config // the last Reload not yet taken
	reload func()         // ends the running turn for next; nil while no turn runs or one was asked
	turn   *turn          // opened by Open, not yet run
	opened bool           // Open was called
	ran    bool           // Run was called
	closed bool           // Close was called: a Run after it returns at once
	stop   context.CancelCauseFunc
	done   chan struct{} // closed when Run returns
	geo    *geo.Holder   // the [geo] databases, kept across turns (opened or reloaded by each)
}

// New returns the daemon of cfg. It does no I/O: Open starts the first
// turn.
func New(cfg config.Config, opts Options) *Daemon {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Daemon{opts: opts, log: opts.Logger, cfg: cfg, done: make(chan struct{})}
}

// Config returns the config of the turn running (or being opened).
func (d *Daemon) Config() config.Config {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg
}

// Open opens the first turn: it applies max_procs, checks max_open_files
// and the state dir, connects to MongoDB, serves the HTTP endpoints
// (answering "starting" until the pipeline is open) and opens the
// pipeline, which may wait for MongoDB (a missing buffer is rebuilt from
// the instance's progress record). A ctx that ends while it waits ends
// the wait: Open logs "stopped before starting", tells systemd it stops,
// and returns nil; Run then returns nil at once. On an error, what Open
// opened is closed again. Call it once, before Run.
func (d *Daemon) Open(ctx context.Context) error {
	d.mu.Lock()
	if d.opened {
		d.mu.Unlock()
		return errors.New("daemon: Open called twice")
	}
	d.opened = true
	cfg := d.cfg
	d.mu.Unlock()
	defer d.notifyStop(ctx)()
	t, err := d.open(ctx, cfg)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.turn = t
	d.mu.Unlock()
	return nil
}

// Run runs the turn Open opened, and the next one on each Reload, until
// ctx ends or Close is called (nil, once the pipeline has drained within
// shutdown_timeout and everything the turn started has returned) or a
// component fails (its error; a state_dir the reloaded config cannot use
// is a *ConfigError). When ctx ends it tells systemd the daemon stops
// (STOPPING=1). Call it once, after Open.
func (d *Daemon) Run(ctx context.Context) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	if !d.opened || d.ran {
		d.mu.Unlock()
		return errors.New("daemon: Run needs Open, and runs once")
	}
	d.ran = true
	ctx, stop := context.WithCancelCause(ctx)
	d.stop = stop
	t := d.turn
	d.turn = nil
	d.mu.Unlock()
	defer close(d.done)
	defer stop(nil)
	defer d.notifyStop(ctx)()

	for t != nil {
		next, err := t.run(ctx)
		t.close()
		if err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		d.log.Info("reloaded", "sources", len(next.Sources), "files", next.Files)
		d.mu.Lock()
		d.cfg = *next
		d.mu.Unlock()
		if t, err = d.open(ctx, *next); err != nil {
			return err
		}
	}
	return nil
}

// Reload makes the daemon run with cfg, which the caller has loaded and
// validated: the running pipeline stops reading (committed, not drained:
// pipeline.ErrReload), systemd is told (RELOADING=1), and a new turn
// starts with cfg on the same buffer; its tailers resume from the
// committed checkpoints. A Reload while a turn opens is taken once it
// runs; a later Reload before that replaces cfg. Safe for concurrent use.
func (d *Daemon) Reload(cfg config.Config) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next = &cfg
	if d.reload != nil {
		d.reload()
		d.reload = nil
	}
}

// Close stops a Run under way (as the end of its ctx does: the pipeline
// drains), waits for it to return and for everything it started, and
// closes a turn Open opened that Run never ran. If ctx ends first, Close
// returns its error; Run goes on stopping.
func (d *Daemon) Close(ctx context.Context) error {
	d.mu.Lock()
	t := d.turn
	d.turn = nil
	stop := d.stop
	d.closed = true
	d.mu.Unlock()
	if t != nil {
		t.close()
	}
	if stop == nil { // Run never started
		return nil
	}
	stop(ErrClosed)
	select {
	case <-d.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close daemon: the run is still stopping: %w", context.Cause(ctx))
	}
}

// notifyStop sends STOPPING=1 (once per daemon) when ctx ends before the
// returned func is called; that func waits for the send. STOPPING=1 ends
// systemd's watchdog: the drain that follows has no aggregator to prove
// progress.
func (d *Daemon) notifyStop(ctx context.Context) (release func()) {
	sent := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(sent)
		d.stopOnce.Do(func() { sdNotify(d.log, "STOPPING=1", notify.Stopping()) })
	})
	return func() {
		if !stop() {
			<-sent
		}
	}
}

// turn is one pipeline of one config and what serves it: MongoDB's
// client, the HTTP endpoints.
type turn struct {
	d        *Daemon
	cfg      config.Config
	client   *mongo.Client
	stopHTTP func()
	p        *pipeline.Pipeline // once open
}

// open makes and opens the turn of cfg (see Open); nil, nil when ctx
// ended while the pipeline opened.
func (d *Daemon) open(ctx context.Context, cfg config.Config) (*turn, error) {
	setMaxProcs(cfg.MaxProcs, d.log)
	checkOpenFiles(cfg.MaxOpenFiles, d.log)
	if _, err := buffer.CheckDir(cfg.StateDir, config.BufferFile); err != nil {
		return nil, &ConfigError{fmt.Errorf("state_dir: %w", err)}
	}
	client, db, err := cfg.Mongo.Connect("logtally")
	if err != nil {
		return nil, err
	}
	t := &turn{d: d, cfg: cfg, client: client}

	pc := cfg.Pipeline(db, d.opts.Clock, d.log)
	var geoDBs *geo.Holder // this turn's, for /metrics
	if pc.Dims != nil {
		if pc.Dims.Geo, err = geoHolder(d.geo, cfg.Geo, d.log); err != nil {
			t.close()
			return nil, &ConfigError{err}
		}
		d.geo, geoDBs = pc.Dims.Geo, pc.Dims.Geo
	}
	p, err := pipeline.New(pc)
	if err != nil {
		t.close()
		return nil, err
	}

	// The endpoints answer from the start: while Open waits for MongoDB
	// (a missing buffer is rebuilt from the instance's progress record),
	// /healthz says so.
	src := &lateSource{}
	src.reason.Store("starting: opening the buffer")
	if _, err := os.Stat(cfg.BufferPath()); errors.Is(err, os.ErrNotExist) && cfg.Instance != "" {
		src.reason.Store("starting: waiting for MongoDB: " + config.BufferFile + " is missing and is rebuilt from this instance's progress record")
	}
	if t.stopHTTP, err = d.serveHTTP(cfg, src, db, geoDBs); err != nil {
		t.close()
		return nil, err
	}

	// Open may wait for MongoDB; the end of ctx ends the wait.
	sdNotify(d.log, "STATUS=", notify.Status("starting: opening the buffer (a missing buffer.db waits for MongoDB)"))
	if err := p.Open(ctx); err != nil {
		if ctx.Err() != nil {
			d.log.Info("stopped before starting")
			t.close()
			return nil, nil
		}
		t.close()
		return nil, err
	}
	t.p = p
	src.p.Store(p)
	d.log.Info("logtally running", "sources", len(cfg.Sources), "mongo", cfg.Mongo.Redacted(), "database", cfg.Mongo.Database, "procs", runtime.GOMAXPROCS(0))
	if w := cfg.HTTP.ListenWarning(); w != "" {
		d.log.Warn(w)
	}
	return t, nil
}

// run runs the turn's pipeline until ctx ends (nil, nil), a component
// fails (the error), or a Reload brings the next config, which it
// returns.
func (t *turn) run(ctx context.Context) (*config.Config, error) {
	d, p, log := t.d, t.p, t.d.log
	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	d.mu.Lock()
	d.reload = func() {
		sdNotify(log, "RELOADING=1", notify.Reloading())
		cancelRun(pipeline.ErrReload)
	}
	if d.next != nil { // a Reload while the turn opened
		d.reload()
		d.reload = nil
	}
	d.mu.Unlock()

	// Sources are open and MongoDB has been tried: ready. The watchdog
	// pings systemd while the pipeline makes progress, until the stop
	// (STOPPING=1 ends systemd's watchdog; the drain that follows has no
	// aggregator to prove progress) or the end of Run.
	// READY=1 goes before the watchdog starts, whose first status line
	// must follow it.
	var side sync.WaitGroup
	side.Go(serveControl(p, t.cfg.ControlSocket(), log))
	sdNotify(log, "READY=1", notify.Ready())
	watchCtx, stopWatchdog := context.WithCancel(runCtx)
	side.Go(func() {
		notify.New(notify.Config{Alive: p.Alive, Status: statusLine(p, len(t.cfg.Sources)), Clock: d.opts.Clock, Logger: log}).Run(watchCtx)
	})
	err := p.Run(runCtx)
	stopWatchdog()
	side.Wait()

	d.mu.Lock()
	d.reload = nil
	next := d.next
	if err == nil && next != nil && ctx.Err() == nil {
		d.next = nil
	} else {
		next = nil
	}
	d.mu.Unlock()
	return next, err
}

// close stops the endpoints (before the pipeline's Close: /status answers
// through the drain), closes the pipeline and disconnects from MongoDB.
func (t *turn) close() {
	if t.stopHTTP != nil {
		t.stopHTTP()
	}
	if t.p != nil {
		if err := t.p.Close(context.Background()); err != nil {
			t.d.log.Error("close", "err", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	t.client.Disconnect(ctx)
}

// serveControl listens on the control socket path and returns the func
// that answers `logtally replay` there with p's replay service until p
// stops reading, returning once the replays it took have returned. A
// socket that cannot be made is logged: the daemon runs without it, and
// the func returns at once.
func serveControl(p *pipeline.Pipeline, path string, log *slog.Logger) func() {
	ln, err := replay.Listen(path)
	if err != nil {
		log.Error("no control socket: `logtally replay` cannot run beside this logtally", "component", "pipeline", "err", err)
		return func() {}
	}
	return func() { replay.NewService(p).Serve(p.Reading(), ln) }
}

// sdNotify logs a failed notification to systemd; it is not fatal.
func sdNotify(log *slog.Logger, msg string, err error) {
	if err != nil {
		log.Warn("sd_notify failed", "msg", msg, "err", err)
	}
}

// statusLine returns the status line systemd shows for the daemon; "in
// MongoDB up to" is when the last acknowledged batch was sealed.
func statusLine(p *pipeline.Pipeline, sources int) func() string {
	return func() string {
		st := p.Stats()
		line := fmt.Sprintf("reading %d sources; %d hits counted; pending %d keys / %d hits; batches %d written, %d retries",
			sources, st.Aggregator.Hits, st.PendingKeys, st.PendingHits, st.Flusher.Batches, st.Flusher.Retries)
		if s, err := p.Status(); err == nil && s.LastAcked != nil && !s.LastAcked.SealedAt.IsZero() {
			line += "; in MongoDB up to " + s.LastAcked.SealedAt.UTC().Format(time.RFC3339)
		}
		return line
	}
}

// openFilesRoom is how many descriptors the daemon needs besides its log
// files: the buffer, sockets to MongoDB and of the endpoints, files a
// replay reads, and the files the tailers open for a moment.
const openFilesRoom = 256

// checkOpenFiles warns when max_open_files leaves too little room under
// the process's limit on descriptors (RLIMIT_NOFILE, which Go raises to
// its hard limit at start): opening a log, a socket or the buffer would
// then fail.
func checkOpenFiles(maxOpen int, log *slog.Logger) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return
	}
	if uint64(maxOpen)+openFilesRoom > lim.Cur {
		log.Warn("max_open_files leaves too little room under the limit on open files: lower it, or raise the limit (LimitNOFILE= in the systemd unit)",
			"max_open_files", maxOpen, "limit", lim.Cur, "room", openFilesRoom)
	}
}

// setMaxProcs makes the daemon use at most n cores at once (max_procs; 0:
// Go's default, all the machine's or its cgroup's), unless the GOMAXPROCS
// environment variable is set. Each turn (a reload too) applies its
// config's.
func setMaxProcs(n int, log *slog.Logger) {
	if os.Getenv("GOMAXPROCS") != "" {
		log.Debug("max_procs left to the GOMAXPROCS environment variable", "gomaxprocs", runtime.GOMAXPROCS(0))
		return
	}
	if n == 0 {
		runtime.SetDefaultGOMAXPROCS()
	} else {
		runtime.GOMAXPROCS(n)
	}
}

// geoHolder returns the holder of g's databases (nil without any): prev
// reloaded when it reads the same files (a file that no longer reads
// keeps the databases read before: logged), else a new one (an error
// names the file).
func geoHolder(prev *geo.Holder, g config.Geo, log *slog.Logger) (*geo.Holder, error) {
	if g.CountryDB == "" && g.ASNDB == "" {
		return nil, nil
	}
	if prev != nil {
		if country, asn := prev.Paths(); country == g.CountryDB && asn == g.ASNDB {
			if err := prev.Reload(); err != nil {
				log.Warn("geo databases not reloaded: the ones read before are kept", "err", err)
			}
			return prev, nil
		}
	}
	return geo.OpenHolder(g.CountryDB, g.ASNDB)
}
