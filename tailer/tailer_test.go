package tailer

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/stream"
)

// realCfg is a config on the real clock with fast polling.
func realCfg(source string, paths ...string) Config {
	return Config{
		Source:         source,
		Paths:          paths,
		PollInterval:   5 * time.Millisecond,
		RescanInterval: 10 * time.Millisecond,
		RotateGrace:    time.Hour,
	}
}

// fakeCfg is a config on a fake clock: nothing polls until the test moves
// it, rescans only when a rotation is seen, and grace lasts an hour.
func fakeCfg(source string, paths ...string) Config {
	return Config{
		Source:         source,
		Paths:          paths,
		PollInterval:   10 * time.Millisecond,
		RescanInterval: 24 * time.Hour,
		RotateGrace:    time.Hour,
		Clock:          fakeClock(),
	}
}

func fileFP(t *testing.T, path string, n int) uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := fnv.New64a()
	h.Write(b[:n])
	return h.Sum64()
}

// 1. Restart resume: nothing before the checkpoint is sent again, and the
// fingerprint grows with the file until FingerprintSize, then stays.
func TestResumeFromCheckpoint(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	appendLines(t, p, "a", 0, 10) // 550 bytes: fingerprint not yet full
	id := idOf(t, p)

	h := start(t, realCfg("web", p))
	h.waitFor("10 lines", countLines(10))
	cs := h.stop()
	checkChunks(t, cs)
	cp := roundTrip(t, lastCheckpoint(t, cs, id))
	if st, _ := os.Stat(p); cp.Offset != st.Size() || cp.FPLen != int(st.Size()) || cp.FPSum != fileFP(t, p, cp.FPLen) {
		t.Fatalf("checkpoint %+v, file size %d", cp, st.Size())
	}

	appendLines(t, p, "a", 10, 60)
	cfg := realCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	h = start(t, cfg)
	cs = h.waitFor("50 more lines", countLines(50))
	if cs[0].Start != cp.Offset {
		t.Fatalf("first chunk starts at %d, want the checkpoint %d", cs[0].Start, cp.Offset)
	}
	cs = h.stop()
	checkChunks(t, cs)
	sameLines(t, "after resume", allLines(cs), want("a", 10, 60))
	cp2 := roundTrip(t, lastCheckpoint(t, cs, id))
	if cp2.FPLen != stream.FingerprintSize || cp2.FPSum != fileFP(t, p, stream.FingerprintSize) {
		t.Fatalf("fingerprint after growth: len %d sum %x", cp2.FPLen, cp2.FPSum)
	}

	appendLines(t, p, "a", 60, 70)
	cfg.Checkpoints = []stream.Checkpoint{cp2}
	h = start(t, cfg)
	h.waitFor("10 more lines", countLines(10))
	cs = h.stop()
	checkChunks(t, cs)
	sameLines(t, "second resume", allLines(cs), want("a", 60, 70))
	if got := lastCheckpoint(t, cs, id); got.FPLen != stream.FingerprintSize || got.FPSum != cp2.FPSum {
		t.Fatalf("full fingerprint changed: %+v", got)
	}
}

// 2. rename+create rotation with the writer still writing the renamed file:
// both files are read whole, once; the old one is Done only after it has
// been quiet for RotateGrace.
func TestRenameRotation(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	old, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	writeLines(t, old, "a", 0, 100)
	oldID := idOf(t, p)

	h := start(t, fakeCfg("web", p))
	h.waitFor("first 100 lines", countLines(100))
	h.settle(2) // rescan timer + one follower

	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	writeLines(t, old, "a", 100, 150) // nginx keeps writing the renamed file
	newF, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer newF.Close()
	newID := idOf(t, p)

	h.waitFor("lines written after the rename", countLines(150))
	h.waitFor("the new file followed", func([]stream.Chunk) bool { return len(h.tl.Files()) == 2 })
	h.settle(3)
	if got := h.tl.Files(); !slices.Equal(got, []string{p, p + ".1"}) {
		t.Fatalf("Files() = %q", got)
	}
	// Still growing after the rotation was seen: still read.
	writeLines(t, old, "a", 150, 200)
	h.tick(3)
	h.waitFor("more lines in the renamed file", countLines(200))
	// nginx reopens: writes go to the new file.
	writeLines(t, newF, "b", 0, 50)
	cs := h.waitFor("lines of the new file", countLines(250))
	if doneIndex(cs, oldID) >= 0 {
		t.Fatal("old file finished before RotateGrace")
	}
	h.settle(3)
	h.clk.Advance(h.cfg.RotateGrace)
	h.waitFor("Done for the old file", hasDone(oldID))
	cs = h.stop()
	checkChunks(t, cs)
	sameLines(t, "old file", linesOf(cs, oldID), want("a", 0, 200))
	sameLines(t, "new file", linesOf(cs, newID), want("b", 0, 50))
	for _, c := range cs {
		if c.Checkpoint.File == newID {
			if c.Start != 0 {
				t.Fatalf("new file first chunk at %d, want 0", c.Start)
			}
			break
		}
	}
	if cp := lastCheckpoint(t, cs, oldID); !cs[doneIndex(cs, oldID)].Done || cp.Path != p+".1" {
		t.Fatalf("old file's last chunk %+v, want Done under %s", cp, p+".1")
	}
}

