package tailer

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/logtally/logtally/stream"
)

// Issue 29: a new file whose first bytes equal a gone file's (a fixed
// banner, the same first requests of a health check) is not the gone
// file. Its first sharedLines lines are the same, over FingerprintSize
// bytes, so the prefix fingerprint cannot tell them apart; the bytes just
// before the checkpoint's offset do.
const sharedLines = 40

// writeShared writes the shared first lines then lines [0, n) of tag.
func writeShared(t *testing.T, path, tag string, n int) {
	t.Helper()
	appendLines(t, path, "health", 0, sharedLines)
	appendLines(t, path, tag, 0, n)
	if st, _ := os.Stat(path); st.Size() < 2*stream.FingerprintSize {
		t.Fatalf("%s: %d bytes, want the shared lines past the fingerprint", path, st.Size())
	}
}

// firstCheckpoint follows path (sharedLines + n lines) to its end and
// returns its last checkpoint, as the buffer stores it.
func firstCheckpoint(t *testing.T, path string, n int) stream.Checkpoint {
	t.Helper()
	id := idOf(t, path)
	h := start(t, realCfg("web", path))
	h.waitFor("the first file", countLines(sharedLines+n))
	cs := h.stop()
	return roundTrip(t, lastCheckpoint(t, cs, id))
}

// The daemon stopped, the log deleted and a new one written whose inode
// is the old one's (the file system reused it) and whose first lines are
// the same: it is another file, read from 0, not resumed at the old offset.
func TestReusedInodeSamePrefixReadFromZero(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	writeShared(t, p, "a", 60)
	cp := firstCheckpoint(t, p, 60)

	os.Remove(p)
	writeShared(t, p, "b", 250)
	cp.File = idOf(t, p) // the inode reused

	cfg := realCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	h := start(t, cfg)
	h.waitFor("the new file", countLines(sharedLines+250))
	cs := h.stop()
	checkChunks(t, cs)
	got := allLines(cs)
	sameLines(t, "new file", got, append(want("health", 0, sharedLines), want("b", 0, 250)...))
}

// The daemon stopped, the log deleted and a new one created under another
// inode with the same first lines, longer than the old offset: it is not
// a copy of the gone file (its bytes before the old offset differ), so it
// is read from 0.
func TestNewFileSamePrefixNotTakenForCopy(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	writeShared(t, p, "a", 60)
	cp := firstCheckpoint(t, p, 60)

	// Keep the old inode alive elsewhere so that the new file gets another.
	keep := filepath.Join(t.TempDir(), "old")
	if err := os.Rename(p, keep); err != nil {
		t.Fatal(err)
	}
	writeShared(t, p, "b", 250)

	cfg := realCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	h := start(t, cfg)
	h.waitFor("the new file", countLines(sharedLines+250))
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "new file", linesOf(cs, idOf(t, p)), append(want("health", 0, sharedLines), want("b", 0, 250)...))
}

// A checkpoint stored by the previous version (encoding 1: no bytes before
// the offset recorded) resumes as before: at its offset, by identity and
// prefix fingerprint.
func TestVersion1CheckpointResumes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	writeShared(t, p, "a", 60)
	cp := firstCheckpoint(t, p, 60)
	appendLines(t, p, "a", 60, 90)

	// The previous version's encoding, byte for byte.
	b := []byte{1}
	b = binary.AppendUvarint(b, uint64(len(cp.Source)))
	b = append(b, cp.Source...)
	b = binary.AppendUvarint(b, uint64(len(cp.Path)))
	b = append(b, cp.Path...)
	for _, v := range []uint64{cp.File.Dev, cp.File.Ino, uint64(cp.Offset), uint64(cp.FPLen), cp.FPSum} {
		b = binary.AppendUvarint(b, v)
	}
	var old stream.Checkpoint
	if err := old.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if old.Source != cp.Source || old.Path != cp.Path || old.File != cp.File || old.Offset != cp.Offset || old.FPLen != cp.FPLen || old.FPSum != cp.FPSum {
		t.Fatalf("decoded %+v, want %+v", old, cp)
	}

	cfg := realCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{old}
	h := start(t, cfg)
	h.waitFor("the lines after the checkpoint", countLines(30))
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "resumed", allLines(cs), want("a", 60, 90))
	if cs[0].Start != cp.Offset {
		t.Fatalf("resumed at %d, want %d", cs[0].Start, cp.Offset)
	}
}

