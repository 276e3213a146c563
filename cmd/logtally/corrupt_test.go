package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
)

// appendCombined appends n combined lines (3 pages, one per second from
// from on) to path.
func appendCombined(t *testing.T, path string, from, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t0 := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	for i := from; i < from+n; i++ {
		fmt.Fprintf(f, "10.0.0.1 - - [%s] \"GET /p%d HTTP/1.1\" 200 10 \"-\" \"t\"\n",
			t0.Add(time.Duration(i)*time.Second).Format("02/Jan/2006:15:04:05 -0700"), i%3)
	}
}

// TestCorruptBufferRebuilt: a buffer.db truncated, or with its data pages
// overwritten, is moved aside with an ERROR naming it (never a Go crash),
// and the state is rebuilt from MongoDB's progress record: every bucket
// equals the files.
func TestCorruptBufferRebuilt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(t *testing.T, path string)
	}{
		{"truncated", func(t *testing.T, path string) {
			// Into the pages bbolt uses (at least 4 from the start: two
			// metas, the freelist, the root); the file is longer, extended
			// sparse to bbolt's 8 MiB map.
			if err := os.Truncate(path, 3*4096); err != nil {
				t.Fatal(err)
			}
		}},
		{"overwritten pages", func(t *testing.T, path string) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for i := 2 * 4096; i < len(data); i++ {
				data[i] = 0x11
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mongotest.Start(t)
			db := srv.Database(t)
			dir := t.TempDir()
			logPath := filepath.Join(dir, "access.log")
			addr := testenv.FreeAddr(t)
			conf := fastConfig(t, dir, srv.URI(), db.Name(), "corrupt.test", logPath, listen(addr))
			appendCombined(t, logPath, 0, 90)

			run := func(want int64) string {
				d, out := daemon(t, conf)
				waitHits(t, db, want, out)
				settle(t, addr, out) // a double count would show now
				d.Process.Signal(syscall.SIGTERM)
				if err := d.Wait(); err != nil {
					t.Fatalf("exit after SIGTERM: %v\n%s", err, out)
				}
				return out.String()
			}
			run(90)
			bufPath := filepath.Join(dir, "state", "buffer.db")
			tc.corrupt(t, bufPath)
			appendCombined(t, logPath, 90, 40)

			out := run(130)
			if strings.Contains(out, "goroutine ") || strings.Contains(out, "panic") || strings.Contains(out, "SIGBUS") {
				t.Fatalf("a Go crash reached the operator:\n%s", out)
			}
			if !strings.Contains(out, `level=ERROR msg="buffer file is corrupt: moved aside`) {
				t.Errorf("no ERROR about the corrupt buffer:\n%s", out)
			}
			aside, _ := filepath.Glob(bufPath + ".corrupt-*")
			if len(aside) != 1 {
				t.Errorf("moved-aside files %v, want one buffer.db.corrupt-<time>", aside)
			}
			want, got := bucketcheck.CountFiles(t, logPath, "corrupt.test"), bucketcheck.Read(t, db)
			if res := bucketcheck.CompareAll(t, want, got); !res.Exact() || got.MonthTotal != 130 {
				t.Errorf("after the rebuild: %d hits in MongoDB; %v", got.MonthTotal, res)
			}
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, "corrupt") || strings.Contains(l, "rebuilt") {
					t.Log(l)
				}
			}
		})
	}
}
