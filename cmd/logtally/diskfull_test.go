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
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
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
// the file system while lines keep coming, so the buffer cannot grow. It
// records what logtally does (exit or pause), then frees the space, brings
// MongoDB back, restarts logtally if it exited, and compares every bucket
// with the log files.
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
	conf := fastConfig(t, dir, srv.URI(), db.Name(), "diskfull.test", logPath)
	setShutdownTimeout(t, conf, "2s")

	next := 0
	if err := diskLines(logPath, &next, 200); err != nil {
		t.Fatal(err)
	}
	cmd, out := daemon(t, conf)
	waitTotal(t, db, 200, out)
	srv.Stop() // MongoDB cut off: everything read from now on stays in buffer.db

	filler := filepath.Join(state, "filler")
	t.Logf("state_dir full: filler of %d KiB", fillDisk(t, filler)>>10)

	// Lines keep coming until logtally stops, or for 20 s.
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
	code, stillRunning := 0, false
	select {
	case code = <-exited:
	case <-time.After(20 * time.Second):
		stillRunning = true
	}
	close(stopWriting)
	if err := <-writing; err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if stillRunning {
		t.Logf("disk full: logtally still running after 20 s of lines, %d lines written; its warnings and errors:\n%s",
			next, grepLines(text, "level=WARN", "level=ERROR", "logtally:"))
	} else {
		t.Logf("disk full: logtally exited %d after %d lines; its warnings and errors:\n%s",
			code, next, grepLines(text, "level=WARN", "level=ERROR", "logtally:"))
	}
	if strings.Contains(text, "panic") || strings.Contains(text, "goroutine ") || strings.Contains(text, "SIGBUS") {
		t.Fatalf("a Go crash on a full disk:\n%s", text)
	}
	if !strings.Contains(text, "no space left on device") {
		t.Errorf("the full disk was never reported:\n%s", text)
	}

	// If it exited, a restart (systemd's Restart=on-failure) on the disk
	// still full: it must fail cleanly too, or run.
	if !stillRunning {
		cmd, out = daemon(t, conf)
		select {
		case <-time.After(10 * time.Second):
			t.Logf("restart on the full disk: still running after 10 s; its warnings and errors:\n%s",
				grepLines(out.String(), "level=WARN", "level=ERROR", "logtally:"))
			cmd.Process.Signal(syscall.SIGTERM)
			exitWithin(t, cmd, 30*time.Second, out)
		case code := <-waitExit(cmd):
			t.Logf("restart on the full disk: exit %d; its warnings and errors:\n%s",
				code, grepLines(out.String(), "level=WARN", "level=ERROR", "logtally:"))
		}
		if text := out.String(); strings.Contains(text, "panic") || strings.Contains(text, "goroutine ") {
			t.Fatalf("a Go crash restarting on a full disk:\n%s", text)
		}
	}

	// Space and MongoDB back; restart if it exited.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	srv.Resume()
	if err := diskLines(logPath, &next, 100); err != nil {
		t.Fatal(err)
	}
	if !stillRunning {
		cmd, out = daemon(t, conf)
	}
	want := bucketcheck.CountFiles(t, logPath, "diskfull.test")
	waitTotal(t, db, want.Hits, out)
	time.Sleep(500 * time.Millisecond) // a duplicate would arrive now
	cmd.Process.Signal(syscall.SIGTERM)
	if stillRunning {
		if c := <-exited; c != 0 {
			t.Errorf("exit %d after SIGTERM, want 0:\n%s", c, out)
		}
	} else if c := exitWithin(t, cmd, 30*time.Second, out); c != 0 {
		t.Errorf("restart: exit %d after SIGTERM, want 0:\n%s", c, out)
	}
	res := bucketcheck.CompareAll(t, want, bucketcheck.Read(t, db))
	t.Logf("%d hits: %v", want.Hits, res)
	if !res.Exact() {
		t.Errorf("not exact after a full disk: %v", res)
	}
}
