package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/daemon"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/internal/testenv/testconfig"
)

// setup writes a log of three hits per source and a config for it with
// MongoDB unreachable (the daemon buffers), fast timings, no visitors and
// the endpoints on listen, then overrides, and returns the loaded config
// and the state dir.
func setup(t *testing.T, dir, listen string, sources int, overrides ...func(*config.Config)) (config.Config, string) {
	t.Helper()
	c := testconfig.New(dir, testconfig.Mongo("mongodb://"+testenv.FreeAddr(t)+"/", config.DefaultDatabase), func(c *config.Config) {
		c.ShutdownTimeout = config.Duration(time.Second)
		c.Mongo.Timeout = config.Duration(300 * time.Millisecond)
		c.Visitors.Enabled = false
		c.HTTP.Listen = listen
	})
	for i := range sources {
		logPath := filepath.Join(dir, fmt.Sprintf("access%d.log", i))
		line := fmt.Sprintf("10.0.0.1 - - [%s] \"GET /p HTTP/1.1\" 200 10 \"-\" \"t\"\n", clock.Real{}.Now().UTC().Format("02/Jan/2006:15:04:05 -0700"))
		if _, err := os.Stat(logPath); err != nil { // written once: a reload's config reads the same file
			if err := os.WriteFile(logPath, []byte(strings.Repeat(line, 3)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c.Sources = append(c.Sources, testconfig.Source(fmt.Sprintf("s%d", i), logPath))
	}
	for _, o := range overrides {
		o(&c)
	}
	cfg, err := config.Load(testconfig.Write(t, filepath.Join(dir, "logtally.toml"), c))
	if err != nil {
		t.Fatal(err)
	}
	return cfg, c.StateDir
}

// earlierBuffer leaves an empty buffer.db in state, as an earlier run
// would: Open does not wait for MongoDB.
func earlierBuffer(t *testing.T, state string) {
	t.Helper()
	os.MkdirAll(state, 0o700)
	testenv.OpenBuffer(t, filepath.Join(state, config.BufferFile), buffer.Options{}).Close()
}

// instance is an override that names the instance.
func instance(name string) func(*config.Config) {
	return func(c *config.Config) { c.Instance = name }
}

func newDaemon(cfg config.Config) (*daemon.Daemon, *syncbuf.Buffer) {
	out := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(out, nil))
	return daemon.New(cfg, daemon.Options{Logger: log, Version: "test"}), out
}

// ours lists the goroutines running code of the daemon or of what it
// starts.
func ours() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var left []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "daemon_test.") {
			continue
		}
		for _, pkg := range []string{"logtally/daemon.", "logtally/notify.", "logtally/observe.", "logtally/pipeline.", "logtally/replay.", "internal/httpserve."} {
			if strings.Contains(g, pkg) {
				left = append(left, g)
				break
			}
		}
	}
	return left
}

// New does no I/O: the state dir is made by Open, not New; Close and Run
// of a daemon never opened return nil.
func TestNewDoesNoIO(t *testing.T) {
	dir := t.TempDir()
	cfg, state := setup(t, dir, "", 1)
	d, _ := newDaemon(cfg)
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("New made the state dir: %v", err)
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatalf("Close of a daemon never opened: %v", err)
	}
	if err := d.Run(context.Background()); err != nil {
		t.Fatalf("Run after Close: %v", err)
	}
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Close or Run made the state dir: %v", err)
	}
}

