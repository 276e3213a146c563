package tailer

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/logtally/logtally/stream"
)

// Rotated files written while the daemon was down (Config.Since).

// firstRun writes 100 lines to p, reads them with a tailer and returns
// the checkpoint that run left (as the buffer returns it), the file's
// identity and the time of that run's last commit.
func firstRun(t *testing.T, p string) (stream.Checkpoint, stream.FileID, time.Time) {
	t.Helper()
	appendLines(t, p, "a", 0, 100)
	id := idOf(t, p)
	h := start(t, fakeCfg("web", p))
	h.waitFor("first 100 lines", countLines(100))
	return roundTrip(t, lastCheckpoint(t, h.stop(), id)), id, time.Now()
}

// oldGeneration is firstRun, then it renames p to p.1 (rename rotation)
// and writes 10 more lines to the renamed file, as nginx does until it
// reopens: the generation's rest, read from the checkpoint at the next
// start.
func oldGeneration(t *testing.T, p string) (stream.Checkpoint, stream.FileID, time.Time) {
	t.Helper()
	cp, id, since := firstRun(t, p)
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	appendLines(t, p+".1", "a", 100, 110)
	return cp, id, since
}

// rotate shifts p.1 to p.2, then rotates p to p.1 by rename (a new p is
// created) or by copytruncate (p is copied to p.1 and truncated in place).
// It returns the identity of the file now at p.1.
func rotate(t *testing.T, p string, byCopy bool) stream.FileID {
	t.Helper()
	if err := os.Rename(p+".1", p+".2"); err != nil {
		t.Fatal(err)
	}
	if byCopy {
		copyFile(t, p, p+".1")
		if err := os.Truncate(p, 0); err != nil {
			t.Fatal(err)
		}
	} else {
		if err := os.Rename(p, p+".1"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return idOf(t, p+".1")
}

// missedGeneration sets up the loss the crash test found: checkpoints for
// an old generation only; then a new access.log (generation "b", 80 lines)
// that the last run never committed anything of, rotated again while the
// daemon was down (to p.1, by copy or rename), then 20 lines of generation
// "c" in access.log.
func missedGeneration(t *testing.T, byCopy bool) (p string, cp stream.Checkpoint, oldID, missedID stream.FileID, since time.Time) {
	t.Helper()
	p = filepath.Join(t.TempDir(), "access.log")
	cp, oldID, since = oldGeneration(t, p)
	appendLines(t, p, "b", 0, 80)
	missedID = rotate(t, p, byCopy)
	appendLines(t, p, "c", 0, 20)
	os.WriteFile(p+".3.gz", []byte("not read\n"), 0o644) // compressed candidates are ignored
	return p, cp, oldID, missedID, since
}

// The exact scenario of the crash test, by copytruncate and by rename:
// every line of the missed generation is sent once, before anything else
// its checkpoint at 0, then it is finished like any rotated file; the old
// generation's rest and the new lines of access.log are sent too.
func TestMissedGenerationRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		byCopy bool
	}{{"copytruncate", true}, {"rename", false}} {
		t.Run(tc.name, func(t *testing.T) {
			p, cp, oldID, missedID, since := missedGeneration(t, tc.byCopy)
			liveID := idOf(t, p)
			cfg := fakeCfg("web", p)
			cfg.Checkpoints = []stream.Checkpoint{cp}
			cfg.Since = since
			h := start(t, cfg)
			h.waitFor("every line", countLines(10+80+20))
			h.settle(4) // three followers and the rescan timer
			if got := h.tl.Files(); !slices.Equal(got, []string{p, p + ".1", p + ".2"}) {
				t.Fatalf("Files() = %q", got)
			}
			h.clk.Advance(cfg.RotateGrace)
			h.waitFor("Done for both rotated files", func(cs []stream.Chunk) bool { return hasDone(oldID)(cs) && hasDone(missedID)(cs) })
			cs := h.stop()
			checkChunks(t, cs)
			sameLines(t, "old generation", linesOf(cs, oldID), want("a", 100, 110))
			sameLines(t, "missed generation", linesOf(cs, missedID), want("b", 0, 80))
			sameLines(t, "access.log", linesOf(cs, liveID), want("c", 0, 20))
			if n := len(allLines(cs)); n != 110 {
				t.Fatalf("%d lines in all, want 110", n)
			}
			if c := cs[0]; c.Checkpoint.File != missedID || c.Start != 0 || c.Checkpoint.Offset != 0 || c.Done || len(c.Data) != 0 {
				t.Fatalf("first chunk %+v, want the missed file's checkpoint at 0\n%s", c.Checkpoint, dump(cs))
			}
			if c := cs[0].Checkpoint; c.Path != p+".1" || c.Source != "web" {
				t.Fatalf("missed file's checkpoint %+v", c)
			}
		})
	}
}

