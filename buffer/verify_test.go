package buffer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sampleBuffer writes a closed buffer with enough keys for a few levels of
// pages and returns its path.
func sampleBuffer(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "buffer.db")
	b, err := Open(path, Options{}) // not openTest: the tests damage the file
	if err != nil {
		t.Fatal(err)
	}
	for c := range 3 {
		counts := map[string]uint64{}
		for i := range 3000 {
			counts[string(AppendKey(nil, []byte("site.test"), fmt.Appendf(nil, "/page/%d", i%700), int64(1_700_000_000+c*3000+i)))] = uint64(i + 1)
		}
		cps := map[string][]byte{fmt.Sprintf("cp%d", c): []byte("checkpoint")}
		if err := b.Commit(Commit{Counts: CountsOf(viewsOf(counts)), Checkpoints: cps}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Seal(Seal{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{string(AppendKey(nil, []byte("s"), []byte("/x"), 1_700_000_000)): 1}))}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Verify(path); err != nil { // sound before the test damages it
		t.Fatal(err)
	}
	return path
}

func TestVerifySoundFile(t *testing.T) {
	path := sampleBuffer(t)
	if err := Verify(path); err != nil {
		t.Fatalf("Verify of a sound buffer: %v", err)
	}
	// And a fresh, empty one.
	empty := filepath.Join(t.TempDir(), "buffer.db")
	openTest(t, empty, Options{}).Close()
	if err := Verify(empty); err != nil {
		t.Fatalf("Verify of an empty buffer: %v", err)
	}
}

func wantCorrupt(t *testing.T, path, what string) {
	t.Helper()
	err := Verify(path)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Verify: %v, want ErrCorrupt", err)
	}
	if !strings.Contains(err.Error(), what) {
		t.Errorf("Verify: %v, want it to say %q", err, what)
	}
	// Open refuses it the same way, without faulting or panicking.
	if _, err := Open(path, Options{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open: %v, want ErrCorrupt", err)
	}
}

// A file cut to half the pages its newest meta page says bbolt uses is
// corrupt (the file itself is larger: bbolt extends it to its map).
func TestVerifyTruncated(t *testing.T) {
	path := sampleBuffer(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	m, ok := newestMeta(&verifier{r: f, size: st.Size()}, 4096)
	f.Close()
	used := int64(m.pgid) * int64(m.pageSize)
	if !ok || used <= 4*4096 || used > st.Size() {
		t.Fatalf("sample buffer: meta read %v, %d bytes used of %d", ok, used, st.Size())
	}
	if err := os.Truncate(path, used/2); err != nil {
		t.Fatal(err)
	}
	wantCorrupt(t, path, "truncated")
}

func TestVerifyOverwrittenPages(t *testing.T) {
	path := sampleBuffer(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := 4096
	for i := 2 * ps; i < len(data); i++ { // every page but the two metas
		data[i] = 0x11
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	wantCorrupt(t, path, "page")
}

func TestVerifyBadMetas(t *testing.T) {
	path := sampleBuffer(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[16+20] ^= 0xff      // meta 0's root
	data[4096+16+20] ^= 0xff // meta 1's root
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	wantCorrupt(t, path, "checksum")
}

func TestVerifyTooShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buffer.db")
	os.WriteFile(path, []byte("not a database"), 0o600)
	wantCorrupt(t, path, "too short")
}
