package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
)

// notifySocket is a fake systemd notification socket: it records every
// datagram logtally sends.
type notifySocket struct {
	path string
	conn *net.UnixConn
	mu   sync.Mutex
	msgs []string
}

func listenNotify(t *testing.T) *notifySocket {
	t.Helper()
	s := &notifySocket{path: filepath.Join(t.TempDir(), "notify.sock")}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: s.path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	s.conn = conn
	t.Cleanup(func() { conn.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, _, err := conn.ReadFromUnix(buf)
			if err != nil {
				return
			}
			s.mu.Lock()
			s.msgs = append(s.msgs, string(buf[:n]))
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *notifySocket) messages() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

func (s *notifySocket) count(msg string) int {
	n := 0
	for _, m := range s.messages() {
		if m == msg {
			n++
		}
	}
	return n
}

// waitFor waits until cond holds for the messages received.
func (s *notifySocket) waitFor(t *testing.T, what string, out *syncbuf.Buffer, cond func([]string) bool) {
	t.Helper()
	if !testenv.Until(30*time.Second, func() bool { return cond(s.messages()) }) {
		t.Fatalf("no %s; notifications %q\nlogtally's output:\n%s", what, s.messages(), out)
	}
}

// startNotified runs logtally with MongoDB unreachable under a fake
// systemd: NOTIFY_SOCKET and a 2 s watchdog. withBuffer leaves a buffer from
// an earlier run in the state dir, so that the start does not wait for
// MongoDB.
func startNotified(t *testing.T, withBuffer bool) (*notifySocket, func() error, *syncbuf.Buffer) {
	t.Helper()
	conf := notifyConfig(t, deadMongo(t), "logtally", "1s")
	if withBuffer {
		earlierBuffer(t, filepath.Join(filepath.Dir(conf), "state"))
	}
	return runNotified(t, conf)
}

// notifyConfig writes a log of 20 hits and a config for it with fast
// timings, and returns the config's path.
func notifyConfig(t *testing.T, uri, database, shutdown string) string {
	t.Helper()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	var b []byte
	for i := range 20 {
		b = fmt.Appendf(b, "10.0.0.1 - - [01/Feb/2026:10:00:%02d +0000] \"GET /p%d HTTP/1.1\" 200 10 \"-\" \"t\"\n", i, i%3)
	}
	os.WriteFile(logPath, b, 0o644)
	return fastConfig(t, dir, uri, database, "s", logPath, shutdownTimeout(shutdown), func(c *config.Config) {
		c.Mongo.Timeout = config.Duration(500 * time.Millisecond)
	})
}

// runNotified starts logtally run with conf under a fake systemd and
// returns the socket, a function that stops it with SIGTERM and waits,
// and its output.
func runNotified(t *testing.T, conf string) (*notifySocket, func() error, *syncbuf.Buffer) {
	t.Helper()
	sock := listenNotify(t)
	out := &syncbuf.Buffer{}
	cmd := command("run", "-config", conf)
	cmd.Env = append(cmd.Env, "NOTIFY_SOCKET="+sock.path, "WATCHDOG_USEC=2000000")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	stop := func() error {
		cmd.Process.Signal(syscall.SIGTERM)
		return cmd.Wait()
	}
	return sock, stop, out
}

// Under systemd (Type=notify, WatchdogSec=): READY=1 once the pipeline is
// up, a status line, watchdog pings every second while it makes progress
// (MongoDB being down is no lack of progress), STOPPING=1 at SIGTERM.
func TestNotifyReadyStatusWatchdogStopping(t *testing.T) {
	sock, stop, out := startNotified(t, true)
	sock.waitFor(t, "READY=1 and two watchdog pings", out, func(m []string) bool {
		return slices.Contains(m, "READY=1") && sock.count("WATCHDOG=1") >= 2
	})
	msgs := sock.messages()
	ready := slices.Index(msgs, "READY=1")
	if i := slices.IndexFunc(msgs, func(m string) bool { return strings.HasPrefix(m, "STATUS=starting") }); i < 0 || i > ready {
		t.Errorf("no STATUS=starting… before READY=1: %q", msgs)
	}
	if !slices.ContainsFunc(msgs[ready:], func(m string) bool { return strings.HasPrefix(m, "STATUS=reading 1 sources; ") }) {
		t.Errorf("no status line after READY=1: %q", msgs)
	}
	if first := slices.Index(msgs, "WATCHDOG=1"); first < ready {
		t.Errorf("watchdog ping before READY=1: %q", msgs)
	}
	if slices.Contains(msgs, "STOPPING=1") {
		t.Fatalf("STOPPING=1 before the signal: %q", msgs)
	}
	if err := stop(); err != nil {
		t.Fatalf("exit after SIGTERM: %v (want 0)\n%s", err, out)
	}
	msgs = sock.messages()
	if !slices.Contains(msgs, "STOPPING=1") {
		t.Fatalf("no STOPPING=1 after SIGTERM: %q", msgs)
	}
	if strings.Contains(out.String(), "sd_notify failed") || strings.Contains(out.String(), "ping withheld") {
		t.Errorf("notification trouble logged:\n%s", out)
	}
	t.Logf("notifications: %q", msgs)
}

// A start without buffer.db waits for MongoDB's progress record: no
// READY=1 (and no pings) until the pipeline is up; SIGTERM still sends
// STOPPING=1 and ends the wait.
func TestNotifyNoReadyWhileWaitingForMongo(t *testing.T) {
	sock, stop, out := startNotified(t, false)
	sock.waitFor(t, "STATUS=starting…", out, func(m []string) bool {
		return slices.ContainsFunc(m, func(m string) bool { return strings.HasPrefix(m, "STATUS=starting") })
	})
	if !testenv.Until(30*time.Second, func() bool { return strings.Contains(out.String(), "waiting for MongoDB") }) {
		t.Fatalf("not waiting for MongoDB:\n%s", out)
	}
	// More than a watchdog interval: a daemon that were ready would have
	// pinged twice by now. Time is the point: what must not come is the
	// pings a watchdog interval brings.
	time.Sleep(2500 * time.Millisecond)
	if err := stop(); err != nil {
		var ee interface{ ExitCode() int }
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		t.Fatalf("exit %d after SIGTERM while waiting for MongoDB (want 0)\n%s", ee.ExitCode(), out)
	}
	msgs := sock.messages()
	if slices.Contains(msgs, "READY=1") || slices.Contains(msgs, "WATCHDOG=1") {
		t.Errorf("READY=1 or a ping while waiting for MongoDB: %q", msgs)
	}
	if !slices.Contains(msgs, "STOPPING=1") {
		t.Errorf("no STOPPING=1 after SIGTERM: %q", msgs)
	}
}

// With MongoDB up, the status line says how far the counts in MongoDB
// reach: a second run's first line shows the first run's last batch.
func TestNotifyStatusShowsWrittenBatches(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	conf := notifyConfig(t, srv.URI(), db.Name(), "10s")
	sock, stop, out := runNotified(t, conf)
	sock.waitFor(t, "READY=1", out, func(m []string) bool { return slices.Contains(m, "READY=1") })
	// The first run's batch is in MongoDB before it stops (a loaded
	// machine may not have read the log yet when READY=1 comes).
	waitHits(t, db, 20, out)
	if err := stop(); err != nil {
		t.Fatalf("first run: exit after SIGTERM: %v\n%s", err, out)
	}
	sock, stop, out = runNotified(t, conf)
	status := func(m []string) string {
		i := slices.IndexFunc(m, func(m string) bool { return strings.HasPrefix(m, "STATUS=reading") })
		if i < 0 {
			return ""
		}
		return m[i]
	}
	sock.waitFor(t, "status line", out, func(m []string) bool { return status(m) != "" })
	line := status(sock.messages())
	if !strings.Contains(line, "; pending 0 keys / 0 hits;") || !strings.Contains(line, "; in MongoDB up to 20") {
		t.Errorf("second run's status line %q: want nothing pending and the first run's last batch", line)
	}
	if err := stop(); err != nil {
		t.Fatalf("second run: exit after SIGTERM: %v\n%s", err, out)
	}
	t.Log(line)
}
