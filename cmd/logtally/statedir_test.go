package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/observe"
)

// appendLines appends n combined-format GET lines to path, numbered from
// *next, over crashPages and crashSpan seconds of crashBase.
func appendLines(t *testing.T, path string, next *int, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b []byte
	for range n {
		*next++
		ts := crashBase.Add(time.Duration(*next*7%crashSpan) * time.Second)
		b = fmt.Appendf(b, "10.1.%d.%d - - [%s] \"GET %s?n=%d HTTP/1.1\" 200 512 \"-\" \"statedir-test\"\n",
			*next/250, *next%250, ts.Format("02/Jan/2006:15:04:05 -0700"), crashPages[*next%len(crashPages)], *next)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// exitWithin waits for cmd and returns its exit code.
func exitWithin(t *testing.T, cmd *exec.Cmd, d time.Duration, out *syncbuf.Buffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(d):
		t.Fatalf("logtally still running after %v:\n%s", d, out)
		return -1
	}
}

// TestBufferDeletedWhileRunning deletes (or replaces) buffer.db under a
// running logtally while MongoDB is unreachable, so the file holds counts
// nowhere else. logtally must notice, log an ERROR, put the file back from
// its open handle and exit non-zero; the restart must then count every
// line exactly once.
func TestBufferDeletedWhileRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	for _, replace := range []bool{false, true} {
		name := map[bool]string{false: "deleted", true: "replaced"}[replace]
		t.Run(name, func(t *testing.T) { bufferGoneWhileRunning(t, replace) })
	}
}

func bufferGoneWhileRunning(t *testing.T, replace bool) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	addr := testenv.FreeAddr(t)
	conf := fastConfig(t, dir, srv.URI(), db.Name(), "statedir.test", logPath, listen(addr), shutdownTimeout("2s"))
	bufPath := filepath.Join(dir, "state", "buffer.db")

	next := 0
	appendLines(t, logPath, &next, 300)
	cmd, out := daemon(t, conf)
	waitHits(t, db, 300, out)

	// MongoDB down: what is read from now on is only in buffer.db.
	srv.Stop()
	appendLines(t, logPath, &next, 200)
	waitLog(t, out, "flush failed", 30*time.Second) // a batch of the new lines was sealed
	waitStatus(t, addr, "the rest committed", out, func(r observe.StatusReport) bool { return r.Sources[0].LagBytes == 0 })

	if replace {
		other := filepath.Join(dir, "state", "restored-from-backup")
		if err := os.WriteFile(other, []byte("an old copy"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(other, bufPath); err != nil {
			t.Fatal(err)
		}
	} else if err := os.Remove(bufPath); err != nil {
		t.Fatal(err)
	}
	code := exitWithin(t, cmd, 30*time.Second, out)
	text := out.String()
	t.Logf("logtally after buffer.db was %s: exit %d\n%s", map[bool]string{false: "deleted", true: "replaced"}[replace], code, grepLines(text, "level=ERROR", "logtally:"))
	if code == 0 {
		t.Errorf("exit 0 after buffer.db was gone; want non-zero")
	}
	if !strings.Contains(text, "level=ERROR") || !strings.Contains(text, "buffer file deleted or replaced while running") ||
		!strings.Contains(text, "path="+bufPath) {
		t.Errorf("no ERROR naming the buffer file:\n%s", text)
	}
	if _, err := os.Stat(bufPath); err != nil {
		t.Fatalf("buffer.db not restored: %v\n%s", err, text)
	}
	if replace {
		aside, _ := filepath.Glob(bufPath + ".replaced-*")
		if len(aside) != 1 {
			t.Errorf("the file put at the path was not kept aside: %v", aside)
		} else if b, _ := os.ReadFile(aside[0]); string(b) != "an old copy" {
			t.Errorf("%s holds %q", aside[0], b)
		}
	}

	// MongoDB back, more lines, restart: everything counts once.
	srv.Resume()
	appendLines(t, logPath, &next, 100)
	cmd, out = daemon(t, conf)
	want := bucketcheck.CountFiles(t, logPath, "statedir.test")
	waitHits(t, db, want.Hits, out)
	settle(t, addr, out) // a duplicate would arrive now
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitWithin(t, cmd, 30*time.Second, out); code != 0 {
		t.Errorf("restart: exit %d after SIGTERM, want 0:\n%s", code, out)
	}
	if strings.Contains(out.String(), "no buffer file") {
		t.Errorf("the restart rebuilt the state instead of resuming from the restored buffer:\n%s", out)
	}
	res := bucketcheck.CompareAll(t, want, bucketcheck.Read(t, db))
	t.Logf("%d hits: %v", want.Hits, res)
	if !res.Exact() {
		t.Errorf("not exact after buffer.db was restored: %v", res)
	}
}

// grepLines returns the lines of text containing any of subs.
func grepLines(text string, subs ...string) string {
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		for _, s := range subs {
			if strings.Contains(l, s) {
				b.WriteString(l + "\n")
				break
			}
		}
	}
	return b.String()
}
