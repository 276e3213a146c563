package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/internal/testenv/testconfig"
)

// Issue 16, items 3, 4 and 5, end to end: the real binary against the wire
// server, every minute, daily and monthly bucket compared with the lines
// written (kept apart in truth/, since the live files lose lines on
// purpose here).

// waitHits waits until MongoDB's monthly total reaches n (waitHits).
func (e *replayEnv) waitHits(n int64, out fmt.Stringer) {
	e.t.Helper()
	waitHits(e.t, e.db, n, out)
}

// stopDaemon stops a daemon with SIGTERM and waits for it.
func stopDaemon(t *testing.T, d interface{ Wait() error }, p *os.Process, out fmt.Stringer) {
	t.Helper()
	p.Signal(syscall.SIGTERM)
	if err := d.Wait(); err != nil {
		t.Fatalf("daemon: %v\n%s", err, out)
	}
}

// appendTo appends data to path and to the truth file.
func (e *replayEnv) appendTo(path string, data []byte) {
	e.t.Helper()
	for _, p := range []string{path, filepath.Join(e.truth, "written.log")} {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			e.t.Fatal(err)
		}
		f.Close()
	}
}

// Item 3: a log shrunk in place (its head unchanged, no copy) is not read
// again from 0: 1,000 lines counted, cut to its first 500, 200 appended:
// 1,200 hits, not 1,700. Then the same while the daemon is stopped.
func TestShrunkInPlaceCountsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	e.appendTo(e.live, lines(0, 1000))
	d, out := daemon(t, e.conf)
	e.waitHits(1000, out)
	if err := os.Truncate(e.live, int64(len(lines(0, 500)))); err != nil {
		t.Fatal(err)
	}
	waitLog(t, out, "file shrank in place", 30*time.Second)
	e.appendTo(e.live, lines(1000, 200))
	e.waitHits(1200, out)
	e.settle(e.conf, out) // a double count would show now
	stopDaemon(t, d, d.Process, out)
	e.check("shrunk while running", filepath.Join(e.truth, "*"))

	// Stopped: the file (500 + 200 lines) cut to its first 300 lines.
	if err := os.Truncate(e.live, int64(len(lines(0, 300)))); err != nil {
		t.Fatal(err)
	}
	d, out = daemon(t, e.conf)
	waitLog(t, out, "file shrank in place while logtally was down", 30*time.Second)
	e.appendTo(e.live, lines(1200, 100))
	e.waitHits(1300, out)
	e.settle(e.conf, out) // a double count would show now
	stopDaemon(t, d, d.Process, out)
	if strings.Contains(out.String(), "GET /page") {
		t.Errorf("line contents in the log:\n%s", out)
	}
	e.check("shrunk while stopped", filepath.Join(e.truth, "*"))
}

// Item 4: logrotate's olddir. With `rotated` naming old/, a file renamed
// into old/ while the daemon is stopped is read from its checkpoint, and a
// copytruncate copy in old/ is adopted: every bucket exact.
func TestRotatedIntoOldDir(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	old := filepath.Join(filepath.Dir(e.live), "old")
	os.Mkdir(old, 0o755)
	testconfig.Edit(t, e.conf, func(c *config.Config) { c.Sources[0].Rotated = []string{filepath.Join(old, "access.log*")} })

	// Rename into old/ while stopped.
	e.appendTo(e.live, lines(0, 1000))
	d, out := daemon(t, e.conf)
	e.waitHits(1000, out)
	stopDaemon(t, d, d.Process, out)
	e.appendTo(e.live, lines(1000, 500))
	if err := os.Rename(e.live, filepath.Join(old, "access.log.1")); err != nil {
		t.Fatal(err)
	}
	e.appendTo(e.live, lines(1500, 200))
	d, out = daemon(t, e.conf)
	e.waitHits(1700, out)
	e.settle(e.conf, out) // a double count would show now
	e.check("renamed into old/ while stopped", filepath.Join(e.truth, "*"))

	// copytruncate into old/ while running: the lines written since the
	// last poll are only in the copy.
	os.Remove(filepath.Join(old, "access.log.1"))
	e.appendTo(e.live, lines(1700, 300))
	data, err := os.ReadFile(e.live)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "access.log.1"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(e.live, 0); err != nil {
		t.Fatal(err)
	}
	e.appendTo(e.live, lines(2000, 100))
	e.waitHits(2100, out)
	e.settle(e.conf, out) // a double count would show now
	stopDaemon(t, d, d.Process, out)
	if strings.Contains(out.String(), "level=ERROR") {
		t.Errorf("an ERROR with rotated set:\n%s", out)
	}
	e.check("copytruncate into old/", filepath.Join(e.truth, "*"))
}

