package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/internal/testenv/testconfig"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/observe"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/stream"
)

// After a SIGKILL with MongoDB down, `logtally state` reads the buffer:
// the checkpoint of the log file (at its end) and the 20 pending hits.
func TestStateAfterKill(t *testing.T) {
	cmd, out, bufPath := startWithDeadMongo(t, "1s")
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	dir := filepath.Dir(filepath.Dir(bufPath))
	logPath := filepath.Join(dir, "access.log")
	fi, err := os.Stat(logPath)
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCmd(t, "state", "-config", filepath.Join(dir, "logtally.toml"))
	if code != 0 {
		t.Fatalf("state: exit %d\n%s%s\ndaemon:\n%s", code, stdout, stderr, out)
	}
	for _, want := range []string{
		"logtally is not running: state read from " + bufPath,
		"pending      20 keys, 20 hits not yet acknowledged",
		`source "s": lag 0 bytes`,
		fmt.Sprintf("offset %d  size %d  lag 0", fi.Size(), fi.Size()),
		"last acked   none",
		"buffer id    ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(logPath) + `  dev:ino \d+:\d+  offset `).MatchString(stdout) {
		t.Errorf("no checkpoint line for %s in\n%s", logPath, stdout)
	}
	// Whether the flusher sealed a batch before the kill is a matter of
	// timing; if it did, the batch holds every hit.
	if !strings.Contains(stdout, "in flight    none") &&
		!regexp.MustCompile(`in flight    batch [0-9a-f]+: 20 keys, 20 hits, sealed .* ago\), resume: start`).MatchString(stdout) {
		t.Errorf("batch in flight wrong in\n%s", stdout)
	}
	if testing.Verbose() {
		t.Logf("logtally state:\n%s", stdout)
	}
}

// stateDir makes a state dir whose buffer holds one checkpoint and a few
// pending hits, and a config for it; uri is the MongoDB URI, addr the
// [http] listen value.
func stateDir(t *testing.T, uri, addr string) (conf, bufPath, logPath string) {
	dir := t.TempDir()
	logPath = filepath.Join(dir, "access.log")
	os.WriteFile(logPath, []byte(strings.Repeat("x", 100)+"\n"), 0o644)
	bufPath = filepath.Join(dir, "state", "buffer.db")
	b := testenv.OpenBuffer(t, bufPath, buffer.Options{})
	var st syscall.Stat_t
	if err := syscall.Stat(logPath, &st); err != nil {
		t.Fatal(err)
	}
	cp := stream.Checkpoint{Source: "s", Path: logPath, File: stream.FileID{Dev: uint64(st.Dev), Ino: st.Ino}, Offset: 60}
	v, _ := cp.MarshalBinary()
	key := buffer.AppendKey(nil, []byte("s"), []byte("/p"), time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC).Unix())
	if err := b.Commit(buffer.Commit{Counts: buffer.CountsOf(map[string]measure.Vector{string(key): measure.OfViews(7)}), Checkpoints: map[string][]byte{cp.Key(): v}}); err != nil {
		t.Fatal(err)
	}
	b.Close()
	conf = fastConfig(t, dir, uri, config.DefaultDatabase, "s", logPath, instance("web-1"), listen(addr),
		testconfig.Sources(testconfig.Source("t", "/nonexistent/*.log")))
	return conf, bufPath, logPath
}

// The MongoDB password never shows in `logtally state`, whether it reads
// the buffer or a running daemon's /status.
func TestStateHidesPassword(t *testing.T) {
	const uri = "mongodb://user:s3cret@127.0.0.1:1/"
	conf, _, logPath := stateDir(t, uri, "")
	stdout, stderr, code := runCmd(t, "state", "-config", conf)
	if code != 0 || strings.Contains(stdout+stderr, "s3cret") || !strings.Contains(stdout, "mongodb://user:xxxxx@127.0.0.1:1/") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"instance     web-1",
		"pending      1 keys, 7 hits",
		"in flight    none",
		logPath + "  dev:ino ",
		"offset 60  size 101  lag 41",
		`source "s": lag 41 bytes`,
		"source \"t\": lag 0 bytes\n  no checkpoint yet",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
}

// statusOf serves a buffer held open by this process, as a running
// daemon's /status would.
type statusOf struct{ b *buffer.Buffer }

func (s statusOf) Stats() pipeline.Stats { return pipeline.Stats{} }
func (s statusOf) Alive(time.Time) error { return nil }
func (s statusOf) Status() (pipeline.Status, error) {
	st, err := pipeline.ReadStatus(s.b)
	st.Instance = "web-1"
	return st, err
}

// While the buffer is locked, `logtally state` prints the daemon's
// /status from [http] listen; with it empty, it says how to enable it.
func TestStateWhileRunning(t *testing.T) {
	const uri = "mongodb://user:s3cret@127.0.0.1:1/"
	conf, bufPath, logPath := stateDir(t, uri, "")
	held := testenv.OpenBuffer(t, bufPath, buffer.Options{})

	stdout, stderr, code := runCmd(t, "state", "-config", conf)
	if code != 1 || !strings.Contains(stderr, "logtally is running (it holds "+bufPath+") and [http] listen is empty") ||
		!strings.Contains(stderr, "set [http] listen") {
		t.Errorf("http disabled: exit %d\n%s%s", code, stdout, stderr)
	}

	srv, err := observe.New(observe.Config{Listen: "127.0.0.1:0", Source: statusOf{held}, Version: "v9", MongoURI: uri})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	addr := strings.TrimPrefix(hs.URL, "http://")
	testconfig.Edit(t, conf, listen(addr))
	stdout, stderr, code = runCmd(t, "state", "-config", conf)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"logtally v9 is running: state read from http://" + addr + "/status",
		"health       ok",
		"mongo        mongodb://user:xxxxx@127.0.0.1:1/",
		"instance     web-1",
		"pending      1 keys, 7 hits",
		logPath + "  dev:ino ",
		"offset 60  size 101  lag 41",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout+stderr, "s3cret") {
		t.Errorf("password shown:\n%s%s", stdout, stderr)
	}

	hs.Close() // the daemon's endpoint is gone
	_, stderr, code = runCmd(t, "state", "-config", conf)
	if code != 1 || !strings.Contains(stderr, "its status cannot be read") {
		t.Errorf("endpoint down: exit %d %s", code, stderr)
	}
}

func TestStateNoBuffer(t *testing.T) {
	conf, bufPath, _ := stateDir(t, "mongodb://127.0.0.1:1/", "")
	os.Remove(bufPath)
	stdout, stderr, code := runCmd(t, "state", "-config", conf)
	if code != 0 || !strings.Contains(stdout, "no buffer file at "+bufPath) {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(bufPath); err == nil {
		t.Error("state created the buffer file")
	}
}
