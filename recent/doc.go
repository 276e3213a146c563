// Package recent remembers a value for each of the short byte strings
// met last: a fixed table in front of a bigger, slower cache or a
// computation, so that a hot path finds the value of a string it met a
// moment ago (a client address, a referrer) without a map lookup or an
// allocation.
//
// A Table has sets of Ways entries; a key picks its set by its hash
// (hash/maphash, a seed per Table) and is compared byte for byte with the
// entries whose tag (16 bits of the hash) matches, so a value is never
// another key's. A new key takes its set's entries in turn (first in,
// first out). Keys longer than the Table's keyMax are not kept.
//
// Caveats:
//
//   - Not safe for concurrent use: one Table per goroutine (per parser).
//   - The memory is taken by New, whole: entries × (keyMax + the value's
//     size + 3) bytes.
//   - A value found is a pointer into the table: valid until the next
//     Lookup or Clear.
package recent
