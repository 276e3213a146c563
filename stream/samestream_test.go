package stream

import (
	"bytes"
	"strings"
	"testing"

	"github.com/logtally/logtally/fnv1a"
)

// The one rule for copies: a checkpoint names a stream by the bytes its
// fingerprint covers; a stream beginning with them is it (or a copy), and
// starts at the most of the ledger and those checkpoints.
func TestSameAndStart(t *testing.T) {
	data := []byte(strings.Repeat("0123456789abcdef\n", 100)) // 1700 bytes
	cp := func(off int64, b []byte) Checkpoint {
		n := int(min(off, FingerprintSize))
		return Checkpoint{Path: "/l/access.log", Offset: off, FPLen: n, FPSum: fnv1a.Extend(fnv1a.Offset, b[:n])}
	}
	head := data[:FingerprintSize]
	other := bytes.Clone(data)
	other[3] = 'x'
	for _, tc := range []struct {
		name    string
		cps     []Checkpoint
		counted int64
		head    []byte
		from    int64
		held    bool
	}{
		{"no checkpoint", nil, 340, head, 340, false},
		{"checkpoint ahead of the ledger", []Checkpoint{cp(1530, data)}, 340, head, 1530, true},
		{"ledger ahead of the checkpoint", []Checkpoint{cp(170, data)}, 1700, head, 1700, true},
		{"another stream's checkpoint", []Checkpoint{cp(1530, other)}, 340, head, 340, false},
		{"a shorter stream than the fingerprint", []Checkpoint{cp(1530, data)}, 0, data[:100], 0, false},
		{"a checkpoint without fingerprint", []Checkpoint{{Offset: 900}}, 0, head, 0, false},
		{"the furthest of two", []Checkpoint{cp(170, data), cp(1360, data), cp(1530, other)}, 0, head, 1360, true},
	} {
		from, held := Start(tc.head, tc.counted, tc.cps)
		if from != tc.from || (held != nil) != tc.held {
			t.Errorf("%s: from %d held %v, want %d %v", tc.name, from, held, tc.from, tc.held)
		}
	}
}