// 2b. The measured failure of other tailers: the writer keeps writing the
// renamed file for 20 ms while the tailer polls on the real clock.
func TestRenameRotationConcurrentWriter(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	cfg := realCfg("web", p)
	cfg.RotateGrace = 300 * time.Millisecond
	appendLines(t, p, "a", 0, 1)
	h := start(t, cfg)
	h.waitFor("first line", countLines(1))

	old, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	oldID := idOf(t, p)
	n := 1
	for ; n < 1000; n++ {
		writeLines(t, old, "a", n, n+1)
	}
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for until := time.Now().Add(20 * time.Millisecond); time.Now().Before(until) || n < 2000; n++ {
		writeLines(t, old, "a", n, n+1)
	}
	for i := 0; i < 1000; i++ {
		appendLines(t, p, "b", i, i+1)
	}
	h.waitFor("every line and Done for the old file", func(cs []stream.Chunk) bool {
		return len(allLines(cs)) >= n+1000 && doneIndex(cs, oldID) >= 0
	})
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "old file", linesOf(cs, oldID), want("a", 0, n))
	sameLines(t, "new file", linesOf(cs, idOf(t, p)), want("b", 0, 1000))
}

// copyFile copies src to dst, like cp.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// 3. copytruncate: the lines written between the last read and the
// truncation are read from the copy, under the copy's identity; then the
// truncated file restarts at 0. Order: copy lines, reset of the original's
// checkpoint, Done of the copy.
func TestCopyTruncate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after int // lines written after the truncation, before the next poll
	}{
		{"shorter than before", 30},
		{"regrown past the old offset", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "access.log")
			appendLines(t, p, "a", 0, 100)
			id := idOf(t, p)
			h := start(t, fakeCfg("web", p))
			h.waitFor("first 100 lines", countLines(100))
			h.settle(2)

			appendLines(t, p, "a", 100, 150) // not read yet: the clock stands still
			copyFile(t, p, p+".1")
			if err := os.Truncate(p, 0); err != nil {
				t.Fatal(err)
			}
			appendLines(t, p, "b", 0, tc.after)
			copyID := idOf(t, p+".1")

			h.waitFor("every line", countLines(150+tc.after))
			h.settle(3) // rescan timer, the original, the copy
			h.clk.Advance(h.cfg.RotateGrace)
			h.waitFor("Done for the copy", hasDone(copyID))
			cs := h.stop()
			checkChunks(t, cs)
			sameLines(t, "copy", linesOf(cs, copyID), want("a", 100, 150))
			sameLines(t, "original", linesOf(cs, id), append(want("a", 0, 100), want("b", 0, tc.after)...))
			reset, lastCopy := -1, -1
			for i, c := range cs {
				if c.Checkpoint.File == id && c.Start == 0 && c.Checkpoint.Offset == 0 {
					reset = i
				}
				if c.Checkpoint.File == copyID && len(c.Data) > 0 {
					lastCopy = i
				}
			}
			if !(lastCopy >= 0 && lastCopy < reset && reset < doneIndex(cs, copyID)) {
				t.Fatalf("order: last copy data %d, reset %d, copy Done %d\n%s", lastCopy, reset, doneIndex(cs, copyID), dump(cs))
			}
			if doneIndex(cs, id) >= 0 {
				t.Fatal("Done for the truncated file, which is still followed")
			}
		})
	}
}

