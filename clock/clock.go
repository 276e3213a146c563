// Package clock lets components read time and wait through an interface,
// so tests drive timing with a Fake instead of sleeping.
//
// A process has one clock, made in cmd/ and handed down: every reading of
// the current time that decides something (retention, preallocation,
// salts, ledger expiry, health) goes through it. Two readings stay on the
// wall clock on purpose: socket deadlines, and times compared with file
// modification times, which the kernel stamps with the wall clock.
//
// In a test binary (testing.Testing) Real reads the wall clock moved by
// the duration in the environment variable LOGTALLY_TEST_CLOCK_OFFSET
// (time.ParseDuration, e.g. "43830h" for five years), so the whole suite
// can be run as on another day; a test whose verdict depends on today's
// date fails then. Other binaries never read the variable.
package clock

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"
)

// OffsetEnv is the variable that moves Real in test binaries.
const OffsetEnv = "LOGTALLY_TEST_CLOCK_OFFSET"

// offset is what Real adds to the wall clock: zero outside test binaries.
var offset = testOffset(testing.Testing(), os.Getenv(OffsetEnv))

// testOffset parses OffsetEnv's value in a test binary; a malformed value
// stops the test binary at once rather than running on today's date.
func testOffset(inTest bool, v string) time.Duration {
	if !inTest || v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		panic(fmt.Sprintf("clock: %s=%q: %v", OffsetEnv, v, err))
	}
	return d
}

// Offset returns how far Real is moved from the wall clock: zero except in
// a test binary run with OffsetEnv set.
func Offset() time.Duration { return offset }

// Clock is the time source components use. Real is the production one.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives the time once d has passed.
	After(d time.Duration) <-chan time.Time
}

// Files is the clock the kernel stamps file modification times with:
// time.Now(), never moved by Offset. Times compared with a file's mtime
// are read from it.
type Files struct{}

// Now returns time.Now().
func (Files) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (Files) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Real is the wall clock (moved by Offset in a test binary).
type Real struct{}

// Now returns time.Now(), plus Offset.
func (Real) Now() time.Time {
	if offset != 0 {
		return time.Now().Add(offset)
	}
	return time.Now()
}

// After returns time.After(d).
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Fake is a manually advanced clock for tests. The zero value is not
// usable; create one with NewFake.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
	changed chan struct{}
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

// NewFake returns a Fake clock reading t.
func NewFake(t time.Time) *Fake {
	return &Fake{now: t, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// After returns a channel that fires when the fake time has been advanced
// by at least d. A d of zero or less fires at once.
func (f *Fake) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- f.now
		return ch
	}
	f.waiters = append(f.waiters, waiter{at: f.now.Add(d), ch: ch})
	close(f.changed)
	f.changed = make(chan struct{})
	return ch
}

// Advance moves the fake time forward by d and fires every waiter that is due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	sort.Slice(f.waiters, func(i, j int) bool { return f.waiters[i].at.Before(f.waiters[j].at) })
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if w.at.After(f.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- f.now
	}
	f.waiters = kept
}

// Waiters returns how many After channels are pending.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// BlockUntil waits until at least n After channels are pending, so a test
// can advance the clock knowing the component is waiting on it.
func (f *Fake) BlockUntil(n int) {
	for {
		f.mu.Lock()
		if len(f.waiters) >= n {
			f.mu.Unlock()
			return
		}
		ch := f.changed
		f.mu.Unlock()
		<-ch
	}
}