// Item 4 without `rotated`: the renamed file is not found; that is an
// ERROR naming the file and the offset with the replay command, and
// logtally_lost_files_total; the replay command completes the count.
func TestLostRotatedFileReported(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	addr := e.addrs[e.conf]

	e.appendTo(e.live, lines(0, 1000))
	d, out := daemon(t, e.conf)
	e.waitHits(1000, out)
	stopDaemon(t, d, d.Process, out)
	e.appendTo(e.live, lines(1000, 500))
	old := filepath.Join(filepath.Dir(e.live), "old")
	os.Mkdir(old, 0o755)
	rotated := filepath.Join(old, "access.log.1")
	if err := os.Rename(e.live, rotated); err != nil {
		t.Fatal(err)
	}
	e.appendTo(e.live, lines(1500, 200))
	d, out = daemon(t, e.conf)
	e.waitHits(1200, out)
	waitLog(t, out, "level=ERROR", 30*time.Second)
	var metrics string
	if !testenv.Until(20*time.Second, func() bool {
		_, metrics = testenv.Get(addr, "/metrics")
		return strings.Contains(metrics, `logtally_lost_files_total{source="`+replaySite+`"} 1`)
	}) {
		t.Fatalf("/metrics never counted the lost file:\n%s", metrics)
	}
	stopDaemon(t, d, d.Process, out)
	var errLine string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "level=ERROR") {
			errLine = l
		}
	}
	offset := len(lines(0, 1000))
	for _, w := range []string{"path=" + e.live, fmt.Sprintf("offset=%d", offset), "logtally replay -config CONFIG -source " + replaySite + " ROTATED-FILE"} {
		if !strings.Contains(errLine, w) {
			t.Errorf("the ERROR lacks %q: %s", w, errLine)
		}
	}
	if got := bucketcheck.Read(t, e.db).MonthTotal; got != 1200 {
		t.Fatalf("%d hits before the replay, want 1200 (the 500 lost)", got)
	}
	// The command the ERROR gives, with the rotated file.
	e.replay(e.conf, "-source", replaySite, rotated)
	e.check("after the replay the ERROR gave", filepath.Join(e.truth, "*"))
}

// Item 5: a symbolic link to a file outside the log directory is not read
// (its lines reach neither the buckets nor the log), a link inside the
// directory is; with follow_symlinks = true the outside one is read.
func TestSymlinkOutsideNotRead(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	logs := filepath.Dir(e.live)
	testconfig.Edit(t, e.conf, func(c *config.Config) { c.Sources[0].Paths = []string{filepath.Join(logs, "*.log")} })
	secretDir := filepath.Join(e.dir, "secret")
	os.Mkdir(secretDir, 0o700)
	secret := linesAt(5000, 40, time.Second)
	secret = []byte(strings.ReplaceAll(string(secret), "GET /page", "GET /secret"))
	os.WriteFile(filepath.Join(secretDir, "shadow"), secret, 0o600)
	os.Symlink(filepath.Join(secretDir, "shadow"), filepath.Join(logs, "evil.log"))
	e.appendTo(filepath.Join(logs, "inside.data"), lines(0, 300))
	os.Symlink(filepath.Join(logs, "inside.data"), filepath.Join(logs, "inside.log"))
	e.appendTo(e.live, lines(300, 200))

	d, out := daemon(t, e.conf)
	e.waitHits(500, out)
	waitLog(t, out, "not following a symbolic link", 30*time.Second)
	e.settle(e.conf, out) // the link's lines, were they read, would show now
	stopDaemon(t, d, d.Process, out)
	if l := out.String(); strings.Contains(l, "GET /secret") || !strings.Contains(l, "not following a symbolic link") {
		t.Errorf("log:\n%s", l)
	}
	e.check("outside link not read", filepath.Join(e.truth, "*"))

	testconfig.Edit(t, e.conf, func(c *config.Config) { c.Sources[0].FollowSymlinks = true })
	d, out = daemon(t, e.conf)
	e.waitHits(540, out)
	stopDaemon(t, d, d.Process, out)
	os.WriteFile(filepath.Join(e.truth, "secret.log"), secret, 0o644)
	e.check("follow_symlinks = true", filepath.Join(e.truth, "*"))
}