// 4. Rename rotation while the daemon was down: the old file is found by
// identity among the rotated candidates and read from its checkpoint to its
// end, then Done; the new file is read from 0.
func TestRotationWhileDown(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	cp, id, _ := firstRun(t, p)

	appendLines(t, p, "a", 100, 150)
	if err := os.Rename(p, p+"-20240101"); err != nil {
		t.Fatal(err)
	}
	appendLines(t, p, "b", 0, 30)
	newID := idOf(t, p)
	os.WriteFile(p+".2.gz", []byte("not read\n"), 0o644) // compressed candidates are ignored

	cfg := fakeCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	h := start(t, cfg)
	h.waitFor("the rest of the old file and the new file", countLines(80))
	h.settle(3)
	h.clk.Advance(cfg.RotateGrace)
	h.waitFor("Done for the old file", hasDone(id))
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "old file", linesOf(cs, id), want("a", 100, 150))
	sameLines(t, "new file", linesOf(cs, newID), want("b", 0, 30))
	if len(allLines(cs)) != 80 {
		t.Fatalf("%d lines in all, want 80", len(allLines(cs)))
	}
}

// 4b. copytruncate while the daemon was down: the copy is read from the old
// offset under its own identity, the truncated file from 0.
func TestCopyTruncateWhileDown(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	cp, id, _ := firstRun(t, p)

	appendLines(t, p, "a", 100, 150)
	copyFile(t, p, p+".1")
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	appendLines(t, p, "b", 0, 30)
	copyID := idOf(t, p+".1")

	cfg := fakeCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	h := start(t, cfg)
	h.waitFor("copy and new lines", countLines(80))
	h.settle(3)
	h.clk.Advance(cfg.RotateGrace)
	h.waitFor("Done for the copy", hasDone(copyID))
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "copy", linesOf(cs, copyID), want("a", 100, 150))
	sameLines(t, "truncated file", linesOf(cs, id), want("b", 0, 30))
	// The copy's checkpoint exists before the original's is reset, and the
	// original's is reset before any of its new lines and before the copy
	// is Done.
	first := slices.IndexFunc(cs, func(c stream.Chunk) bool { return c.Checkpoint.File == id })
	if cs[0].Checkpoint.File != copyID || cs[0].Start != cp.Offset {
		t.Fatalf("first chunk %+v, want the copy's at %d", cs[0].Checkpoint, cp.Offset)
	}
	if c := cs[first]; c.Start != 0 || c.Checkpoint.Offset != 0 || first > doneIndex(cs, copyID) {
		t.Fatalf("first chunk of the original: %+v at %d\n%s", c, first, dump(cs))
	}
	if doneIndex(cs, id) >= 0 {
		t.Fatal("Done for the truncated file")
	}
}

// 4c. A checkpoint whose file is gone is dropped with a Done chunk, first.
func TestCheckpointMatchingNothingDropped(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	appendLines(t, p, "a", 0, 5)
	gone := stream.Checkpoint{Source: "web", Path: filepath.Join(dir, "old.log"), File: stream.FileID{Dev: 1, Ino: 999999}, Offset: 500, FPLen: 500, FPSum: 42}
	cfg := realCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{gone}
	h := start(t, cfg)
	cs := h.waitFor("5 lines", countLines(5))
	if !cs[0].Done || cs[0].Checkpoint.Key() != gone.Key() {
		t.Fatalf("first chunk %+v, want Done for the gone checkpoint", cs[0])
	}
	sameLines(t, "file", allLines(h.stop()), want("a", 0, 5))
}

