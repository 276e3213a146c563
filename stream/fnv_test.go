package stream

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtally/logtally/fnv1a"
)

// fnvHead is a checkpoint fingerprint's input: the first FingerprintSize
// bytes of an access log (13 lines of 80 bytes, the last one cut).
var fnvHead = []byte(strings.Repeat(`127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /index.html HTTP/1.1" 200 2326`+"\n", 13))[:FingerprintSize]

// fnvHeadSum is the checkpoint FPSum of fnvHead. Checkpoints persist it:
// if this test fails, every stored checkpoint stops matching its file and
// logtally reads every followed file again from the start.
const fnvHeadSum = 0xac7a6413dc481f0e

// TestFNVPinned pins the fingerprint hash to values computed before the
// hash moved to hash/fnv (and checked against an independent FNV-1a 64),
// and to the published FNV-1a 64 vectors.
func TestFNVPinned(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
	}{
		{"", 0xcbf29ce484222325},
		{"a", 0xaf63dc4c8601ec8c},
		{"foobar", 0x85944171f73967e8},
		{string(fnvHead), fnvHeadSum},
	} {
		if got := fnv1a.Extend(fnv1a.Offset, []byte(tc.in)); got != tc.want {
			t.Errorf("fnv1a.Extend(offset, %.20q) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
	if fnv1a.Offset != 0xcbf29ce484222325 {
		t.Errorf("fnv1a.Offset = %#x", uint64(fnv1a.Offset))
	}
}

// TestFNVExtend checks that a sum extended piece by piece, as the
// follower does while a file grows to FingerprintSize, is the sum of the
// whole.
func TestFNVExtend(t *testing.T) {
	for _, cut := range []int{0, 1, 79, 80, 512, FingerprintSize - 1, FingerprintSize} {
		if got := fnv1a.Extend(fnv1a.Extend(fnv1a.Offset, fnvHead[:cut]), fnvHead[cut:]); got != fnvHeadSum {
			t.Errorf("split at %d: %#x, want %#x", cut, got, uint64(fnvHeadSum))
		}
	}
	h := uint64(fnv1a.Offset)
	for i := range fnvHead {
		h = fnv1a.Extend(h, fnvHead[i:i+1])
	}
	if h != fnvHeadSum {
		t.Errorf("byte by byte: %#x, want %#x", h, uint64(fnvHeadSum))
	}
	if n := testing.AllocsPerRun(100, func() { h = fnv1a.Extend(h, fnvHead) }); n != 0 {
		t.Errorf("fnvExtend: %v allocs", n)
	}
}

// TestFingerprintMatchesPinned checks a file against the pinned sum.
func TestFingerprintMatchesPinned(t *testing.T) {
	file := append(bytes.Clone(fnvHead), "more lines after the head\n"...)
	for _, tc := range []struct {
		data []byte
		n    int
		sum  uint64
		want bool
	}{
		{file, FingerprintSize, fnvHeadSum, true},
		{file, FingerprintSize, fnvHeadSum ^ 1, false},
		{file[:FingerprintSize-1], FingerprintSize, fnvHeadSum, false}, // shorter than the fingerprint
		{file, 80, fnv1a.Extend(fnv1a.Offset, file[:80]), true},
		{file, 0, 12345, true},
	} {
		got, err := FingerprintMatches(bytes.NewReader(tc.data), tc.n, tc.sum)
		if err != nil || got != tc.want {
			t.Errorf("FingerprintMatches(%d bytes, %d, %#x) = %v, %v; want %v", len(tc.data), tc.n, tc.sum, got, err, tc.want)
		}
	}
	path := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := HasFingerprint(path, FingerprintSize, fnvHeadSum); !ok || err != nil {
		t.Errorf("HasFingerprint = %v, %v", ok, err)
	}
}
