package buffer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A buffer file truncated while open is reported, naming both sizes, by
// Truncated and by every call that would read bbolt's map, instead of a
// SIGBUS; Close still works.
func TestTruncatedWhileOpen(t *testing.T) {
	for _, size := range []int64{0, 2 * 4096} {
		path := filepath.Join(t.TempDir(), "buffer.db")
		b, err := Open(path, Options{}) // not openTest: the test truncates the file
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]uint64{}
		for i := range 2000 {
			counts[string(AppendKey(nil, []byte("s"), []byte("/p"), int64(i)))] = 1
		}
		if err := b.Commit(Commit{Counts: CountsOf(viewsOf(counts)), Checkpoints: map[string][]byte{"cp": []byte("x")}}); err != nil {
			t.Fatal(err)
		}
		if err := b.Truncated(); err != nil {
			t.Fatalf("a whole file: %v", err)
		}
		if err := os.Truncate(path, size); err != nil {
			t.Fatal(err)
		}
		err = b.Truncated()
		if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), path) ||
			!strings.Contains(err.Error(), " bytes, but bbolt uses ") {
			t.Fatalf("truncated to %d: Truncated() = %v", size, err)
		}
		t.Logf("truncated to %d: %v", size, err)
		if err := b.Commit(Commit{Counts: CountsOf(viewsOf(counts))}); !errors.Is(err, ErrTruncated) {
			t.Errorf("Commit: %v, want ErrTruncated", err)
		}
		if _, err := read(b, (*ReadTx).Checkpoints); !errors.Is(err, ErrTruncated) {
			t.Errorf("Checkpoints: %v, want ErrTruncated", err)
		}
		if _, err := read(b, (*ReadTx).Sealed); !errors.Is(err, ErrTruncated) {
			t.Errorf("Sealed: %v, want ErrTruncated", err)
		}
		if err := b.View(func(tx *ReadTx) error { tx.Unacked(); return nil }); !errors.Is(err, ErrTruncated) {
			t.Errorf("Unacked: %v, want ErrTruncated", err)
		}
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := Verify(path); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Verify after the truncate: %v, want ErrCorrupt", err)
		}
	}
}
