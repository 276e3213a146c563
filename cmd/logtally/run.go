package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/logtally/logtally/replay"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/notify"
	"github.com/logtally/logtally/observe"
	"github.com/logtally/logtally/pipeline"
)

func cmdRun(args []string, stderr io.Writer) error {
	fs, path := parseFlags("run", stderr)
	level := fs.String("log-level", "", "log `level`: debug, info, warn or error (default: [log] level)")
	if err := requireConfig(fs, args, path); err != nil {
		return err
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return usageError{err}
	}
	log, tap, err := newLogger(cfg, *level, stderr)
	if err != nil {
		return err
	}

	// The first SIGTERM or SIGINT stops reading and drains; a second exits
	// at once.
	ctx, release := onStopSignals(func(sig os.Signal) {
		log.Info("stopping: reading stopped, flushing what is buffered", "signal", sig.String(), "timeout", cfg.ShutdownTimeout.D())
		sdNotify(log, "STOPPING=1", notify.Stopping())
	}, func(sig os.Signal) {
		log.Warn("second signal: exiting at once; the buffer keeps what was not written", "signal", sig.String())
	}, 1)
	defer release()
	hups := make(chan os.Signal, 1)
	signal.Notify(hups, syscall.SIGHUP)
	defer signal.Stop(hups)

	// Each turn runs one pipeline; SIGHUP with a valid config ends it
	// (committed, not drained) and the next turn starts with the new one.
	for {
		next, err := runOnce(ctx, cfg, *path, log, tap, hups)
		if err != nil {
			log.Error("logtally stopped on an error", "err", err)
			return err
		}
		if next == nil {
			log.Info("logtally stopped")
			return nil
		}
		log.Info("reloaded", "sources", len(next.Sources), "files", next.Files)
		cfg = *next
	}
}

// runOnce runs one pipeline for cfg until ctx ends (nil, nil), a component
// fails (the error), or SIGHUP brings a valid new config, which it
// returns. An invalid new config is logged, naming the key, and the
// running one is kept. The logger ([log]) is kept across reloads.
func runOnce(ctx context.Context, cfg config.Config, path string, log *slog.Logger, tap *observe.Tap, hups <-chan os.Signal) (*config.Config, error) {
	setMaxProcs(cfg.MaxProcs, log)
	checkOpenFiles(cfg.MaxOpenFiles, log)
	if _, err := buffer.CheckDir(cfg.StateDir, config.BufferFile); err != nil {
		return nil, usagef("state_dir: %w", err)
	}
	client, db, err := cfg.Mongo.Connect("logtally")
	if err != nil {
		return nil, err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		client.Disconnect(ctx)
	}()

	p, err := pipeline.New(cfg.Pipeline(db, processClock, log))
	if err != nil {
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
	stopHTTP, err := serveHTTP(cfg, src, db, tap, log)
	if err != nil {
		return nil, err
	}
	stopHTTP = sync.OnceFunc(stopHTTP)
	defer stopHTTP()

	// Open may wait for MongoDB; a signal ends the wait.
	sdNotify(log, "STATUS=", notify.Status("starting: opening the buffer (a missing buffer.db waits for MongoDB)"))
	if err := p.Open(ctx); err != nil {
		if ctx.Err() != nil {
			log.Info("stopped before starting")
			return nil, nil
		}
		return nil, err
	}
	defer func() {
		stopHTTP() // before p.Close: /status answers through the drain
		if err := p.Close(context.Background()); err != nil {
			log.Error("close", "err", err)
		}
	}()
	src.p.Store(p)
	log.Info("logtally running", "sources", len(cfg.Sources), "mongo", cfg.Mongo.Redacted(), "database", cfg.Mongo.Database, "procs", runtime.GOMAXPROCS(0))
	if w := cfg.HTTP.ListenWarning(); w != "" {
		log.Warn(w)
	}

	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	reloaded := make(chan config.Config, 1)
	go func() {
		for {
			select {
			case <-runCtx.Done():
				return
			case <-hups:
			}
			log.Info("SIGHUP: reloading the config", "path", path)
			next, err := config.Load(path)
			if err != nil {
				log.Error("reload refused: the new config is invalid; the running one is kept", "err", err)
				continue
			}
			sdNotify(log, "RELOADING=1", notify.Reloading())
			reloaded <- next
			cancelRun(pipeline.ErrReload)
			return
		}
	}()

	// Sources are open and MongoDB has been tried: ready. The watchdog
	// pings systemd while the pipeline makes progress, until the stop
	// signal (STOPPING=1 ends systemd's watchdog; the drain that follows
	// has no aggregator to prove progress) or the end of Run.
	// READY=1 goes before the watchdog starts, whose first status line
	// must follow it.
	var side sync.WaitGroup
	side.Go(serveControl(p, cfg.ControlSocket(), log))
	sdNotify(log, "READY=1", notify.Ready())
	watchCtx, stopWatchdog := context.WithCancel(runCtx)
	side.Go(func() {
		notify.New(notify.Config{Alive: p.Alive, Status: statusLine(p, len(cfg.Sources)), Clock: processClock, Logger: log}).Run(watchCtx)
	})
	err = p.Run(runCtx)
	stopWatchdog()
	side.Wait()
	if err != nil {
		return nil, err
	}
	select {
	case next := <-reloaded:
		if ctx.Err() == nil {
			return &next, nil
		}
	default:
	}
	return nil, nil
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

// lateSource is what the HTTP endpoints read: the pipeline once New has
// made it, before that an empty one that is not healthy, saying why.
type lateSource struct {
	p      atomic.Pointer[pipeline.Pipeline]
	reason atomic.Value // string: why there is no pipeline
}

func (s *lateSource) why() error { return errors.New(s.reason.Load().(string)) }

func (s *lateSource) Alive(now time.Time) error {
	if p := s.p.Load(); p != nil {
		return p.Alive(now)
	}
	return s.why()
}

// Health is the pipeline's Health, or why there is none.
func (s *lateSource) Health(now time.Time) error {
	if p := s.p.Load(); p != nil {
		return p.Health(now)
	}
	return s.why()
}

func (s *lateSource) Stats() pipeline.Stats {
	if p := s.p.Load(); p != nil {
		return p.Stats()
	}
	return pipeline.Stats{}
}

// VisitorsNow is the pipeline's, or none (for /metrics).
func (s *lateSource) VisitorsNow(now time.Time) (pipeline.VisitorsNow, bool, error) {
	if p := s.p.Load(); p != nil {
		return p.VisitorsNow(now)
	}
	return pipeline.VisitorsNow{}, false, nil
}

func (s *lateSource) Status() (pipeline.Status, error) {
	if p := s.p.Load(); p != nil {
		return p.Status()
	}
	return pipeline.Status{}, nil
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
// environment variable is set. Each pipeline (a reload too) applies its
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
