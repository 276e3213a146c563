package tailer

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/stream"
)

// Issue 29, 2: generations created and rotated away between two polls are
// read, each line once, whatever the rotated names.

// rotation renames the live file p (and the older generations) the way
// one rotation scheme does; n counts the rotations.
type rotation struct {
	name    string
	rotated func(dir string) []string // Config.Rotated
	rotate  func(t *testing.T, p string, n int)
}

var rotations = []rotation{
	{"numbered", nil, func(t *testing.T, p string, n int) {
		for i := n - 1; i >= 1; i-- { // logrotate: .1 to .2, ... first
			mustRename(t, p+"."+itoa(int64(i)), p+"."+itoa(int64(i+1)))
		}
		mustRename(t, p, p+".1")
	}},
	{"dateext", nil, func(t *testing.T, p string, n int) {
		mustRename(t, p, p+"-20240101-"+itoa(int64(n)))
	}},
	{"olddir", func(dir string) []string { return []string{filepath.Join(dir, "old", "access.log.*")} }, func(t *testing.T, p string, n int) {
		mustRename(t, p, filepath.Join(filepath.Dir(p), "old", "access.log.p"+itoa(int64(n))))
	}},
	{"rotated pattern", func(dir string) []string { return []string{filepath.Join(dir, "archive", "*", "web-*.txt")} }, func(t *testing.T, p string, n int) {
		d := filepath.Join(filepath.Dir(p), "archive", "2024-0"+itoa(int64(n)))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		mustRename(t, p, filepath.Join(d, "web-"+itoa(int64(n))+".txt"))
	}},
}

func mustRename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

// TestGenerationsRotatedBetweenPolls is the case: 100 lines
// read, then, before the next poll, three rotations with 150, 170 and 90
// lines written between them. Every line of the four generations is
// read once; the rotated ones are finished once quiet; nothing is lost.
// Before, the two generations nobody saw were never read, and nothing
// said so.
func TestGenerationsRotatedBetweenPolls(t *testing.T) {
	for _, rot := range rotations {
		t.Run(rot.name, func(t *testing.T) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "old"), 0o755)
			p := filepath.Join(dir, "access.log")
			appendLines(t, p, "a", 0, 100)
			var logs syncbuf.Buffer
			cfg := fakeCfg("web", p)
			cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			if rot.rotated != nil {
				cfg.Rotated = rot.rotated(dir)
			}
			h := start(t, cfg)
			h.waitFor("the first 100 lines", countLines(100))
			h.settle(2) // the follower and the rescan timer wait on the clock
			ids := []stream.FileID{idOf(t, p)}
			tags := []string{"a", "b", "c", "d"}
			sizes := []int{100, 150, 170, 90}
			for g := 1; g < 4; g++ {
				rot.rotate(t, p, g)
				appendLines(t, p, tags[g], 0, sizes[g])
				ids = append(ids, idOf(t, p))
			}
			h.waitFor("every line of the four generations", countLines(510))
			h.settle(5) // four followers and the rescan timer
			h.clk.Advance(cfg.RotateGrace)
			for g := range 3 {
				h.waitFor("the Done of generation "+tags[g], hasDone(ids[g]))
			}
			cs := h.stop()
			checkChunks(t, cs)
			for g := range 4 {
				sameLines(t, "generation "+tags[g], linesOf(cs, ids[g]), want(tags[g], 0, sizes[g]))
			}
			if st := h.tl.Stats(); st.LostFiles != 0 || strings.Contains(logs.String(), "level=ERROR") {
				t.Errorf("stats %+v, log:\n%s", st, logs.String())
			}
		})
	}
}

// TestGenerationMovedInNotRead: a rotated file that no look saw but that
// was modified before the files seen last was moved or copied in: it is
// not read, and that is an ERROR naming it with the replay command,
// counted; its lines are not logged.
func TestGenerationMovedInNotRead(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	appendLines(t, p, "a", 0, 10)
	var logs syncbuf.Buffer
	cfg := fakeCfg("web", p)
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	h := start(t, cfg)
	h.waitFor("the first lines", countLines(10))
	h.settle(2)
	old := filepath.Join(t.TempDir(), "restored")
	appendLines(t, old, "old", 0, 20)
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	then := st.ModTime().Add(-time.Hour) // file-system time, not the clock's
	if err := os.Chtimes(old, then, then); err != nil {
		t.Fatal(err)
	}
	mustRename(t, old, p+".7")
	h.tl.pros.triggerRescan()
	h.waitFor("the ERROR", func([]stream.Chunk) bool { return strings.Contains(logs.String(), "level=ERROR") })
	cs := h.stop()
	if got := len(allLines(cs)); got != 10 {
		t.Fatalf("%d lines read, want the 10 of access.log", got)
	}
	l := logs.String()
	if st := h.tl.Stats(); st.LostFiles != 1 || !strings.Contains(l, "path="+p+".7") || !strings.Contains(l, "logtally replay") || strings.Contains(l, "old 0000") {
		t.Errorf("stats %+v, log:\n%s", st, l)
	}
}