// A rotated file without a checkpoint that was last modified before Since
// (less the one second allowed for) was finished, or is older history:
// not read. One modified just under a second before Since is read.
func TestMissedGenerationMtime(t *testing.T) {
	for _, tc := range []struct {
		name string
		age  time.Duration // how long before Since the file was last modified
		read bool
	}{
		{"an hour before", time.Hour, false},
		{"two seconds before", 2 * time.Second, false},
		{"half a second before", 500 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, cp, oldID, missedID, since := missedGeneration(t, true)
			at := since.Add(-tc.age)
			if err := os.Chtimes(p+".1", at, at); err != nil {
				t.Fatal(err)
			}
			liveID := idOf(t, p)
			cfg := fakeCfg("web", p)
			cfg.Checkpoints = []stream.Checkpoint{cp}
			cfg.Since = since
			h := start(t, cfg)
			lines := 10 + 20
			followers := []string{p, p + ".2"}
			if tc.read {
				lines += 80
				followers = []string{p, p + ".1", p + ".2"}
			}
			h.waitFor("the lines", countLines(lines))
			h.settle(len(followers) + 1)
			if got := h.tl.Files(); !slices.Equal(got, followers) {
				t.Fatalf("Files() = %q, want %q", got, followers)
			}
			cs := h.stop()
			checkChunks(t, cs)
			sameLines(t, "old generation", linesOf(cs, oldID), want("a", 100, 110))
			sameLines(t, "access.log", linesOf(cs, liveID), want("c", 0, 20))
			if tc.read {
				sameLines(t, "missed generation", linesOf(cs, missedID), want("b", 0, 80))
			} else if slices.ContainsFunc(cs, func(c stream.Chunk) bool { return c.Checkpoint.File == missedID }) {
				t.Fatalf("a chunk for the old file\n%s", dump(cs))
			}
			if n := len(allLines(cs)); n != lines {
				t.Fatalf("%d lines in all, want %d", n, lines)
			}
		})
	}
}

// On the very first start (zero Since) rotated files are history: not read.
func TestMissedGenerationZeroSince(t *testing.T) {
	p, cp, oldID, missedID, _ := missedGeneration(t, true)
	liveID := idOf(t, p)
	cfg := fakeCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	h := start(t, cfg)
	h.waitFor("the lines", countLines(30))
	h.settle(3)
	if got := h.tl.Files(); !slices.Equal(got, []string{p, p + ".2"}) {
		t.Fatalf("Files() = %q", got)
	}
	cs := h.stop()
	sameLines(t, "old generation", linesOf(cs, oldID), want("a", 100, 110))
	sameLines(t, "access.log", linesOf(cs, liveID), want("c", 0, 20))
	if slices.ContainsFunc(cs, func(c stream.Chunk) bool { return c.Checkpoint.File == missedID }) || len(allLines(cs)) != 30 {
		t.Fatalf("the rotated file was read\n%s", dump(cs))
	}
}

// A copy of a checkpointed file made while the daemon was down is read from
// the checkpoint's offset only, with a Since that would let a file nobody
// accounts for be read from 0.
func TestCopyOfCheckpointedFileNotReadFromZero(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	cp, id, since := firstRun(t, p)

	appendLines(t, p, "a", 100, 150)
	copyFile(t, p, p+".1")
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	appendLines(t, p, "b", 0, 30)
	copyID := idOf(t, p+".1")

	cfg := fakeCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	cfg.Since = since
	h := start(t, cfg)
	h.waitFor("copy and new lines", countLines(80))
	h.settle(3)
	h.clk.Advance(cfg.RotateGrace)
	h.waitFor("Done for the copy", hasDone(copyID))
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "copy", linesOf(cs, copyID), want("a", 100, 150))
	sameLines(t, "truncated file", linesOf(cs, id), want("b", 0, 30))
	if n := len(allLines(cs)); n != 80 {
		t.Fatalf("%d lines in all, want 80", n)
	}
	if cs[0].Checkpoint.File != copyID || cs[0].Start != cp.Offset {
		t.Fatalf("first chunk %+v, want the copy's at %d", cs[0].Checkpoint, cp.Offset)
	}
}