// Open serves the endpoints (/status answers) and opens the pipeline; Run runs it; Reload
// switches to a config with one more source (the turn ends, the next one
// runs); Close stops Run, which returns nil, and when Close returns the
// endpoints, the control socket and every goroutine the daemon started
// are gone.
func TestOpenRunReloadClose(t *testing.T) {
	dir := t.TempDir()
	addr := testenv.FreeAddr(t)
	cfg, state := setup(t, dir, addr, 1)
	earlierBuffer(t, state)
	d, out := newDaemon(cfg)
	if err := d.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	testenv.Wait(t, 30*time.Second, "/status", func() bool { // the server listens in its own goroutine
		code, body := testenv.Get(addr, "/status")
		return code == 200 && strings.Contains(body, `"version": "test"`)
	}, out)
	ran := make(chan error, 1)
	go func() { ran <- d.Run(context.Background()) }()
	sock := cfg.ControlSocket()
	testenv.Wait(t, 30*time.Second, "control socket", func() bool { _, err := os.Stat(sock); return err == nil }, out)
	testenv.Wait(t, 30*time.Second, "3 hits on /metrics", func() bool {
		_, body := testenv.Get(addr, "/metrics")
		return strings.Contains(body, `logtally_hits_total{site="s0"} 3`)
	}, out)

	next, _ := setup(t, dir, addr, 2)
	d.Reload(next)
	testenv.Wait(t, 30*time.Second, "the reload", func() bool {
		return strings.Contains(out.String(), "msg=reloaded sources=2") && strings.Count(out.String(), `msg="logtally running"`) == 2
	}, out)
	if got := d.Config(); len(got.Sources) != 2 {
		t.Errorf("Config after the reload has %d sources, want 2", len(got.Sources))
	}
	testenv.Wait(t, 30*time.Second, "the new source's hits on /metrics", func() bool {
		_, body := testenv.Get(addr, "/metrics")
		return strings.Contains(body, `logtally_hits_total{site="s1"} 3`)
	}, out)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.Close(ctx); err != nil {
		t.Fatalf("Close: %v\n%s", err, out)
	}
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run after Close: %v", err)
		}
	default:
		t.Fatal("Close returned before Run")
	}
	if code, body := testenv.Get(addr, "/healthz"); code != 0 {
		t.Errorf("/healthz answers after Close: %d %s", code, body)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("control socket left after Close: %v", err)
	}
	if left := ours(); len(left) > 0 {
		t.Errorf("goroutines left after Close:\n%s", strings.Join(left, "\n\n"))
	}
	if strings.Contains(out.String(), "level=ERROR") {
		t.Errorf("an error logged:\n%s", out)
	}
}

// A Reload before the turn runs is taken as soon as it does; two in a row
// make one reload, to the last config.
func TestReloadBeforeRunTakesTheLast(t *testing.T) {
	dir := t.TempDir()
	cfg, state := setup(t, dir, "", 1)
	earlierBuffer(t, state)
	d, out := newDaemon(cfg)
	if err := d.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	first, _ := setup(t, dir, "", 1, instance("first"))
	last, _ := setup(t, dir, "", 2, instance("last"))
	d.Reload(first)
	d.Reload(last)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(ctx) }()
	testenv.Wait(t, 30*time.Second, "the reload", func() bool { return strings.Count(out.String(), `msg="logtally running"`) == 2 }, out)
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v\n%s", err, out)
	}
	if n := strings.Count(out.String(), "msg=reloaded"); n != 1 {
		t.Errorf("%d reloads, want 1:\n%s", n, out)
	}
	if got := d.Config(); got.Instance != "last" {
		t.Errorf("running instance %q, want the last Reload's", got.Instance)
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// While the first start waits for MongoDB (no buffer.db and an instance:
// it is rebuilt from the progress record), the endpoints say so; the end
// of ctx ends the wait, Open returns nil and Run returns nil at once.
func TestStopWhileWaitingForMongo(t *testing.T) {
	dir := t.TempDir()
	addr := testenv.FreeAddr(t)
	cfg, _ := setup(t, dir, addr, 1, instance("web-1"))
	d, out := newDaemon(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	opened := make(chan error, 1)
	go func() { opened <- d.Open(ctx) }()
	testenv.Wait(t, 30*time.Second, "/healthz waiting for MongoDB", func() bool {
		code, body := testenv.Get(addr, "/healthz")
		return code == 503 && strings.Contains(body, "waiting for MongoDB")
	}, out)
	cancel()
	if err := <-opened; err != nil {
		t.Fatalf("Open stopped while waiting: %v", err)
	}
	if !strings.Contains(out.String(), "stopped before starting") {
		t.Errorf("no stopped before starting:\n%s", out)
	}
	if err := d.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if code, _ := testenv.Get(addr, "/healthz"); code != 0 {
		t.Errorf("/healthz answers after the stop: %d", code)
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A state dir the daemon cannot use is a *ConfigError naming state_dir.
func TestBadStateDirIsConfigError(t *testing.T) {
	dir := t.TempDir()
	cfg, state := setup(t, dir, "", 1)
	if err := os.WriteFile(state, nil, 0o600); err != nil { // a file, not a directory
		t.Fatal(err)
	}
	d, _ := newDaemon(cfg)
	err := d.Open(context.Background())
	var ce *daemon.ConfigError
	if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "state_dir: ") {
		t.Fatalf("Open on a file as state_dir: %v, want a *ConfigError naming state_dir", err)
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
