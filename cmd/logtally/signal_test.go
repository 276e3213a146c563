package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
)

// deadMongo returns a mongodb:// URI on which nothing listens.
func deadMongo(t *testing.T) string {
	return "mongodb://" + testenv.FreeAddr(t) + "/"
}

// startWithDeadMongo runs logtally on a small log with MongoDB unreachable
// and waits until it has committed the log's hits to its buffer.
func startWithDeadMongo(t *testing.T, shutdown string) (*exec.Cmd, *syncbuf.Buffer, string) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	var b []byte
	for i := 0; i < 20; i++ {
		b = fmt.Appendf(b, "10.0.0.1 - - [01/Feb/2026:10:00:%02d +0000] \"GET /p%d HTTP/1.1\" 200 10 \"-\" \"t\"\n", i, i%3)
	}
	os.WriteFile(logPath, b, 0o644)
	conf := fastConfig(t, dir, deadMongo(t), config.DefaultDatabase, "s", logPath, shutdownTimeout(shutdown), func(c *config.Config) {
		c.Mongo.Timeout = config.Duration(500 * time.Millisecond)
	})
	earlierBuffer(t, filepath.Join(dir, "state"))
	cmd, out := daemon(t, conf)
	// Wait for the flusher's first failed attempt (half a second of
	// mongo.timeout), by which time the hits are long committed.
	if !testenv.Until(20*time.Second, func() bool { return strings.Contains(out.String(), " failed") }) {
		t.Fatalf("no failed flush logged:\n%s", out.String())
	}
	return cmd, out, filepath.Join(dir, "state", "buffer.db")
}

// SIGTERM with MongoDB down: the final flush gives up after
// shutdown_timeout, logtally exits 0 and the hits stay in the buffer.
func TestSigtermWithMongoDownKeepsBuffer(t *testing.T) {
	cmd, out, bufPath := startWithDeadMongo(t, "1s")
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("exit after SIGTERM: %v (want 0)\n%s", err, out)
	}
	if took > 15*time.Second {
		t.Fatalf("SIGTERM took %v with shutdown_timeout 1s", took)
	}
	if !strings.Contains(out.String(), "shutdown flush incomplete") {
		t.Errorf("no incomplete-flush warning:\n%s", out)
	}
	// The warning counts the sealed batch in flight too.
	if !strings.Contains(out.String(), "pending_hits=20") {
		t.Errorf("the incomplete-flush warning does not count all 20 pending hits:\n%s", out)
	}
	b := testenv.OpenBuffer(t, bufPath, buffer.Options{})
	_, pending := b.Pending()
	var sealed uint64
	var s *buffer.Batch
	b.View(func(tx *buffer.ReadTx) error { s = tx.Sealed(); return nil })
	if s != nil {
		sealed = s.Hits
	}
	if pending+sealed != 20 {
		t.Fatalf("buffer holds %d pending + %d sealed hits, want all 20", pending, sealed)
	}
}

// A second signal exits at once, without waiting for the final flush.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	cmd, out, _ := startWithDeadMongo(t, "5m")
	cmd.Process.Signal(syscall.SIGTERM)
	if !testenv.Until(10*time.Second, func() bool { return strings.Contains(out.String(), "stopping") }) {
		t.Fatalf("first signal not seen:\n%s", out)
	}
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("after the second signal: %v, want exit 1\n%s", err, out)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("second signal took %v to exit", took)
	}
}

// SIGHUP reloads the config also while MongoDB is down (the pending counts
// stay in the buffer for the reloaded pipeline): the daemon keeps running
// and a later SIGTERM stops it cleanly.
func TestSighupReloadsWithMongoDown(t *testing.T) {
	cmd, out, _ := startWithDeadMongo(t, "1s")
	cmd.Process.Signal(syscall.SIGHUP)
	if !testenv.Until(10*time.Second, func() bool { return strings.Contains(out.String(), "msg=reloaded") }) {
		t.Fatalf("SIGHUP did not reload:\n%s", out)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("logtally died after SIGHUP: %v\n%s", err, out)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGHUP then SIGTERM: %v (want 0)\n%s", err, out)
	}
}

// `logtally run` uses one core by default (max_procs) and says so.
func TestRunUsesOneCoreByDefault(t *testing.T) {
	cmd, out, _ := startWithDeadMongo(t, "1s")
	if !strings.Contains(out.String(), `msg="logtally running"`) || !strings.Contains(out.String(), " procs=1") {
		t.Errorf("the start is not logged with procs=1:\n%s", out.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
}