// Copies that were not truncated after (yet): a complete copy of a file
// read from 0, and a copy being written of a checkpointed file, shorter than
// its fingerprint, are not read: their lines are read from the originals.
func TestCopiesOfLiveFilesNotRead(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	q := filepath.Join(dir, "other.log")
	appendLines(t, p, "a", 0, 3)
	id := idOf(t, p)
	h := start(t, fakeCfg("web", p))
	h.waitFor("first 3 lines", countLines(3))
	cp := roundTrip(t, lastCheckpoint(t, h.stop(), id))
	since := time.Now()
	if cp.FPLen != int(cp.Offset) || cp.FPLen >= stream.FingerprintSize {
		t.Fatalf("checkpoint %+v: want a short fingerprint", cp)
	}

	appendLines(t, p, "a", 3, 50)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// logrotate has copied the first two lines of access.log so far.
	if err := os.WriteFile(p+"-20240101", b[:len(lineAt("a", 0))*2+2], 0o644); err != nil {
		t.Fatal(err)
	}
	// other.log, never read, copied whole; not truncated yet.
	appendLines(t, q, "q", 0, 40)
	copyFile(t, q, q+".1")

	cfg := fakeCfg("web", p, q)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	cfg.Since = since
	h = start(t, cfg)
	h.waitFor("the lines", countLines(47+40))
	h.settle(3)
	if got := h.tl.Files(); !slices.Equal(got, []string{p, q}) {
		t.Fatalf("Files() = %q", got)
	}
	cs := h.stop()
	sameLines(t, "access.log", linesOf(cs, id), want("a", 3, 50))
	sameLines(t, "other.log", linesOf(cs, idOf(t, q)), want("q", 0, 40))
	if n := len(allLines(cs)); n != 87 {
		t.Fatalf("%d lines in all, want 87\n%s", n, dump(cs))
	}
}

// A copy that holds less than a checkpointed file's offset (a copy cut
// short; every line of it was read) is not read from 0 even when the
// original is gone: its first bytes match the checkpoint's fingerprint.
func TestShortCopyOfGoneFileNotRead(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	cp, id, since := firstRun(t, p)
	if cp.FPLen != stream.FingerprintSize {
		t.Fatalf("checkpoint %+v: want a full fingerprint", cp)
	}

	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+".1", b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	appendLines(t, p, "b", 0, 30)
	newID := idOf(t, p)

	cfg := fakeCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	cfg.Since = since
	h := start(t, cfg)
	h.waitFor("the new lines", countLines(30))
	h.settle(2)
	if got := h.tl.Files(); !slices.Equal(got, []string{p}) {
		t.Fatalf("Files() = %q", got)
	}
	cs := h.stop()
	sameLines(t, "access.log", linesOf(cs, newID), want("b", 0, 30))
	if n := len(allLines(cs)); n != 30 {
		t.Fatalf("%d lines in all, want 30\n%s", n, dump(cs))
	}
	// The old checkpoint is dropped first, unless the new file took its
	// inode: then the new file's checkpoints replace it under the same key.
	if newID != id && (!cs[0].Done || cs[0].Checkpoint.File != id) {
		t.Fatalf("no Done for the old checkpoint first\n%s", dump(cs))
	}
}

// Two copies of one missed generation (an early copy, then the
// copytruncate one): only the longer is read, so each line once.
func TestTwoCopiesOfMissedGeneration(t *testing.T) {
	p := filepath.Join(t.TempDir(), "access.log")
	cp, oldID, since := oldGeneration(t, p)
	appendLines(t, p, "b", 0, 40)
	copyFile(t, p, p+"-early")
	appendLines(t, p, "b", 40, 80)
	missedID := rotate(t, p, true)
	appendLines(t, p, "c", 0, 20)

	cfg := fakeCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	cfg.Since = since
	h := start(t, cfg)
	h.waitFor("every line", countLines(10+80+20))
	h.settle(4)
	if got := h.tl.Files(); !slices.Equal(got, []string{p, p + ".1", p + ".2"}) {
		t.Fatalf("Files() = %q", got)
	}
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "old generation", linesOf(cs, oldID), want("a", 100, 110))
	sameLines(t, "missed generation", linesOf(cs, missedID), want("b", 0, 80))
	if n := len(allLines(cs)); n != 110 {
		t.Fatalf("%d lines in all, want 110\n%s", n, dump(cs))
	}
}

// copytruncate and then a rename rotation while logtally was down: the
// copy's unread tail, the truncated file's new lines (now rotated away) and
// the new file are each read once.
func TestCopytruncateThenRenameWhileDown(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	cp, id, since := firstRun(t, p)

	appendLines(t, p, "a", 100, 120) // written after the last read
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+".1", b, 0o644); err != nil { // copytruncate
		t.Fatal(err)
	}
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	appendLines(t, p, "b", 0, 40)
	if err := os.Rename(p+".1", p+".2"); err != nil { // then rename rotation
		t.Fatal(err)
	}
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	appendLines(t, p, "c", 0, 10)
	copyID, newID := idOf(t, p+".2"), idOf(t, p)

	cfg := fakeCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	cfg.Since = since
	h := start(t, cfg)
	h.waitFor("every new line", countLines(20+40+10))
	h.settle(2)
	cs := h.stop()
	sameLines(t, "copy", linesOf(cs, copyID), want("a", 100, 120))
	sameLines(t, "truncated, then rotated", linesOf(cs, id), want("b", 0, 40))
	sameLines(t, "new file", linesOf(cs, newID), want("c", 0, 10))
	if n := len(allLines(cs)); n != 70 {
		t.Fatalf("%d lines in all, want 70\n%s", n, dump(cs))
	}
}