// 5. A last line without its newline waits for it.
func TestPartialLastLine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	if err := os.WriteFile(p, []byte("one\ntw"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := start(t, fakeCfg("web", p))
	h.waitFor("first line", countLines(1))
	h.settle(2)
	h.tick(2)
	h.tick(2)
	if got := allLines(h.got()); !slices.Equal(got, []string{"one"}) {
		t.Fatalf("lines %q before the newline", got)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("o\r\nthree")
	f.Close()
	cs := h.waitFor("second line", countLines(2))
	var ends []int64
	var lines []string
	for i := range cs {
		cs[i].Lines(func(l []byte, end int64) { lines = append(lines, string(l)); ends = append(ends, end) })
	}
	if !slices.Equal(lines, []string{"one", "two\r"}) || !slices.Equal(ends, []int64{4, 9}) {
		t.Fatalf("lines %q ends %v", lines, ends)
	}
}

// 6. A checkpoint whose fingerprint does not match (inode reused) means a
// new file: read from 0. (One beyond the file's size with a matching
// fingerprint is a file shrunk in place: TestShrunkWhileDown.)
func TestStaleCheckpointReadsFromZero(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*stream.Checkpoint)
	}{
		{"fingerprint differs", func(cp *stream.Checkpoint) { cp.FPSum++ }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "access.log")
			appendLines(t, p, "a", 0, 40)
			id := idOf(t, p)
			cp := stream.Checkpoint{Source: "web", Path: p, File: id, Offset: 1100, FPLen: stream.FingerprintSize, FPSum: fileFP(t, p, stream.FingerprintSize)}
			tc.edit(&cp)
			cfg := realCfg("web", p)
			cfg.Checkpoints = []stream.Checkpoint{cp}
			h := start(t, cfg)
			h.waitFor("40 lines", countLines(40))
			cs := h.stop()
			checkChunks(t, cs)
			sameLines(t, "file", linesOf(cs, id), want("a", 0, 40))
		})
	}
}

// 7. Files without a checkpoint at start and files that appear later are
// read from 0.
func TestNewFilesReadFromZero(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.log")
	b := filepath.Join(dir, "b.log")
	appendLines(t, a, "a", 0, 20)
	h := start(t, realCfg("web", filepath.Join(dir, "*.log")))
	h.waitFor("catch-up of a.log", countLines(20))
	appendLines(t, b, "b", 0, 20)
	h.waitFor("b.log found at rescan", countLines(40))
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "a.log", linesOf(cs, idOf(t, a)), want("a", 0, 20))
	sameLines(t, "b.log", linesOf(cs, idOf(t, b)), want("b", 0, 20))
}

// 8. Lines longer than MaxLineBytes are skipped whole and counted.
func TestLongLinesSkipped(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	content := "short 1\n" + long(500) + "\nshort 2\n" + long(101) + "\n" + long(100) + "\n" + long(2000) + "\n" + long(300) + "\nshort 3\n"
	type span struct{ start, end int64 }
	var wantSkips []span
	var pos int64
	for _, l := range strings.SplitAfter(content, "\n") {
		if len(l) > 101 {
			wantSkips = append(wantSkips, span{pos, pos + int64(len(l))})
		}
		pos += int64(len(l))
	}
	for _, readSize := range []int{64, 4096} {
		t.Run(strings.Repeat("r", 1)+string(rune('0'+readSize%10)), func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "access.log")
			// Written in pieces so the long lines also span polls.
			h := start(t, func() Config {
				c := realCfg("web", p)
				c.MaxLineBytes = 100
				c.ReadSize = readSize
				return c
			}())
			for i := 0; i < len(content); i += 700 {
				f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(content[i:min(i+700, len(content))])
				f.Close()
			}
			h.waitFor("every line", func(cs []stream.Chunk) bool {
				return len(cs) > 0 && cs[len(cs)-1].Checkpoint.Offset == int64(len(content))
			})
			cs := h.stop()
			checkChunks(t, cs)
			sameLines(t, "kept", allLines(cs), []string{"short 1", "short 2", long(100), "short 3"})
			var skips []span
			for _, c := range cs {
				if c.Skipped > 0 {
					if c.Skipped != 1 {
						t.Fatalf("skip chunk with %d lines", c.Skipped)
					}
					skips = append(skips, span{c.Start, c.Checkpoint.Offset})
				}
			}
			if !slices.Equal(skips, wantSkips) {
				t.Fatalf("skipped %v, want %v", skips, wantSkips)
			}
		})
	}
}

// 9. A file deleted while followed is drained, then Done, without waiting
// for RotateGrace.
func TestDeletedWhileFollowed(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	appendLines(t, p, "a", 0, 10)
	id := idOf(t, p)
	h := start(t, fakeCfg("web", p))
	h.waitFor("10 lines", countLines(10))
	h.settle(2)
	appendLines(t, p, "a", 10, 15)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	h.waitFor("Done", hasDone(id))
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "file", linesOf(cs, id), want("a", 0, 15))
	if doneIndex(cs, id) != len(cs)-1 {
		t.Fatal("Done is not the last chunk")
	}
	if len(h.tl.Files()) != 0 {
		t.Fatalf("Files() = %q after Done", h.tl.Files())
	}
}

