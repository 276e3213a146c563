package referrer

import "unsafe"

// unsafeData returns the address of s's bytes: two strings with the same
// address share their memory (one is the other, interned).
func unsafeData(s string) *byte { return unsafe.StringData(s) }
