package stream

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/logtally/logtally/fnv1a"
)

// The ledger's keys and ids: how far every stream is counted is stored
// under them, in the state dir (bbolt keys, package buffer) and in
// MongoDB's ledger collection (document _ids, package flusher). Their
// encodings are stored: they never change.

// LedgerKey returns the ledger key of a fingerprint: its length (2 bytes)
// then its sum (8 bytes), big-endian. Entries of every stream beginning
// with those bytes have keys beginning with it (EntryKey).
func LedgerKey(fpLen int, fpSum uint64) string {
	var k [10]byte
	binary.BigEndian.PutUint16(k[:2], uint16(fpLen))
	binary.BigEndian.PutUint64(k[2:], fpSum)
	return string(k[:])
}

// EntryKey returns the ledger key of one stream's entry: LedgerKey, then
// the stream (8 bytes, big-endian; see Checkpoint.Stream); LedgerKey alone
// for stream 0 (an older logtally's entry).
func EntryKey(fpLen int, fpSum uint64, stream uint64) string {
	k := LedgerKey(fpLen, fpSum)
	if stream == 0 {
		return k
	}
	return string(binary.BigEndian.AppendUint64([]byte(k), stream))
}

// LedgerKey returns the key of the ledger entry the counting of c's file
// moves: EntryKey of its fingerprint and Stream.
func (c Checkpoint) LedgerKey() string { return EntryKey(c.FPLen, c.FPSum, c.Stream) }

// ParseLedgerKey splits a ledger key (LedgerKey's or EntryKey's) into
// fingerprint length and sum.
func ParseLedgerKey(k string) (fpLen int, fpSum uint64, ok bool) {
	fpLen, fpSum, _, ok = ParseEntryKey(k)
	return fpLen, fpSum, ok
}

// ParseEntryKey splits a ledger key into fingerprint length, sum and
// stream (0 for LedgerKey's).
func ParseEntryKey(k string) (fpLen int, fpSum, stream uint64, ok bool) {
	if len(k) != 10 && len(k) != 18 {
		return 0, 0, 0, false
	}
	b := []byte(k)
	if len(b) == 18 {
		stream = binary.BigEndian.Uint64(b[10:])
		if stream == 0 {
			return 0, 0, 0, false
		}
	}
	return int(binary.BigEndian.Uint16(b[:2])), binary.BigEndian.Uint64(b[2:10]), stream, true
}

// LedgerCandidates returns the ledger keys under which a stream beginning
// with head (its first min(length, FingerprintSize) bytes) may have been
// marked: one per line end inside head, and head's whole length. A mark's
// key covers min(offset, FingerprintSize) bytes and offsets are line ends
// (or a finished stream's end), so these are all the keys a mark on this
// stream can have.
func LedgerCandidates(head []byte) []string { return candidates(head, FingerprintSize) }

// candidates is LedgerCandidates for a fingerprint of fpSize bytes.
func candidates(head []byte, fpSize int) []string {
	if len(head) > fpSize {
		head = head[:fpSize]
	}
	var keys []string
	h, last := fnv1a.Offset, 0
	for i, c := range head {
		if c == '\n' {
			h = fnv1a.Extend(h, head[last:i+1])
			last = i + 1
			keys = append(keys, LedgerKey(i+1, h))
		}
	}
	if last < len(head) {
		keys = append(keys, LedgerKey(len(head), fnv1a.Extend(h, head[last:])))
	}
	return keys
}

// ClaimKey returns the ledger key a replay claims to read a stream
// beginning with head (see ledger.Store.Claim): the first of its
// LedgerCandidates, the key of its first line, which every copy of the
// stream shares whatever its length. Empty for an empty head.
func ClaimKey(head []byte) string {
	keys := LedgerCandidates(head)
	if len(keys) == 0 {
		return ""
	}
	return keys[0]
}

// LedgerID returns the _id of a ledger key's document in MongoDB:
// "<length>:<sum in 16 hex digits>", then ":<stream in 16 hex digits>"
// for a stream's entry (EntryKey). The entries of all streams under one
// fingerprint have _ids between LedgerID(fingerprint key)+":" and +";".
func LedgerID(key string) string {
	n, sum, stream, _ := ParseEntryKey(key)
	id := strconv.Itoa(n) + ":" + fmt.Sprintf("%016x", sum)
	if stream != 0 {
		id += ":" + fmt.Sprintf("%016x", stream)
	}
	return id
}

// ParseLedgerID is LedgerID's inverse: the ledger key of a document's
// _id, ok false when id is not one.
func ParseLedgerID(id string) (string, bool) {
	var n int
	var sum, stream uint64
	parts := strings.Split(id, ":")
	if len(parts) != 2 && len(parts) != 3 {
		return "", false
	}
	n, err := strconv.Atoi(parts[0])
	if err != nil || n <= 0 || n > 1<<16-1 || len(parts[1]) != 16 {
		return "", false
	}
	if sum, err = strconv.ParseUint(parts[1], 16, 64); err != nil {
		return "", false
	}
	if len(parts) == 3 {
		if stream, err = strconv.ParseUint(parts[2], 16, 64); err != nil || len(parts[2]) != 16 || stream == 0 {
			return "", false
		}
	}
	return EntryKey(n, sum, stream), true
}

// ClaimID returns the _id of the claim on a ledger key's entry:
// "claim:" and the entry's LedgerID.
func ClaimID(key string) string { return "claim:" + LedgerID(key) }

// FinishedKey names one finished file (a batch's finished set, package
// buffer): its checkpoint Key (source and identity) and its fingerprint,
// so that a reused inode finished again is another entry.
func (c Checkpoint) FinishedKey() string {
	return fmt.Sprintf("%s\x00%d:%016x", c.Key(), c.FPLen, c.FPSum)
}
