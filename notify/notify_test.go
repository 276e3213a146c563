package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/syncbuf"
)

// socket is a fake NOTIFY_SOCKET: a unixgram socket the test reads.
type socket struct {
	t    *testing.T
	conn *net.UnixConn
}

// listen creates the socket in a temp dir and points NOTIFY_SOCKET at it.
func listen(t *testing.T) *socket {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	return &socket{t: t, conn: conn}
}

// pending returns the datagrams queued now, without waiting: a send on a
// unixgram socket has queued its datagram by the time it returns.
func (s *socket) pending() []string {
	s.t.Helper()
	rc, err := s.conn.SyscallConn()
	if err != nil {
		s.t.Fatal(err)
	}
	var got []string
	buf := make([]byte, 4096)
	for {
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, _, rerr = syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT)
			return true
		}); err != nil {
			s.t.Fatal(err)
		}
		if errors.Is(rerr, syscall.EAGAIN) {
			return got
		}
		if rerr != nil {
			s.t.Fatal(rerr)
		}
		got = append(got, string(buf[:n]))
	}
}

func TestNotifyHelpersSend(t *testing.T) {
	s := listen(t)
	if !Enabled() {
		t.Fatal("Enabled() = false with NOTIFY_SOCKET set")
	}
	for _, f := range []func() error{Ready, func() error { return Status("reading 2 sources\nline two") }, Stopping} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"READY=1", "STATUS=reading 2 sources line two", "STOPPING=1"}
	if got := s.pending(); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestNotifyUnsetIsNoop(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	t.Setenv("WATCHDOG_USEC", "2000000")
	if Enabled() {
		t.Fatal("Enabled() = true without NOTIFY_SOCKET")
	}
	for _, f := range []func() error{Ready, Stopping, func() error { return Status("x") }} {
		if err := f(); err != nil {
			t.Fatalf("without NOTIFY_SOCKET: %v", err)
		}
	}
	called := false
	w := New(Config{Alive: func(time.Time) error { called = true; return nil }, Clock: clock.NewFake(time.Unix(0, 0))})
	done := make(chan struct{})
	go func() { w.Run(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run without NOTIFY_SOCKET did not return")
	}
	if called {
		t.Fatal("Alive called without NOTIFY_SOCKET")
	}
}

func TestNotifyMissingSocketIsAnError(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "gone.sock"))
	if err := Ready(); err == nil {
		t.Fatal("Ready to a missing socket: no error")
	}
}

// watchdog runs a Watchdog on a fake clock and socket, with a 20 s
// watchdog interval (a ping due every 10 s) and the default 30 s status
// interval.
type watchdog struct {
	t      *testing.T
	sock   *socket
	clk    *clock.Fake
	logs   *syncbuf.Buffer
	stuck  atomic.Pointer[error]
	calls  atomic.Int64
	lastAt atomic.Int64 // Alive's now, Unix seconds
	stop   func()
}

