package fnv1a

import (
	"hash/fnv"
	"testing"
)

// Extend equals hash/fnv, whole or resumed at any split.
func TestExtendMatchesHashFNV(t *testing.T) {
	data := []byte("GET /a/page/with/a/long/path?and=query 200 \xff\x00 the end")
	ref := fnv.New64a()
	ref.Write(data)
	want := ref.Sum64()
	for i := 0; i <= len(data); i++ {
		if got := Extend(Extend(Offset, data[:i]), data[i:]); got != want {
			t.Fatalf("split at %d: %#x, want %#x", i, got, want)
		}
	}
	if Extend(Offset, nil) != Offset {
		t.Error("the hash of no bytes is not Offset")
	}
}
