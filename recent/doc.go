// Package recent remembers the values of things met last, in front of a
// bigger, slower cache or a computation: a Table of the short byte
// strings met last, and a Gen, the bounded cache in front of a
// computation.
//
// A Table lets a hot path find the value of a string it met a moment ago
// (a client address, a referrer) without a map lookup or an allocation.
// It has sets of Ways entries; a key picks its set by its hash
// (hash/maphash, a seed per Table) and is compared byte for byte with the
// entries whose tag (16 bits of the hash) matches, so a value is never
// another key's. A new key takes its set's entries in turn (first in,
// first out). Keys longer than the Table's keyMax are not kept.
//
// A Gen (botclass's user agents, referrer's hosts, geo's addresses) keeps
// two generations, maps: keys are added to the current one; when it is
// full (size/2 keys) it becomes the previous one and the old previous one
// is dropped; a hit in the previous generation moves the key to the
// current one. So it holds at most size keys, those met recently or often
// survive, and no per-entry bookkeeping is needed (a cheap approximation
// of LRU). A hit is a map lookup or two and allocates nothing, a string
// key looked up by its bytes included (GetBytes).
//
// Caveats:
//
//   - Not safe for concurrent use: one Table or Gen per goroutine (per
//     parser).
//   - The memory is taken by New, whole: entries × (keyMax + the value's
//     size + 3) bytes. A Gen's maps are made whole by NewGen.
//   - A value looked up by GetBytes holds its key (Keyed): the key it is
//     moved under from the previous generation.
//   - A value found in a Table is a pointer into the table: valid until
//     the next Lookup or Clear.
package recent