func startWatchdog(t *testing.T, env map[string]string) *watchdog {
	t.Helper()
	w := &watchdog{t: t, sock: listen(t), clk: clock.NewFake(time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)), logs: &syncbuf.Buffer{}}
	t.Setenv("WATCHDOG_USEC", "20000000")
	t.Setenv("WATCHDOG_PID", "") // empty counts as unset
	for k, v := range env {
		t.Setenv(k, v)
	}
	var n atomic.Int64
	wd := New(Config{
		Alive: func(now time.Time) error {
			w.calls.Add(1)
			w.lastAt.Store(now.Unix())
			if e := w.stuck.Load(); e != nil {
				return *e
			}
			return nil
		},
		Status: func() string { return fmt.Sprintf("status %d", n.Add(1)) },
		Clock:  w.clk,
		Logger: slog.New(slog.NewTextHandler(w.logs, nil)),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { wd.Run(ctx); close(done) }()
	w.stop = func() { cancel(); <-done }
	t.Cleanup(w.stop)
	w.clk.BlockUntil(1)
	return w
}

// advance moves the clock and waits until the Watchdog waits again, so
// that what it sent for this step is queued on the socket.
func (w *watchdog) advance(d time.Duration) []string {
	w.t.Helper()
	w.clk.Advance(d)
	w.clk.BlockUntil(1)
	return w.sock.pending()
}

func (w *watchdog) setStuck(err error) {
	if err == nil {
		w.stuck.Store(nil)
		return
	}
	w.stuck.Store(&err)
}

func TestWatchdogHealthyPingsEveryHalfInterval(t *testing.T) {
	w := startWatchdog(t, nil)
	if got, want := w.sock.pending(), []string{"STATUS=status 1"}; !slices.Equal(got, want) {
		t.Fatalf("at start: %q, want %q", got, want)
	}
	if w.calls.Load() != 0 {
		t.Fatal("Alive asked at start: the first ping is due half an interval later")
	}
	if got := w.advance(9 * time.Second); len(got) != 0 {
		t.Fatalf("after 9 s: %q, want nothing", got)
	}
	steps := []struct {
		d    time.Duration
		want []string
	}{
		{1 * time.Second, []string{"WATCHDOG=1"}},                     // 10 s
		{10 * time.Second, []string{"WATCHDOG=1"}},                    // 20 s
		{10 * time.Second, []string{"WATCHDOG=1", "STATUS=status 2"}}, // 30 s
		{10 * time.Second, []string{"WATCHDOG=1"}},                    // 40 s
	}
	for i, s := range steps {
		if got := w.advance(s.d); !slices.Equal(got, s.want) {
			t.Fatalf("step %d: %q, want %q", i, got, s.want)
		}
	}
	if n := w.calls.Load(); n != 4 {
		t.Errorf("Alive asked %d times, want once per ping time (4)", n)
	}
	if at := time.Unix(w.lastAt.Load(), 0).UTC(); !at.Equal(w.clk.Now()) {
		t.Errorf("Alive got now = %v, want the clock's %v", at, w.clk.Now())
	}
	if strings.Contains(w.logs.String(), "level=WARN") {
		t.Errorf("WARN while healthy:\n%s", w.logs)
	}
}

func TestWatchdogStuckWithholdsPings(t *testing.T) {
	w := startWatchdog(t, nil)
	w.sock.pending()
	if got := w.advance(10 * time.Second); !slices.Equal(got, []string{"WATCHDOG=1"}) {
		t.Fatalf("healthy: %q", got)
	}
	w.setStuck(errors.New("flusher: no progress since 2026-02-01T10:00:00Z"))
	// Stuck for 80 s: no ping at all, status lines go on.
	var sent []string
	for range 8 {
		sent = append(sent, w.advance(10*time.Second)...)
	}
	if slices.Contains(sent, "WATCHDOG=1") {
		t.Fatalf("pinged while Alive failed: %q", sent)
	}
	if !slices.Contains(sent, "STATUS=status 2") || !slices.Contains(sent, "STATUS=status 3") {
		t.Errorf("status lines stopped while stuck: %q", sent)
	}
	// The WARN names the reason, once and then once a minute: at 20 s
	// (first withheld) and 80 s (a minute later), not at each of the 8.
	logs := w.logs.String()
	if n := strings.Count(logs, "level=WARN"); n != 2 {
		t.Errorf("%d WARNs in 8 withheld pings, want 2 (rate-limited):\n%s", n, logs)
	}
	if !strings.Contains(logs, "flusher: no progress since") || !strings.Contains(logs, "withheld=7") {
		t.Errorf("WARN lacks the reason or the count:\n%s", logs)
	}
	w.setStuck(nil)
	if got := w.advance(10 * time.Second); !slices.Contains(got, "WATCHDOG=1") {
		t.Fatalf("progress again, no ping: %q", got)
	}
	if !strings.Contains(w.logs.String(), "pings resumed") {
		t.Errorf("recovery not logged:\n%s", w.logs)
	}
}

// A WATCHDOG_PID naming another process means the pings are not ours to
// send; status lines still are.
func TestWatchdogOtherPID(t *testing.T) {
	w := startWatchdog(t, map[string]string{"WATCHDOG_PID": fmt.Sprint(os.Getpid() + 1)})
	var sent []string
	sent = append(sent, w.sock.pending()...)
	for range 3 {
		sent = append(sent, w.advance(10*time.Second)...)
	}
	if want := []string{"STATUS=status 1", "STATUS=status 2"}; !slices.Equal(sent, want) {
		t.Fatalf("got %q, want %q", sent, want)
	}
	if w.calls.Load() != 0 {
		t.Error("Alive asked without a watchdog")
	}
}

// Without WATCHDOG_USEC (WatchdogSec unset) only status lines are sent.
func TestWatchdogStatusOnly(t *testing.T) {
	w := startWatchdog(t, map[string]string{"WATCHDOG_USEC": ""})
	var sent []string
	sent = append(sent, w.sock.pending()...)
	sent = append(sent, w.advance(30*time.Second)...)
	sent = append(sent, w.advance(30*time.Second)...)
	if want := []string{"STATUS=status 1", "STATUS=status 2", "STATUS=status 3"}; !slices.Equal(sent, want) {
		t.Fatalf("got %q, want %q", sent, want)
	}
}

// The socket going away is logged once, not at every message.
func TestWatchdogSendFailureLoggedOnce(t *testing.T) {
	w := startWatchdog(t, nil)
	w.sock.pending()
	w.sock.conn.Close()
	os.Remove(os.Getenv("NOTIFY_SOCKET"))
	for range 4 {
		w.clk.Advance(10 * time.Second)
		w.clk.BlockUntil(1)
	}
	if n := strings.Count(w.logs.String(), "sd_notify failed"); n != 1 {
		t.Fatalf("%d send failures logged, want 1:\n%s", n, w.logs)
	}
}

func TestWatchdogNewNeedsAlive(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New without Alive did not panic")
		}
	}()
	New(Config{})
}
