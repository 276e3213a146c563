// Package fnv1a is the 64-bit FNV-1a hash, resumable from a stored sum.
// Its persisted uses all go through it, so they cannot drift apart:
// the tailer's file fingerprints (stored in checkpoints, in MongoDB's
// progress record, and as the buffer's and MongoDB's ledger keys) and the
// parser's suffix of over-long pages (stored in
// bucket ids), and the tail shard of a cold page (bucket.Plan.Route). Its output equals hash/fnv's New64a; tests pin both uses.
package fnv1a

// Offset is the hash of no bytes: where a hash starts.
const Offset uint64 = 14695981039346656037

const prime uint64 = 1099511628211

// Extend continues the hash h (Offset to start one) over p. It does not
// allocate.
func Extend(h uint64, p []byte) uint64 {
	for _, c := range p {
		h ^= uint64(c)
		h *= prime
	}
	return h
}
