package stream

import "time"

// Entry is how far one stream is counted, as a ledger holds it: the state
// dir's (package buffer, which adds Updated) or MongoDB's (package ledger:
// Acked is Offset there, Updated zero). Both ledgers store it in their
// own encoding, under its Key (EntryKey) and LedgerID.
type Entry struct {
	// FPLen and FPSum are the fingerprint of the stream's first bytes,
	// Stream its counting's id (0: an older logtally's entry, keyed by
	// the fingerprint alone, with no tail check).
	FPLen  int
	FPSum  uint64
	Stream uint64
	// Offset is how far the stream is counted; Acked how far MongoDB has
	// acknowledged it.
	Offset, Acked int64
	// TailLen and TailSum are the tail check at Offset: the hash of the
	// bytes that end there (TailOf; TailLen 0: none).
	TailLen int
	TailSum uint64
	// Source and Path say who counted it and where the file was: for
	// people, and a replay's shorter-copy rule.
	Source, Path string
	// Updated is when the entry last moved (the state dir's ledger
	// expires entries by it).
	Updated time.Time
}

// Key returns the entry's ledger key: EntryKey's.
func (e Entry) Key() string { return EntryKey(e.FPLen, e.FPSum, e.Stream) }