// A stat error other than not-exist (here a symlink loop, since tests may
// run as root, who is never denied) is logged once and retried.
func TestStatErrorLoggedAndRetried(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "loop.log")
	if err := os.Symlink(p, p); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	cfg := realCfg("web", filepath.Join(dir, "*.log"))
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	h := start(t, cfg)
	h.waitFor("a few rescans", func([]stream.Chunk) bool { return strings.Contains(logs.String(), "cannot stat file") })
	h.waitFor("more rescans", func() func([]stream.Chunk) bool {
		deadline := time.Now().Add(100 * time.Millisecond) // at least 10 rescans
		return func([]stream.Chunk) bool { return time.Now().After(deadline) }
	}())
	if n := strings.Count(logs.String(), "cannot stat file"); n != 1 {
		t.Fatalf("logged %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "component=tailer") {
		t.Fatalf("no component attribute: %s", logs.String())
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	appendLines(t, p, "a", 0, 5)
	h.waitFor("the file once it is readable", countLines(5))
}

// With a glob that also matches rotated names, a copy of a followed file is
// not read again, and a renamed file keeps being followed.
func TestBroadGlobCopiesAndRenames(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	appendLines(t, p, "a", 0, 100)
	id := idOf(t, p)
	h := start(t, realCfg("web", p+"*"))
	h.waitFor("100 lines", countLines(100))
	copyFile(t, p, p+".bak")
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	appendLines(t, p+".1", "a", 100, 110)
	appendLines(t, p, "b", 0, 10)
	h.waitFor("all lines", countLines(120))
	h.waitFor("files", func([]stream.Chunk) bool { return len(h.tl.Files()) == 2 })
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "renamed", linesOf(cs, id), want("a", 0, 110))
	if doneIndex(cs, id) >= 0 {
		t.Fatal("a renamed file still matched by the glob was finished")
	}
	if len(allLines(cs)) != 120 {
		t.Fatalf("%d lines, want 120 (the copy must not be read)", len(allLines(cs)))
	}
}

