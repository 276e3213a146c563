package tailer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/logtally/logtally/stream"
)

// Issue 29, 1: with more files than MaxOpenFiles, quiet files are closed
// and opened again by identity when they change, without losing or
// repeating a byte.

// openHigh samples the Tailer's open files until the test ends and
// returns the most it saw.
func openHigh(t *testing.T, tl *Tailer) *atomic.Int64 {
	var high atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			if n := tl.slots.open.Load(); n > high.Load() {
				high.Store(n)
			}
			time.Sleep(50 * time.Microsecond) // the sampling pace: time is the point
		}
	}()
	return &high
}

// TestParkedFilesExact: six files, two open at most. Every line is read
// once: the first ones, lines appended to closed files, a line finished
// while its file was closed, lines appended to a file renamed while it
// was closed (found again by identity among its rotated names) and its
// successor; a file deleted while closed is finished. The files open
// never exceed the limit by more than the one being examined.
func TestParkedFilesExact(t *testing.T) {
	dir := t.TempDir()
	path := func(i int) string { return filepath.Join(dir, fmt.Sprintf("f%d.log", i)) }
	tag := func(i int) string { return fmt.Sprintf("f%d", i) }
	ids := make([]stream.FileID, 6)
	for i := range 6 {
		appendLines(t, path(i), tag(i), 0, 10)
		ids[i] = idOf(t, path(i))
	}
	cfg := fakeCfg("web", filepath.Join(dir, "*.log"))
	cfg.MaxOpenFiles = 2
	h := start(t, cfg)
	high := openHigh(t, h.tl)
	h.waitFor("the first lines of every file", countLines(60))
	if n := len(h.tl.Files()); n != 6 {
		t.Fatalf("Files lists %d files, want 6 (the closed ones too)", n)
	}
	for i := range 6 {
		appendLines(t, path(i), tag(i), 10, 15)
	}
	h.waitFor("the lines appended to closed files", countLines(90))

	// A line begun while its file is open and finished once closed.
	f, err := os.OpenFile(path(0), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	line := lineAt(tag(0), 15)
	fmt.Fprint(f, line[:10])
	h.waitFor("the other files to be read again", func([]stream.Chunk) bool { return h.tl.slots.hasParked() })
	for i := 1; i < 6; i++ {
		appendLines(t, path(i), tag(i), 15, 16)
	}
	h.waitFor("a line of each other file", countLines(95))
	fmt.Fprintln(f, line[10:])
	f.Close()
	h.waitFor("the finished line", countLines(96))

	// A file renamed while closed, written to under its new name, and
	// replaced; another deleted while closed.
	var ren, del int
	h.waitFor("two files closed", func([]stream.Chunk) bool {
		h.tl.slots.mu.Lock()
		defer h.tl.slots.mu.Unlock()
		var closed []int
		for i := 1; i < 6; i++ {
			if h.tl.slots.parked[ids[i]] != nil {
				closed = append(closed, i)
			}
		}
		if len(closed) < 2 {
			return false
		}
		ren, del = closed[0], closed[1]
		return true
	})
	mustRename(t, path(ren), path(ren)+".1")
	appendLines(t, path(ren)+".1", tag(ren), 16, 19)
	appendLines(t, path(ren), "new", 0, 4)
	newID := idOf(t, path(ren))
	if err := os.Remove(path(del)); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the renamed file's lines and its successor's", countLines(103))
	h.waitFor("the Done of the deleted file", hasDone(ids[del]))
	h.clk.Advance(cfg.RotateGrace)
	h.waitFor("the Done of the renamed file", hasDone(ids[ren]))
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "f0", linesOf(cs, ids[0]), want(tag(0), 0, 16))
	for i := 1; i < 6; i++ {
		n := 16
		if i == ren {
			n = 19
		}
		sameLines(t, tag(i), linesOf(cs, ids[i]), want(tag(i), 0, n))
	}
	sameLines(t, "the renamed file's successor", linesOf(cs, newID), want("new", 0, 4))
	// One more for a moment: a new file is opened to be examined before
	// it is closed or another is.
	if n := high.Load(); n > int64(cfg.MaxOpenFiles)+1 {
		t.Errorf("%d files open at once, want %d at most", n, cfg.MaxOpenFiles+1)
	}
	if st := h.tl.Stats(); st.LostFiles != 0 {
		t.Errorf("stats %+v", st)
	}
}
