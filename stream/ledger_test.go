package buffer

import (
	"encoding/hex"
	"slices"
	"testing"
)

// The ledger's keys are stored: bbolt's ledger bucket and the pending and
// sealed marks are keyed by them, and MongoDB's ledger documents' _ids
// (flusher.LedgerID) are made from them. Their bytes must never change:
// if this test fails, every ledger entry stored so far is lost.
func TestLedgerKeyEncodingPinned(t *testing.T) {
	for _, tc := range []struct {
		fpLen         int
		fpSum, stream uint64
		want          string
	}{
		{10, 99, 0, "000a0000000000000063"},
		{1024, 0x0123456789abcdef, 0, "04000123456789abcdef"},
		{1024, 0x0123456789abcdef, 0xfedcba9876543210, "04000123456789abcdeffedcba9876543210"},
		{65535, 1<<64 - 1, 1, "ffffffffffffffffffff0000000000000001"},
	} {
		k := StreamKey(tc.fpLen, tc.fpSum, tc.stream)
		if got := hex.EncodeToString([]byte(k)); got != tc.want {
			t.Errorf("StreamKey(%d, %#x, %#x) = %s, want %s", tc.fpLen, tc.fpSum, tc.stream, got, tc.want)
		}
		if got := hex.EncodeToString([]byte(LedgerKey(tc.fpLen, tc.fpSum))); got != tc.want[:20] {
			t.Errorf("LedgerKey(%d, %#x) = %s, want %s", tc.fpLen, tc.fpSum, got, tc.want[:20])
		}
		if n, sum, stream, ok := ParseStreamKey(k); !ok || n != tc.fpLen || sum != tc.fpSum || stream != tc.stream {
			t.Errorf("ParseStreamKey(%s) = %d %#x %#x %v", tc.want, n, sum, stream, ok)
		}
		if n, sum, ok := ParseLedgerKey(k); !ok || n != tc.fpLen || sum != tc.fpSum {
			t.Errorf("ParseLedgerKey(%s) = %d %#x %v", tc.want, n, sum, ok)
		}
	}
	for _, bad := range []string{"", "000a00000000000000", "000a000000000000006300", "000a00000000000000630000000000000000"} {
		b, _ := hex.DecodeString(bad)
		if _, _, _, ok := ParseStreamKey(string(b)); ok {
			t.Errorf("ParseStreamKey(%s) accepted", bad)
		}
	}
	// The sums are hash/fnv's FNV-1a 64 of "ab\n", "ab\ncde\n" and "ab\ncde\nfg".
	var keys []string
	for _, k := range LedgerCandidates([]byte("ab\ncde\nfg"), 1024) {
		keys = append(keys, hex.EncodeToString([]byte(k)))
	}
	if want := []string{"0003e71ff9190541eb20", "00073c5d64ce10e899c4", "0009bf1066d028bf0213"}; !slices.Equal(keys, want) {
		t.Errorf("LedgerCandidates = %q, want %q", keys, want)
	}
	if k := hex.EncodeToString([]byte(ClaimKey([]byte("ab\ncde\nfg"), 1024))); k != "0003e71ff9190541eb20" {
		t.Errorf("ClaimKey = %s", k)
	}
}