func TestNewValidates(t *testing.T) {
	out := make(chan stream.Chunk)
	for _, cfg := range []Config{
		{Source: "web", Paths: []string{"/var/log/[.log"}},
		{Source: "web"},
		{Paths: []string{"/x"}},
		{Source: "web", Paths: []string{"/x"}, Checkpoints: []stream.Checkpoint{{Source: "other"}}},
		{Source: "web", Paths: []string{"/x"}, Checkpoints: []stream.Checkpoint{{Source: "web"}, {Source: "web"}}},
		{Source: "web", Paths: []string{"/x"}, PollInterval: -1},
	} {
		if _, err := New(cfg, out); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	if _, err := New(Config{Source: "web", Paths: []string{"/x"}}, nil); err == nil {
		t.Error("nil channel accepted")
	}
	if _, err := New(Config{Source: "web", Paths: []string{"/var/log/*.log"}}, out); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

// Backpressure: nothing is lost when the consumer is slower than the file.
func TestSlowConsumerLosesNothing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	appendLines(t, p, "a", 0, 5000)
	cfg := realCfg("web", p)
	cfg.ReadSize = 4096
	out := make(chan stream.Chunk)
	tl, err := New(cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- tl.Run(ctx) }()
	var lines []string
	appended := false
	deadline := time.After(waitLimit)
	for len(lines) < 5100 {
		var c stream.Chunk
		select {
		case c = <-out:
		case <-deadline:
			t.Fatalf("timed out with %d lines", len(lines))
		}
		c.Lines(func(l []byte, _ int64) { lines = append(lines, string(l)) })
		if len(lines) >= 2500 && !appended {
			appendLines(t, p, "a", 5000, 5100)
			appended = true
		}
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	sameLines(t, "file", lines, want("a", 0, 5100))
}

// A checkpoint whose file cannot be examined at start (an error other than
// not-exist) is kept, not dropped, and the file is resumed at its offset
// once it can be: dropping it would read the file again from 0.
func TestUnreadableCheckpointedFileWaits(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	appendLines(t, p, "a", 0, 50)
	id := idOf(t, p)
	h := start(t, realCfg("web", p))
	h.waitFor("50 lines", countLines(50))
	cp := roundTrip(t, lastCheckpoint(t, h.stop(), id))

	appendLines(t, p, "a", 50, 60)
	aside := filepath.Join(t.TempDir(), "aside")
	if err := os.Rename(p, aside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(p, p); err != nil { // stat fails with ELOOP
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	cfg := realCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	h = start(t, cfg)
	h.waitFor("the error logged", func([]stream.Chunk) bool { return strings.Contains(logs.String(), "keeping its checkpoint") })
	if got := h.got(); len(got) != 0 {
		t.Fatalf("sent %d chunks while the file could not be read:\n%s", len(got), dump(got))
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(aside, p); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the rest of the file", countLines(10))
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "resumed", allLines(cs), want("a", 50, 60))
}

// 4d. Copy found while the original is gone: the copy is read from the old
// offset, and only then is the old checkpoint dropped.
func TestCopyWhileDownOriginalGone(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	cp, id, _ := firstRun(t, p)

	appendLines(t, p, "a", 100, 150)
	copyFile(t, p, p+".1")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	copyID := idOf(t, p+".1")
	cfg := fakeCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	h := start(t, cfg)
	h.waitFor("the copy and the old checkpoint dropped", func(cs []stream.Chunk) bool { return countLines(50)(cs) && hasDone(id)(cs) })
	h.settle(2)
	h.clk.Advance(cfg.RotateGrace)
	h.waitFor("Done for the copy", hasDone(copyID))
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "copy", linesOf(cs, copyID), want("a", 100, 150))
	lastData := slices.IndexFunc(cs, func(c stream.Chunk) bool { return c.Checkpoint.File == copyID && len(c.Data) > 0 })
	if cs[0].Checkpoint.File != copyID || lastData > doneIndex(cs, id) {
		t.Fatalf("order wrong: the copy's checkpoint must come before the old one is dropped\n%s", dump(cs))
	}
}

// A truncation with no copy to be found restarts the file at 0 with a reset
// checkpoint first.
func TestTruncateWithoutCopy(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	appendLines(t, p, "a", 0, 100)
	id := idOf(t, p)
	h := start(t, fakeCfg("web", p))
	h.waitFor("first 100 lines", countLines(100))
	h.settle(2)
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	appendLines(t, p, "b", 0, 10)
	h.waitFor("the new lines", countLines(110))
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "file", linesOf(cs, id), append(want("a", 0, 100), want("b", 0, 10)...))
	reset := slices.IndexFunc(cs, func(c stream.Chunk) bool { return c.Start == 0 && c.Checkpoint.Offset == 0 })
	if reset < 0 || reset != len(cs)-2 {
		t.Fatalf("no reset chunk before the new lines\n%s", dump(cs))
	}
}

// With a glob matching the copy too, a copy that a rescan found while it was
// being written (so not yet recognisable) is still adopted at the old
// offset when the original is truncated, whichever of the two files is
// polled first. Repeated, since the order is up to the scheduler.
func TestCopyFoundWhileBeingWritten(t *testing.T) {
	for i := range 10 {
		dir := t.TempDir()
		p := filepath.Join(dir, "access.log")
		appendLines(t, p, "a", 0, 100)
		id := idOf(t, p)
		h := start(t, fakeCfg("web", p+"*"))
		h.waitFor("first 100 lines", countLines(100))
		h.settle(2)

		if err := os.WriteFile(p+".1", nil, 0o644); err != nil { // cp has begun
			t.Fatal(err)
		}
		h.clk.Advance(h.cfg.RescanInterval)
		h.waitFor("the empty copy followed", func([]stream.Chunk) bool { return len(h.tl.Files()) == 2 })
		h.settle(3)
		appendLines(t, p, "a", 100, 150)
		copyFile(t, p, p+".1") // cp is done
		if err := os.Truncate(p, 0); err != nil {
			t.Fatal(err)
		}
		appendLines(t, p, "b", 0, 30)
		copyID := idOf(t, p+".1")

		h.waitFor("every line", countLines(180))
		h.tick(3)
		h.tick(3)
		cs := h.stop()
		checkChunks(t, cs)
		sameLines(t, fmt.Sprint("copy, run ", i), linesOf(cs, copyID), want("a", 100, 150))
		sameLines(t, fmt.Sprint("original, run ", i), linesOf(cs, id), append(want("a", 0, 100), want("b", 0, 30)...))
	}
}

// Started closes only after the start chunks were handed on: here the Done
// of a checkpoint whose file is gone.
func TestStartedAfterStartChunks(t *testing.T) {
	dir := t.TempDir()
	gone := stream.Checkpoint{Source: "s", Path: filepath.Join(dir, "access.log"), File: stream.FileID{Dev: 1, Ino: 424242}, Offset: 10}
	out := make(chan stream.Chunk) // unbuffered: the tailer blocks until we read
	tl, err := New(Config{Source: "s", Paths: []string{filepath.Join(dir, "access.log")}, Checkpoints: []stream.Checkpoint{gone}}, out)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tl.Run(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case <-tl.Started():
		t.Fatal("Started closed before the start chunk was taken")
	case c := <-out:
		if !c.Done || c.Checkpoint.Key() != gone.Key() {
			t.Fatalf("first chunk %+v, want Done of the gone file", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no start chunk")
	}
	select {
	case <-tl.Started():
	case <-time.After(10 * time.Second):
		t.Fatal("Started never closed")
	}
}

// A file found without a checkpoint starts where Config.Counted says it is
// counted (a replay counted a copy of it), never past its end: a stream
// counted further than the file is long is not taken for it (a new file
// with the same first lines is shorter too).
func TestNewFileStartsWhereCounted(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.log")
	b := filepath.Join(dir, "b.log")
	appendLines(t, a, "a", 0, 20)
	appendLines(t, b, "b", 0, 5)
	data, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	cutA := int64(len(strings.Join(want("a", 0, 12), "\n")) + 1) // past line 12
	cfg := realCfg("web", filepath.Join(dir, "*.log"))
	var asked []string
	var mu sync.Mutex
	cfg.Counted = func(head []byte) []Position {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, string(head[:1]))
		switch {
		case bytes.HasPrefix(data, head):
			p := Position{Offset: cutA}
			p.TailLen, p.TailSum = stream.TailOf(data[:cutA])
			return []Position{p}
		case head[0] == 'b':
			return []Position{{Offset: 1 << 40}} // more than b.log holds
		}
		return nil
	}
	h := start(t, cfg)
	h.waitFor("a.log from line 12, b.log from 0", countLines(8+5))
	appendLines(t, b, "b", 5, 8)
	h.waitFor("b.log's new lines", countLines(8+8))
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "a.log", linesOf(cs, idOf(t, a)), want("a", 12, 20))
	sameLines(t, "b.log", linesOf(cs, idOf(t, b)), want("b", 0, 8))
	if cp := lastCheckpoint(t, cs, idOf(t, a)); cp.FPLen != int(min(int64(len(data)), stream.FingerprintSize)) || cp.Offset != int64(len(data)) {
		t.Errorf("a.log checkpoint %+v", cp)
	}
	if len(asked) != 2 {
		t.Errorf("Counted asked %d times, want once per file", len(asked))
	}
}

// A file quiet for IdlePollInterval is polled every IdlePollInterval; once
// it grows it is polled every PollInterval again. Nothing is lost.
func TestQuietFilePolledEveryIdlePollInterval(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	appendLines(t, p, "a", 0, 5)
	cfg := fakeCfg("web", p)
	cfg.IdlePollInterval = 4 * cfg.PollInterval
	h := start(t, cfg)
	h.waitFor("5 lines", countLines(5))
	h.settle(2)   // rescan timer + the follower, its poll done
	for range 4 { // quiet for IdlePollInterval
		h.tick(2)
	}
	appendLines(t, p, "a", 5, 6)
	for range 3 {
		h.tick(2)
	}
	h.collected()
	if n := len(allLines(h.got())); n != 5 {
		t.Fatalf("%d lines sent three polls into a quiet file's idle wait, want 5", n)
	}
	h.tick(2)
	h.waitFor("the 6th line, one idle interval on", countLines(6))
	h.settle(2)
	// It grew: polled every PollInterval again.
	appendLines(t, p, "a", 6, 7)
	h.tick(2)
	h.collected()
	if n := len(allLines(h.got())); n != 7 {
		t.Fatalf("%d lines sent one poll after a line written to a file that just grew, want 7", n)
	}
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "lines", allLines(cs), want("a", 0, 7))
}
