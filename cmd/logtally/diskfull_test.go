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
	"github.com/logtally/logtally/internal/testenv"
)

// mountTmpfs mounts a tmpfs of size at dir (which it creates), or skips
// the test saying why. It is unmounted at cleanup.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("disk-full test skipped: mounting a small tmpfs needs root")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("disk-full test skipped: mount -t tmpfs -o size=%s tmpfs %s: %v: %s", size, dir, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v: %s; unmounting lazily", dir, err, out)
			if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
				t.Errorf("umount -l %s: %v: %s", dir, err, out)
			}
		}
	})
}

// fillDisk writes path until the file system is full and returns the
// bytes written.
func fillDisk(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	var n int64
	for {
		w, err := f.Write(block)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// diskLines appends n lines to path, numbered from *next: three pages over
// diskSpan seconds, so that the buffer's keys (site, page, second) keep
// growing while MongoDB's buckets stay few (3 pages x 30 minutes).
func diskLines(path string, next *int, n int) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	const diskSpan = 30 * 60
	var b []byte
	for range n {
		*next++
		ts := crashBase.Add(time.Duration(*next*7%diskSpan) * time.Second)
		b = fmt.Appendf(b, "10.2.%d.%d - - [%s] \"GET %s?n=%d HTTP/1.1\" 200 512 \"-\" \"diskfull-test\"\n",
			*next/250%250, *next%250, ts.Format("02/Jan/2006:15:04:05 -0700"), crashPages[*next%len(crashPages)], *next)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// waitExit waits for cmd in the background and sends its exit code (-1 if
// it did not exit normally).
func waitExit(cmd *exec.Cmd) <-chan int {
	exited := make(chan int, 1)
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			exited <- ee.ExitCode()
		case err != nil:
			exited <- -1
		default:
			exited <- 0
		}
	}()
	return exited
}

// TestDiskFull puts state_dir on a 4 MiB tmpfs, cuts MongoDB off and fills
// the file system while lines keep coming, so the buffer cannot grow. The
// daemon must stay up: reading paused, the commit retried, /healthz and
// /status saying why, logtally_state_dir_full at 1, one ERROR. Then the
// space is freed and MongoDB brought back, with no restart, and every
// bucket is compared with the log files.
func TestDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	mountTmpfs(t, state, "4m")
	srv := mongotest.Start(t)
	db := srv.Database(t)
	logPath := filepath.Join(dir, "access.log")
	addr := testenv.FreeAddr(t)
	conf := fastConfig(t, dir, srv.URI(), db.Name(), "diskfull.test", logPath, listen(addr), shutdownTimeout("2s"))

	next := 0
	if err := diskLines(logPath, &next, 200); err != nil {
		t.Fatal(err)
	}
	cmd, out := daemon(t, conf)
	waitHits(t, db, 200, out)
	srv.Stop() // MongoDB cut off: everything read from now on stays in buffer.db

	filler := filepath.Join(state, "filler")
	t.Logf("state_dir full: filler of %d KiB", fillDisk(t, filler)>>10)

	// Lines keep coming until /healthz reports the full state dir, and
	// 3 s more (retries at the backoff's pace).
	exited := waitExit(cmd)
	stopWriting := make(chan struct{})
	writing := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stopWriting:
				writing <- nil
				return
			case <-time.After(10 * time.Millisecond):
			}
			if err := diskLines(logPath, &next, 20); err != nil {
				writing <- err
				return
			}
		}
	}()
	var health string
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case code := <-exited:
			close(stopWriting)
			t.Fatalf("logtally exited %d on a full state dir; want it running, reading paused:\n%s",
				code, grepLines(out.String(), "level=WARN", "level=ERROR", "logtally:"))
		case <-time.After(100 * time.Millisecond):
		}
		code, body := testenv.Get(addr, "/healthz")
		if code == 503 && strings.Contains(body, "state dir full: commit failing since ") {
			health = body
			break
		}
		if time.Now().After(deadline) {
			close(stopWriting)
			t.Fatalf("/healthz never reported the full state dir: %d %s\n%s", code, body, out)
		}
	}
	select {
	case code := <-exited:
		t.Fatalf("logtally exited %d on a full state dir:\n%s", code, out)
	case <-time.After(3 * time.Second):
	}
	close(stopWriting)
	if err := <-writing; err != nil {
		t.Fatal(err)
	}
	t.Logf("/healthz on a full state dir: %s", strings.TrimSpace(health))
	if !strings.Contains(health, "no space left on device") {
		t.Errorf("/healthz does not give the commit's error: %s", health)
	}
	if _, status := testenv.Get(addr, "/status"); !strings.Contains(status, `"health": "state dir full: commit failing since `) {
		t.Errorf("/status does not report the full state dir:\n%s", status)
	}
	if _, metrics := testenv.Get(addr, "/metrics"); !strings.Contains(metrics, "\nlogtally_state_dir_full 1\n") {
		t.Errorf("/metrics: no logtally_state_dir_full 1:\n%s", grepLines(metrics, "state_dir"))
	}
	text := out.String()
	t.Logf("disk full: %d lines written; its warnings and errors:\n%s", next,
		grepLines(text, "level=WARN", "level=ERROR", "logtally:"))
	if strings.Contains(text, "panic") || strings.Contains(text, "goroutine ") || strings.Contains(text, "SIGBUS") {
		t.Fatalf("a Go crash on a full disk:\n%s", text)
	}
	if n := strings.Count(text, `level=ERROR msg="state dir full`); n != 1 {
		t.Errorf("%d ERROR lines for the full state dir, want 1 (then rate-limited):\n%s", n, grepLines(text, "level=ERROR"))
	}
	if !strings.Contains(text, "no space left on device") {
		t.Errorf("the full disk was never reported:\n%s", text)
	}

	// Space and MongoDB back, no restart: reading resumes and every line
	// is counted once.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	srv.Resume()
	if err := diskLines(logPath, &next, 100); err != nil {
		t.Fatal(err)
	}
	want := bucketcheck.CountFiles(t, logPath, "diskfull.test")
	waitHits(t, db, want.Hits, out)
	if code, body := testenv.Get(addr, "/healthz"); code != 200 {
		t.Errorf("/healthz after space was freed: %d %s", code, body)
	}
	if _, metrics := testenv.Get(addr, "/metrics"); !strings.Contains(metrics, "\nlogtally_state_dir_full 0\n") {
		t.Errorf("/metrics after space was freed: no logtally_state_dir_full 0:\n%s", grepLines(metrics, "state_dir"))
	}
	if !strings.Contains(out.String(), "state dir has space again") {
		t.Errorf("the resumption was not logged:\n%s", grepLines(out.String(), "level=INFO", "level=WARN", "level=ERROR"))
	}
	settle(t, addr, out) // a duplicate would arrive now
	cmd.Process.Signal(syscall.SIGTERM)
	if c := <-exited; c != 0 {
		t.Errorf("exit %d after SIGTERM, want 0:\n%s", c, out)
	}
	res := bucketcheck.CompareAll(t, want, bucketcheck.Read(t, db))
	t.Logf("%d hits: %v", want.Hits, res)
	if !res.Exact() {
		t.Errorf("not exact after a full disk: %v", res)
	}
}
