package stream

import (
	"encoding/hex"
	"slices"
	"testing"

	"github.com/logtally/logtally/fnv1a"
)

// The ledger's keys are stored: bbolt's ledger bucket and the pending and
// sealed marks are keyed by them, and MongoDB's ledger documents' _ids
// (LedgerID) are made from them. Their bytes must never change:
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
		k := EntryKey(tc.fpLen, tc.fpSum, tc.stream)
		if got := hex.EncodeToString([]byte(k)); got != tc.want {
			t.Errorf("EntryKey(%d, %#x, %#x) = %s, want %s", tc.fpLen, tc.fpSum, tc.stream, got, tc.want)
		}
		if got := hex.EncodeToString([]byte(LedgerKey(tc.fpLen, tc.fpSum))); got != tc.want[:20] {
			t.Errorf("LedgerKey(%d, %#x) = %s, want %s", tc.fpLen, tc.fpSum, got, tc.want[:20])
		}
		if n, sum, stream, ok := ParseEntryKey(k); !ok || n != tc.fpLen || sum != tc.fpSum || stream != tc.stream {
			t.Errorf("ParseEntryKey(%s) = %d %#x %#x %v", tc.want, n, sum, stream, ok)
		}
		if n, sum, ok := ParseLedgerKey(k); !ok || n != tc.fpLen || sum != tc.fpSum {
			t.Errorf("ParseLedgerKey(%s) = %d %#x %v", tc.want, n, sum, ok)
		}
	}
	for _, bad := range []string{"", "000a00000000000000", "000a000000000000006300", "000a00000000000000630000000000000000"} {
		b, _ := hex.DecodeString(bad)
		if _, _, _, ok := ParseEntryKey(string(b)); ok {
			t.Errorf("ParseEntryKey(%s) accepted", bad)
		}
	}
	// The sums are hash/fnv's FNV-1a 64 of "ab\n", "ab\ncde\n" and "ab\ncde\nfg".
	var keys []string
	for _, k := range LedgerCandidates([]byte("ab\ncde\nfg")) {
		keys = append(keys, hex.EncodeToString([]byte(k)))
	}
	if want := []string{"0003e71ff9190541eb20", "00073c5d64ce10e899c4", "0009bf1066d028bf0213"}; !slices.Equal(keys, want) {
		t.Errorf("LedgerCandidates = %q, want %q", keys, want)
	}
	if k := hex.EncodeToString([]byte(ClaimKey([]byte("ab\ncde\nfg")))); k != "0003e71ff9190541eb20" {
		t.Errorf("ClaimKey = %s", k)
	}
}

func TestLedgerCandidates(t *testing.T) {
	head := []byte("a\nbb\nccc")
	keys := LedgerCandidates(head)
	want := []string{
		LedgerKey(2, fnv1a.Extend(fnv1a.Offset, head[:2])),
		LedgerKey(5, fnv1a.Extend(fnv1a.Offset, head[:5])),
		LedgerKey(8, fnv1a.Extend(fnv1a.Offset, head)),
	}
	if len(keys) != len(want) {
		t.Fatalf("%d keys, want %d", len(keys), len(want))
	}
	for i := range want {
		if keys[i] != want[i] {
			t.Errorf("key %d differs", i)
		}
	}
	// A head longer than the fingerprint is cut to it.
	if k := candidates([]byte("abcdef\n"), 4); len(k) != 1 || k[0] != LedgerKey(4, fnv1a.Extend(fnv1a.Offset, []byte("abcd"))) {
		t.Errorf("cut head: %q", k)
	}
}

// MongoDB's ledger documents and the replay claims are stored under these
// _ids: they must never change, or every host's ledger entries and claims
// are lost.
func TestLedgerIDPinned(t *testing.T) {
	for _, tc := range []struct {
		key, id string
	}{
		{LedgerKey(10, 99), "10:0000000000000063"},
		{EntryKey(1024, 0x0123456789abcdef, 0xfedcba9876543210), "1024:0123456789abcdef:fedcba9876543210"},
		{EntryKey(65535, 1<<64-1, 1), "65535:ffffffffffffffff:0000000000000001"},
	} {
		if got := LedgerID(tc.key); got != tc.id {
			t.Errorf("LedgerID(%x) = %s, want %s", tc.key, got, tc.id)
		}
		if got := ClaimID(tc.key); got != "claim:"+tc.id {
			t.Errorf("ClaimID(%x) = %s, want claim:%s", tc.key, got, tc.id)
		}
		if k, ok := ParseLedgerID(tc.id); !ok || k != tc.key {
			t.Errorf("ParseLedgerID(%s) = %x %v, want %x", tc.id, k, ok, tc.key)
		}
	}
	for _, bad := range []string{"", "10", "0:0000000000000063", "65536:0000000000000063", "10:63", "10:000000000000006g",
		"10:0000000000000063:0000000000000000", "10:0000000000000063:1", "10:0000000000000063:0000000000000001:x", "claim:10:0000000000000063"} {
		if k, ok := ParseLedgerID(bad); ok {
			t.Errorf("ParseLedgerID(%q) = %x, accepted", bad, k)
		}
	}
}

// A finished file's key names it in the buffer's pending and sealed
// finished sets and in meta/coarse_finished: it must never change.
func TestFinishedKeyPinned(t *testing.T) {
	cp := Checkpoint{Source: "web", Path: "/l/a.log", File: FileID{Dev: 2049, Ino: 1 << 40}, Offset: 5000, FPLen: 1024, FPSum: 0xabc, Stream: 7}
	if got, want := cp.FinishedKey(), "web\x002049:1099511627776\x001024:0000000000000abc"; got != want {
		t.Fatalf("FinishedKey = %q, want %q", got, want)
	}
}
