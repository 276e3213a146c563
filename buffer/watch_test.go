package buffer

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// state is everything a restart reads from a buffer.
type state struct {
	instance    string
	pendingKeys int
	pendingHits uint64
	sealed      Batch
	batch       map[string]uint64
	checkpoints map[string][]byte
}

// fill gives b a sealed batch with progress, pending counts committed
// after it, and checkpoints.
func fill(t *testing.T, b *Buffer) {
	t.Helper()
	must(t, b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{key("s", "/a", 60): 2, key("s", "/b", 61): 1})), Checkpoints: map[string][]byte{"f1": []byte("10")}}))
	batch, err := b.Seal(Seal{})
	if err != nil || batch == nil {
		t.Fatalf("Seal = %v, %v", batch, err)
	}
	must(t, b.SaveProgress(batch.ID, []byte{1, 'k'}))
	must(t, b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{key("s", "/a", 60): 5, key("t", "/c", 62): 7})), Checkpoints: map[string][]byte{"f1": []byte("20"), "f2": []byte("3")}}))
}

// snapshot reads b's state; it seals nothing.
func snapshot(t *testing.T, b *Buffer) state {
	t.Helper()
	st := state{instance: b.InstanceID(), batch: map[string]uint64{}}
	st.pendingKeys, st.pendingHits = b.Pending()
	s, err := read(b, (*ReadTx).Sealed)
	if err != nil || s == nil {
		t.Fatalf("Sealed = %v, %v", s, err)
	}
	st.sealed = *s
	must(t, scanViews(scanBatch(b), s.ID, nil, func(k []byte, n uint64) bool { st.batch[string(k)] = n; return true }))
	if st.checkpoints, err = read(b, (*ReadTx).Checkpoints); err != nil {
		t.Fatal(err)
	}
	return st
}

func sameState(t *testing.T, got, want state) {
	t.Helper()
	if got.instance != want.instance || got.pendingKeys != want.pendingKeys || got.pendingHits != want.pendingHits {
		t.Errorf("instance, pending keys, hits = %s, %d, %d; want %s, %d, %d",
			got.instance, got.pendingKeys, got.pendingHits, want.instance, want.pendingKeys, want.pendingHits)
	}
	if g, w := got.sealed, want.sealed; g.ID != w.ID || g.Keys != w.Keys || g.Hits != w.Hits || !bytes.Equal(g.Progress, w.Progress) {
		t.Errorf("sealed batch = %+v, want %+v", g, w)
	}
	if !maps.Equal(got.batch, want.batch) {
		t.Errorf("sealed counts = %v, want %v", got.batch, want.batch)
	}
	if !maps.EqualFunc(got.checkpoints, want.checkpoints, bytes.Equal) {
		t.Errorf("checkpoints = %q, want %q", got.checkpoints, want.checkpoints)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func replaced(t *testing.T, b *Buffer) bool {
	t.Helper()
	r, err := b.Replaced()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// pendingAfterSeal seals the pending counts of a reopened buffer (the
// sealed batch must be acknowledged first) and returns them.
func pendingAfterSeal(t *testing.T, b *Buffer, sealedID string) map[string]uint64 {
	t.Helper()
	must(t, b.Ack(sealedID))
	batch, err := b.Seal(Seal{})
	if err != nil || batch == nil {
		t.Fatalf("Seal = %v, %v", batch, err)
	}
	got := map[string]uint64{}
	must(t, scanViews(scanBatch(b), batch.ID, nil, func(k []byte, n uint64) bool { got[string(k)] = n; return true }))
	return got
}

func TestDeletedBufferIsRestoredFromTheOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buffer.db")
	b := open(t, path)
	defer func() { b.Close() }()
	fill(t, b)
	if replaced(t, b) {
		t.Fatal("Replaced is true for the file just opened")
	}

	must(t, os.Remove(path))
	if !replaced(t, b) {
		t.Fatal("Replaced is false after the file was deleted")
	}
	// The Buffer works on, on the unlinked file: this commit must be in
	// the restored copy too.
	must(t, b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{key("t", "/c", 62): 1})), Checkpoints: map[string][]byte{"f2": []byte("4")}}))
	want := snapshot(t, b)

	aside, err := b.Restore()
	if err != nil || aside != "" {
		t.Fatalf("Restore = %q, %v; want nothing moved aside", aside, err)
	}
	if !replaced(t, b) {
		t.Error("Replaced is false after Restore: the restored copy is another file, the Buffer must be reopened")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after Restore, want only buffer.db (no temporary left)", len(entries))
	}
	b.Close()

	b = open(t, path)
	if replaced(t, b) {
		t.Error("Replaced is true for the reopened file")
	}
	sameState(t, snapshot(t, b), want)
	if got := pendingAfterSeal(t, b, want.sealed.ID); !maps.Equal(got, map[string]uint64{
		key("s", "/a", 60): 5, key("t", "/c", 62): 8,
	}) {
		t.Errorf("pending counts after reopen = %v", got)
	}
}

func TestReplacedBufferIsMovedAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buffer.db")
	b := open(t, path)
	defer func() { b.Close() }()
	fill(t, b)
	want := snapshot(t, b)

	// Another file at the path: a new inode, e.g. a backup put back by
	// a wrong restore script.
	must(t, os.Remove(path))
	must(t, os.WriteFile(path, []byte("not the buffer"), 0o600))
	if !replaced(t, b) {
		t.Fatal("Replaced is false after another file took the path")
	}
	aside, err := b.Restore()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(aside, path+".replaced-") {
		t.Fatalf("moved aside to %q, want %s.replaced-<time>", aside, path)
	}
	if got, err := os.ReadFile(aside); err != nil || string(got) != "not the buffer" {
		t.Errorf("the file found at the path was not kept at %s: %q, %v", aside, got, err)
	}
	b.Close()
	b = open(t, path)
	sameState(t, snapshot(t, b), want)

	// A second restore in the same second does not overwrite the first
	// file kept aside.
	must(t, os.Remove(path))
	must(t, os.WriteFile(path, []byte("another"), 0o600))
	aside2, err := b.Restore()
	if err != nil || aside2 == aside || aside2 == "" {
		t.Fatalf("second Restore = %q, %v; want a new name beside %q", aside2, err, aside)
	}
	if got, _ := os.ReadFile(aside); string(got) != "not the buffer" {
		t.Errorf("the first file kept aside was overwritten: %q", got)
	}
}

func TestRestoreRecreatesTheDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "buffer.db")
	b := open(t, path)
	defer func() { b.Close() }()
	fill(t, b)
	want := snapshot(t, b)
	must(t, os.RemoveAll(dir))
	if !replaced(t, b) {
		t.Fatal("Replaced is false after the state dir was removed")
	}
	if _, err := b.Restore(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	b = open(t, path)
	sameState(t, snapshot(t, b), want)
}

func TestRestoreOfAFileStillInPlaceDoesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buffer.db")
	b := open(t, path)
	defer b.Close()
	fill(t, b)
	before, err := os.Stat(path)
	must(t, err)
	if aside, err := b.Restore(); err != nil || aside != "" {
		t.Fatalf("Restore = %q, %v", aside, err)
	}
	after, err := os.Stat(path)
	must(t, err)
	if !os.SameFile(before, after) || replaced(t, b) {
		t.Fatal("Restore replaced a file that was still the open one")
	}
}
