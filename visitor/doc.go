// Package visitor computes visitor keys and counts them with HyperLogLog
// sketches. It does no I/O.
package visitor
