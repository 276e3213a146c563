package flusher

import (
	"fmt"
	"testing"
)

// The known set remembers what was added, per pass, forgets buckets that
// ended more than knownKeep before the latest one written (the data's
// clock: preallocated buckets do not move it), and holds at most
// knownMax per pass.
func TestKnownForgetsAndIsBounded(t *testing.T) {
	k := newKnown()
	one := func(p pass, id string, end int64, written bool) {
		k.add(p, 1, func(int) string { return id }, func(int) int64 { return end }, written)
	}
	const t0 = 1_700_000_040
	one(minutePass, "a", t0, true)
	one(minutePass, "next", t0+7200, false) // preallocated: the clock stays
	one(dailyPass, "a", t0, true)
	if !k.has(minutePass, "a") || k.has(minutePass, "b") || !k.has(dailyPass, "a") || k.has(monthlyPass, "a") || !k.has(minutePass, "next") {
		t.Fatal("has does not answer what was added, per pass")
	}
	// Two hours of minute buckets later, "a" is forgotten; the daily
	// bucket, two days' keep, is not.
	for m := int64(1); m <= 120; m++ {
		one(minutePass, fmt.Sprint("m", m), t0+60*m, true)
	}
	one(dailyPass, "b", t0+7200, true)
	if k.has(minutePass, "a") || !k.has(minutePass, "m120") || !k.has(minutePass, "next") || !k.has(dailyPass, "a") {
		t.Error("the minute bucket of two hours ago is remembered, or a recent one forgotten")
	}
	if n := k.size(); n > 60+15+1+2 {
		t.Errorf("%d entries after 2 hours of one minute bucket a minute, want about ten minutes'", n)
	}

	// Bounded: past knownMax, buckets of the latest period alone are not
	// remembered (they take the insert, meet the duplicate, and count
	// once all the same).
	k = newKnown()
	k.add(sitePass, knownMax+10, func(i int) string { return fmt.Sprint(i) }, func(int) int64 { return t0 }, true)
	if n := k.size(); n != knownMax {
		t.Errorf("%d entries, want at most %d", n, knownMax)
	}
	// A full set forgets its oldest buckets first, so the current
	// period's stay remembered: the set is full of minute buckets of the
	// last ten minutes (within the keep), then the next minute's come.
	k = newKnown()
	per := knownMax / 10
	for m := range 10 {
		k.add(minutePass, per, func(i int) string { return fmt.Sprint(m, "/", i) }, func(int) int64 { return t0 + 60*int64(m) }, true)
	}
	k.add(minutePass, knownMax/2, func(i int) string { return fmt.Sprint("now/", i) }, func(int) int64 { return t0 + 600 }, true)
	if !k.has(minutePass, "now/0") || !k.has(minutePass, fmt.Sprint("now/", knownMax/2-1)) || !k.has(minutePass, fmt.Sprint(9, "/", per-1)) {
		t.Error("a full set did not keep the current and recent buckets")
	}
	if k.has(minutePass, "0/0") {
		t.Error("a full set kept its oldest bucket")
	}
	if n := k.size(); n > knownMax {
		t.Errorf("%d entries, want at most %d", n, knownMax)
	}
}
