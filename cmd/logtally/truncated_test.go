package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
)

// TestBufferTruncatedWhileRunning: buffer.db truncated in place while the
// daemon commits and flushes (to its two meta pages, or to nothing) stops
// it with an ERROR naming the file and both sizes, never a Go crash
// (bbolt reading a page past the end through its map is a SIGBUS); the
// restart moves the file aside and rebuilds it from MongoDB's record, and
// every bucket equals the files.
func TestBufferTruncatedWhileRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	for _, tc := range []struct {
		name string
		size int64
	}{
		{"to its meta pages", 2 * 4096},
		{"to zero", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mongotest.Start(t)
			db := srv.Database(t)
			dir := t.TempDir()
			logPath := filepath.Join(dir, "access.log")
			addr := testenv.FreeAddr(t)
			conf := fastConfig(t, dir, srv.URI(), db.Name(), "truncated.test", logPath, listen(addr))
			appendCombined(t, logPath, 0, 90)
			bufPath := filepath.Join(dir, "state", "buffer.db")

			d, out := daemon(t, conf)
			waitHits(t, db, 90, out)
			exited := waitExit(d)
			// Lines keep coming, so that commits and flushes are under
			// way when the file is cut.
			next := 90
			stop := make(chan struct{})
			writing := make(chan struct{})
			go func() {
				defer close(writing)
				for {
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
					appendCombined(t, logPath, next, 2)
					next += 2
				}
			}()
			waitHits(t, db, 92, out) // the writer's first lines committed and flushed
			if err := os.Truncate(bufPath, tc.size); err != nil {
				t.Fatal(err)
			}
			var code int
			select {
			case code = <-exited:
			case <-time.After(30 * time.Second):
				close(stop)
				<-writing
				t.Fatalf("logtally still running 30 s after buffer.db was truncated:\n%s", out)
			}
			close(stop)
			<-writing
			text := out.String()
			if strings.Contains(text, "goroutine ") || strings.Contains(text, "panic") || strings.Contains(text, "SIGBUS") {
				t.Fatalf("a Go crash reached the operator:\n%s", text)
			}
			if code == 0 {
				t.Errorf("exit 0 after buffer.db was truncated, want an error:\n%s", text)
			}
			// The size it names is the file's when the watch looked: a
			// commit between the truncation and that look may have written
			// a page past the cut, but never the whole file back.
			m := regexp.MustCompile(regexp.QuoteMeta(bufPath) + ` is (\d+) bytes, but bbolt uses (\d+) bytes`).FindStringSubmatch(text)
			if !strings.Contains(text, `level=ERROR msg="buffer file truncated while running`) || m == nil ||
				atoi64(m[1]) < tc.size || atoi64(m[1]) >= atoi64(m[2]) {
				t.Errorf("no ERROR naming the truncated file and its sizes (cut to %d):\n%s", tc.size, grepLines(text, "level=ERROR", "logtally:"))
			}
			t.Logf("exit %d; errors:\n%s", code, grepLines(text, "level=ERROR", "logtally:"))

			// The restart: the file is moved aside, the state rebuilt, and
			// every line counted once.
			appendCombined(t, logPath, next, 10)
			next += 10
			d, out = daemon(t, conf)
			want := bucketcheck.CountFiles(t, logPath, "truncated.test")
			waitHits(t, db, want.Hits, out)
			settle(t, addr, out) // a double count would show now
			d.Process.Signal(syscall.SIGTERM)
			if c := exitWithin(t, d, 30*time.Second, out); c != 0 {
				t.Errorf("restart: exit %d after SIGTERM:\n%s", c, out)
			}
			if !strings.Contains(out.String(), `level=ERROR msg="buffer file is corrupt: moved aside`) {
				t.Errorf("the restart did not move the truncated file aside:\n%s", out)
			}
			res := bucketcheck.CompareAll(t, want, bucketcheck.Read(t, db))
			t.Logf("%d hits: %v", want.Hits, res)
			if !res.Exact() {
				t.Errorf("not exact after the restart: %v", res)
			}
		})
	}
}

func atoi64(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
