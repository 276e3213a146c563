package tailer

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/stream"
)

// Files shrunk in place: not a copytruncate (no copy holds the old bytes,
// the head is unchanged), so the lines before the new size were counted
// and reading goes on from there (issue 16, item 3).

// sizeOfLines returns the byte size of lines [0, n) of tag.
func sizeOfLines(tag string, n int) int64 {
	var s int64
	for i := range n {
		s += int64(len(lineAt(tag, i))) + 1
	}
	return s
}

// TestShrunkInPlace: 1,000 lines counted, the file cut to a shorter size
// (seen at the next poll), 200 lines appended: only the 200 are sent after
// the first 1,000, after a reset chunk at the new size; it is logged at WARN with the path and
// offsets, no line content. Cut at a line end, within a line (the writer's
// next line begins at the cut), and below the fingerprinted bytes.
func TestShrunkInPlace(t *testing.T) {
	for _, tc := range []struct {
		name string
		cut  int64
	}{
		{"at a line end", sizeOfLines("a", 500)},
		{"within a line", sizeOfLines("a", 500) + 17},
		{"below the fingerprint", sizeOfLines("a", 5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "access.log")
			appendLines(t, p, "a", 0, 1000)
			id := idOf(t, p)
			var logs syncbuf.Buffer
			cfg := fakeCfg("web", p)
			cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			h := start(t, cfg)
			h.waitFor("first 1000 lines", countLines(1000))
			h.settle(2)
			if err := os.Truncate(p, tc.cut); err != nil {
				t.Fatal(err)
			}
			h.waitFor("the reset at the new size", func(cs []stream.Chunk) bool { return len(cs) > 0 && cs[len(cs)-1].Start == tc.cut })
			h.settle(2)
			appendLines(t, p, "b", 0, 200)
			h.waitFor("the new lines", countLines(1200))
			h.tick(2)
			cs := h.stop()
			checkChunks(t, cs)
			sameLines(t, "file", linesOf(cs, id), append(want("a", 0, 1000), want("b", 0, 200)...))
			reset := slices.IndexFunc(cs, func(c stream.Chunk) bool {
				return len(c.Data) == 0 && c.Start == tc.cut && c.Checkpoint.Offset == tc.cut && c.Shrunk
			})
			if reset < 0 {
				t.Fatalf("no reset chunk at the new size %d\n%s", tc.cut, dump(cs))
			}
			if got := h.tl.Stats(); got.Shrunk != 1 || got.LostFiles != 0 {
				t.Errorf("stats %+v, want 1 shrunk, none lost", got)
			}
			l := logs.String()
			if !strings.Contains(l, "level=WARN") || !strings.Contains(l, "file shrank in place") || strings.Contains(l, "GET /page") {
				t.Errorf("log:\n%s", l)
			}
		})
	}
}

// TestShrunkWhileDown: the same while the daemon was down: the restored
// checkpoint is beyond the file's size, its fingerprint matches and no
// copy is beside it: the file resumes at its size, its checkpoint sent
// first. With a copy beside it (copytruncate while down), the copy's tail
// is read and the file from 0, as before.
func TestShrunkWhileDown(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	appendLines(t, p, "a", 0, 1000)
	id := idOf(t, p)
	cp := stream.Checkpoint{Source: "web", Path: p, File: id, Offset: sizeOfLines("a", 1000), FPLen: stream.FingerprintSize, FPSum: fileFP(t, p, stream.FingerprintSize)}
	cut := sizeOfLines("a", 500)
	if err := os.Truncate(p, cut); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	cfg := fakeCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{roundTrip(t, cp)}
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	h := start(t, cfg)
	h.waitFor("the checkpoint at the new size", func(cs []stream.Chunk) bool { return len(cs) > 0 })
	h.settle(2)
	appendLines(t, p, "b", 0, 200)
	h.waitFor("the new lines", countLines(200))
	h.tick(2)
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "file", linesOf(cs, id), want("b", 0, 200))
	if c := cs[0]; c.Checkpoint.File != id || c.Start != cut || c.Checkpoint.Offset != cut || len(c.Data) != 0 || !c.Shrunk {
		t.Fatalf("first chunk is not the checkpoint at the new size %d\n%s", cut, dump(cs))
	}
	if !strings.Contains(logs.String(), "file shrank in place while logtally was down") {
		t.Errorf("log:\n%s", logs.String())
	}
}

// TestTruncatedWithoutCopyIsLost: a file truncated to 0 with no copy among
// its rotated files (the copy went where the tailer does not look) is read
// from 0 again, and the lines it may have lost are an ERROR with the path,
// the offset and the replay command, and a count in Stats.
func TestTruncatedWithoutCopyIsLost(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	appendLines(t, p, "a", 0, 100)
	var logs syncbuf.Buffer
	cfg := fakeCfg("web", p)
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	h := start(t, cfg)
	h.waitFor("first 100 lines", countLines(100))
	h.settle(2)
	os.Mkdir(filepath.Join(dir, "old"), 0o755)
	copyFile(t, p, filepath.Join(dir, "old", "access.log.1"))
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	appendLines(t, p, "b", 0, 10)
	h.waitFor("the new lines", countLines(110))
	h.stop()
	if got := h.tl.Stats().LostFiles; got != 1 {
		t.Errorf("%d lost files, want 1", got)
	}
	l := logs.String()
	for _, w := range []string{"level=ERROR", "path=" + p, "offset=" + itoa(sizeOfLines("a", 100)), "logtally replay -config CONFIG -source web ROTATED-FILE"} {
		if !strings.Contains(l, w) {
			t.Errorf("log lacks %q:\n%s", w, l)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