// Locate (the state-dir rebuild's search) does not take a file that
// begins like the checkpointed one, with other bytes before its offset,
// for it; the checkpointed file itself, or a copy of it, it finds.
func TestLocateChecksTheTail(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	writeShared(t, p, "a", 60)
	cp := firstCheckpoint(t, p, 60)
	globs := []string{p}
	if loc, ok := Locate(globs, cp); !ok || loc.Path != p {
		t.Fatalf("Locate of the file itself: %+v %v", loc, ok)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(p)
	writeShared(t, p, "b", 250)
	if loc, ok := Locate(globs, cp); ok {
		t.Fatalf("Locate took a file with the same first lines for the checkpointed one: %+v", loc)
	}
	if err := os.WriteFile(p+".1", data, 0o644); err != nil {
		t.Fatal(err)
	}
	if loc, ok := Locate(globs, cp); !ok || loc.Path != p+".1" {
		t.Fatalf("Locate of a copy: %+v %v", loc, ok)
	}
}

// A rotated file written while the daemon was down that begins like a
// checkpointed file but has other bytes before its offset is not its
// copy: it is read (the Since rule), not left for one.
func TestMissedGenerationSamePrefixRead(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	writeShared(t, p, "a", 60)
	cp := firstCheckpoint(t, p, 60)
	os.Remove(p) // the old generation, rotated and deleted while down
	writeShared(t, p+".1", "b", 250)
	appendLines(t, p, "c", 0, 10) // (a live file beginning like a followed one is taken for its copy: a caveat of its own)

	cfg := fakeCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	cfg.Since = time.Now().Add(-time.Hour)
	h := start(t, cfg)
	h.waitFor("both files", countLines(sharedLines+260))
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "rotated", linesOf(cs, idOf(t, p+".1")), append(want("health", 0, sharedLines), want("b", 0, 250)...))
	sameLines(t, "live", linesOf(cs, idOf(t, p)), want("c", 0, 10))
}

// Issue 29: lines appended to a rotated file after it was finished
// (quiet for RotateGrace) are read while the tailer runs: the file is
// followed again from where it was finished, its checkpoint sent first,
// and finished again once quiet.
func TestRotatedFileWrittenAfterGraceIsRead(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	appendLines(t, p, "a", 0, 10)
	cfg := realCfg("web", p)
	cfg.RotateGrace = 50 * time.Millisecond
	h := start(t, cfg)
	h.waitFor("the first lines", countLines(10))
	id := idOf(t, p)
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	appendLines(t, p, "b", 0, 5)
	h.waitFor("the rotated file finished", hasDone(id))
	appendLines(t, p+".1", "a", 10, 30) // a writer that reopened late
	h.waitFor("the late lines", countLines(10+5+20))
	h.waitFor("finished again", func(cs []stream.Chunk) bool {
		n := 0
		for _, c := range cs {
			if c.Done && c.Checkpoint.File == id {
				n++
			}
		}
		return n == 2
	})
	appendLines(t, p+".1", "a", 30, 35)
	h.waitFor("later lines again", countLines(10+5+25))
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "rotated file", linesOf(cs, id), want("a", 0, 35))
	sameLines(t, "new file", linesOf(cs, idOf(t, p)), want("b", 0, 5))
	if n := h.tl.Stats().Rewatched; n != 2 {
		t.Errorf("Rewatched %d, want 2", n)
	}
}
