package aggregate

import (
	"testing"

	"github.com/logtally/logtally/stream"
)

// A finished file's key names it in the buffer's pending and sealed
// finished sets and in meta/coarse_finished: it must never change.
func TestFinishedKeyPinned(t *testing.T) {
	cp := stream.Checkpoint{Source: "web", Path: "/l/a.log", File: stream.FileID{Dev: 2049, Ino: 1 << 40}, Offset: 5000, FPLen: 1024, FPSum: 0xabc, Stream: 7}
	if got, want := finishedKey(cp), "web\x002049:1099511627776\x001024:0000000000000abc"; got != want {
		t.Fatalf("finishedKey = %q, want %q", got, want)
	}
}
