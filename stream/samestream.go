package stream

import "github.com/logtally/logtally/fnv1a"

// The one rule of stream identity: which bytes are the same stream, and
// where reading one starts.

// Same reports whether a stream beginning with head (its first
// bytes, decompressed, up to FingerprintSize) is the file cp describes or a
// copy of it: cp has a fingerprint and head begins with the bytes it
// covers. A followed file and its copies (cp, gzip: an archive too) are one
// stream, as the ledger, keyed by the same fingerprints, counts them: this
// is the one rule the tailer and the replay both apply (Start).
func Same(cp Checkpoint, head []byte) bool {
	return cp.FPLen > 0 && len(head) >= cp.FPLen && fnv1a.Extend(fnv1a.Offset, head[:cp.FPLen]) == cp.FPSum
}

// Start returns where reading a stream beginning with head starts:
// the most of counted (where the ledger says it is counted) and the
// offsets of the checkpoints among cps it is the same stream as
// (Same), never below either. held is the furthest of those
// checkpoints, nil when none is.
func Start(head []byte, counted int64, cps []Checkpoint) (from int64, held *Checkpoint) {
	from = max(counted, 0)
	for i := range cps {
		if Same(cps[i], head) && (held == nil || cps[i].Offset > held.Offset) {
			held = &cps[i]
		}
	}
	if held != nil {
		from = max(from, held.Offset)
	}
	return from, held
}
