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
		b, path, counts := openFilled(t)
		if err := b.Truncated(); err != nil {
			t.Fatalf("a whole file: %v", err)
		}
		if err := os.Truncate(path, size); err != nil {
			t.Fatal(err)
		}
		err := b.Truncated()
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

// A file truncated inside a transaction, after the size check, makes the
// transaction's next read of the map fault: View and Update return
// ErrTruncated instead of the process dying of SIGBUS, every later call
// returns it at once, and Close returns (an error, after a write
// transaction faulted, since bbolt's lock may still be held).
func TestTruncatedInsideTransaction(t *testing.T) {
	for _, mode := range []string{"view", "update", "read-only view"} {
		b, path, counts := openFilled(t)
		if mode == "read-only view" {
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			var err error
			if b, err = OpenReadOnly(path, Options{}); err != nil {
				t.Fatal(err)
			}
		}
		keys := 0
		fn := func(tx *ReadTx) error {
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
			return tx.tx.Bucket(bktPending).ForEach(func(k, v []byte) error {
				keys++
				return nil
			})
		}
		var err error
		if mode == "update" {
			err = b.Update(func(tx *Tx) error { return fn(&tx.ReadTx) })
		} else {
			err = b.View(fn)
		}
		if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), path) {
			t.Fatalf("%s: a read after the truncate returned %v (after %d keys), want ErrTruncated", mode, err, keys)
		}
		if mode != "read-only view" {
			if err := b.Commit(Commit{Counts: CountsOf(viewsOf(counts))}); !errors.Is(err, ErrTruncated) {
				t.Errorf("%s: Commit after the fault: %v, want ErrTruncated", mode, err)
			}
		}
		if _, err := read(b, (*ReadTx).Sealed); !errors.Is(err, ErrTruncated) {
			t.Errorf("%s: Sealed after the fault: %v, want ErrTruncated", mode, err)
		}
		err = b.Close()
		if (mode == "update") != (err != nil) || (err != nil && !errors.Is(err, ErrTruncated)) {
			t.Errorf("%s: Close: %v", mode, err)
		}
	}
}

// guard recovers only a fault on the truncated file: any other panic in a
// transaction, a nil dereference included, still reaches the caller.
func TestTransactionPanicsPassThrough(t *testing.T) {
	b := openTest(t, filepath.Join(t.TempDir(), "buffer.db"), Options{})
	var nilMap *struct{ n int }
	for name, fn := range map[string]func(*ReadTx) error{
		"panic": func(*ReadTx) error { panic("boom") },
		"nil":   func(*ReadTx) error { nilMap.n++; return nil },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%s: no panic reached the caller", name)
				}
			}()
			err := b.View(fn)
			t.Errorf("%s: View returned %v", name, err)
		}()
	}
	if err := b.Truncated(); err != nil {
		t.Errorf("after the panics: %v", err)
	}
}

// openFilled opens a buffer file of its own (not openTest's: the tests
// truncate it) with 2,000 keys and a checkpoint committed, and returns it,
// its path and the counts committed.
func openFilled(t *testing.T) (*Buffer, string, map[string]uint64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "buffer.db")
	b, err := Open(path, Options{})
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
	return b, path, counts
}
