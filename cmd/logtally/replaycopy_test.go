package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// Issue 16, item 1: a followed file and its copies are one stream. The
// copies here are not in truth/: every bucket must hold exactly the live
// file's hits.

// gzipTo writes data gzipped at path.
func gzipTo(t *testing.T, path string, data []byte) {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(data)
	w.Close()
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// appendTo appends data to path.
func appendTo(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
}

// Beside the running daemon, a gzipped copy of the file it follows (under
// another name and inode), and a longer copy, are refused naming the
// followed file; the daemon alone counts the file.
func TestReplayCopyOfFollowedFileRefusedBesideDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	os.WriteFile(e.live, lines(0, 1000), 0o644)
	d, out := daemon(t, e.conf)
	e.waitHits(1000, out)

	plainCopy := filepath.Join(e.arch, "a.copy")
	os.WriteFile(plainCopy, lines(0, 1000), 0o644)
	gz := filepath.Join(e.arch, "a.copy.gz")
	gzipTo(t, gz, lines(0, 1000))
	longer := filepath.Join(e.arch, "longer.copy.gz") // the head matches, it has more
	gzipTo(t, longer, lines(0, 1300))
	for _, f := range []string{gz, plainCopy, longer} {
		rout, stderr, code := runCmd(t, "replay", "-config", e.conf, "-site", replaySite, "-format", "combined", f)
		if code == 0 || !strings.Contains(stderr, "this logtally follows it (as "+e.live) {
			t.Errorf("replay of %s, a copy of the followed file: exit %d\n%s\n%s", filepath.Base(f), code, rout, stderr)
		}
	}
	// The followed file grows to what the longer copy holds, and on: the
	// tailer counts it once.
	appendTo(t, e.live, lines(1000, 400))
	e.waitHits(1400, out)
	e.settle(e.conf, out) // a double count would show now
	d.Process.Signal(syscall.SIGTERM)
	if err := d.Wait(); err != nil {
		t.Fatalf("daemon: %v\n%s", err, out)
	}
	e.check("copies of the followed file replayed beside the daemon", e.live)
}

// With the daemon stopped: 1,000 lines counted, 500 appended (and half a
// line being written), a gzipped copy replayed counts the 500 (not the half
// line); the daemon, started again, resumes where the replay left the
// stream, not at its own checkpoint, and counts the rest once.
func TestReplayCopyWithDaemonStoppedThenDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	os.WriteFile(e.live, lines(0, 1000), 0o644)
	d, out := daemon(t, e.conf)
	e.waitHits(1000, out)
	d.Process.Signal(syscall.SIGTERM)
	if err := d.Wait(); err != nil {
		t.Fatalf("daemon: %v\n%s", err, out)
	}

	next := lines(1500, 101)
	half := bytes.IndexByte(next, '"') // up to the request: no hit yet
	appendTo(t, e.live, append(lines(1000, 500), next[:half]...))
	all, _ := os.ReadFile(e.live)
	copyGz := filepath.Join(e.arch, "a.copy.gz")
	gzipTo(t, copyGz, all)
	rout := e.replay(e.conf, "-site", replaySite, "-format", "combined", copyGz)
	wantStatus(t, rout, "resumed", 1)
	if !strings.Contains(rout, "lines: 500,") {
		t.Errorf("the copy of a file counted to line 1000 of 1500 (and half a line):\n%s", rout)
	}
	e.check("copy replayed with the daemon stopped", e.live) // the half line has no hit yet

	appendTo(t, e.live, next[half:])
	d, out = daemon(t, e.conf)
	e.waitHits(1601, out)
	e.settle(e.conf, out) // a double count would show now
	d.Process.Signal(syscall.SIGTERM)
	if err := d.Wait(); err != nil {
		t.Fatalf("daemon: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "checkpoint behind the ledger") {
		t.Errorf("the daemon did not say it resumed past its checkpoint:\n%s", out)
	}
	e.check("daemon after the replay of a copy of its file", e.live)
}
