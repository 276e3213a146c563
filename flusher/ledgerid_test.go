package flusher

import (
	"testing"

	"github.com/logtally/logtally/buffer"
)

// MongoDB's ledger documents and the replay claims are stored under these
// _ids: they must never change, or every host's ledger entries and claims
// are lost.
func TestLedgerIDPinned(t *testing.T) {
	for _, tc := range []struct {
		key, id string
	}{
		{buffer.LedgerKey(10, 99), "10:0000000000000063"},
		{buffer.StreamKey(1024, 0x0123456789abcdef, 0xfedcba9876543210), "1024:0123456789abcdef:fedcba9876543210"},
		{buffer.StreamKey(65535, 1<<64-1, 1), "65535:ffffffffffffffff:0000000000000001"},
	} {
		if got := LedgerID(tc.key); got != tc.id {
			t.Errorf("LedgerID(%x) = %s, want %s", tc.key, got, tc.id)
		}
		if got := ClaimID(tc.key); got != "claim:"+tc.id {
			t.Errorf("ClaimID(%x) = %s, want claim:%s", tc.key, got, tc.id)
		}
		if k, ok := parseLedgerID(tc.id); !ok || k != tc.key {
			t.Errorf("parseLedgerID(%s) = %x %v, want %x", tc.id, k, ok, tc.key)
		}
	}
	for _, bad := range []string{"", "10", "0:0000000000000063", "65536:0000000000000063", "10:63", "10:000000000000006g",
		"10:0000000000000063:0000000000000000", "10:0000000000000063:1", "10:0000000000000063:0000000000000001:x", "claim:10:0000000000000063"} {
		if k, ok := parseLedgerID(bad); ok {
			t.Errorf("parseLedgerID(%q) = %x, accepted", bad, k)
		}
	}
}
