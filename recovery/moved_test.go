package recovery

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
)

// writeLog writes n combined-format lines for page to path and returns
// the offset where line i (0-based) begins, for every i up to n.
func writeLog(t *testing.T, path, page string, n int) []int64 {
	t.Helper()
	var b strings.Builder
	offs := make([]int64, 0, n+1)
	for i := range n {
		offs = append(offs, int64(b.Len()))
		fmt.Fprintf(&b, "10.0.0.%d - - [31/Jan/2026:23:59:%02d +0000] \"GET %s?n=%d HTTP/1.1\" 200 512 \"-\" \"t\"\n", i%250, i%60, page, i)
	}
	offs = append(offs, int64(b.Len()))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return offs
}

// checkpointAt is the checkpoint of the file at path read up to off.
func checkpointAt(t *testing.T, source, path string, off int64) stream.Checkpoint {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := stream.IDOf(st)
	if !ok {
		t.Fatal("no file id")
	}
	n := int(min(off, stream.FingerprintSize))
	return stream.Checkpoint{Source: source, Path: path, File: id, Offset: off, FPLen: n, FPSum: fnv1a.Extend(fnv1a.Offset, b[:n])}
}

// A rotation renaming the files while a rebuild re-reads a window
// (logrotate shifting access.log.N to N+1): the file located at
// access.log.1 is at access.log.2 when it is read, and access.log.1 is
// another file. The re-read must count the located file's lines, not the
// bytes of whatever file now has its old name (the crash test saw the
// daily and monthly buckets 17 short and 15 over after such a re-read of
// the coarse counts, the minute buckets exact).
func TestRereadFileRenamedWhileRebuilding(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	offA := writeLog(t, p+".1", "/a", 100) // the window's file, rotated once
	writeLog(t, p, "/b", 200)              // the file after it, longer
	const src = "s"
	from := checkpointAt(t, src, p+".1", offA[40])
	to := checkpointAt(t, src, p+".1", offA[100])

	beforeRead = func() {
		// logrotate: access.log.1 -> .2, access.log -> .1, a new access.log.
		for _, mv := range [][2]string{{p + ".1", p + ".2"}, {p, p + ".1"}} {
			if err := os.Rename(mv[0], mv[1]); err != nil {
				t.Error(err)
			}
		}
		writeLog(t, p, "/c", 10)
	}
	t.Cleanup(func() { beforeRead = nil })

	cfg := Config{Clock: clock.Real{}, Sources: []Source{{Name: src, Files: tailer.SourceFiles{Paths: []string{p}},
		Parser: parser.Config{Format: "combined", Site: "site.test"}}}}
	loc := &locator{globs: map[string]tailer.SourceFiles{src: cfg.Sources[0].Files}, clock: cfg.Clock, found: map[locKey]locResult{}}
	var st Stats
	counts, _, _, _, err := reread(context.Background(), cfg, window{to: map[string]stream.Checkpoint{to.Key(): to}, known: true,
		from: map[string]stream.Checkpoint{from.Key(): from}}, loc, &st, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var hits uint64
	for k, n := range counts {
		if !strings.Contains(k, "/a") {
			t.Errorf("key %q counted %v: not a line of the window's file", k, n)
		}
		hits += n[measure.Views]
	}
	if hits != 60 || st.LostBytes != 0 {
		t.Errorf("re-read %d hits, %d bytes lost; want the window's 60 lines, none lost", hits, st.LostBytes)
	}
}
