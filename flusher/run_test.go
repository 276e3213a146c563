package flusher

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/testenv"
)

// Rounds begin an Interval apart: the time a round takes to write its
// batch does not delay the next seal.
func TestRunRoundsBeginAnIntervalApart(t *testing.T) {
	e := newEnv(t, 4)
	fake := clock.NewFake(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	e.f = e.newFlusher(t, Config{MaxOps: 4, Interval: 10 * time.Second, Clock: fake})
	var slow atomic.Bool
	testHooks(e.f).afterChunk = func(pass, int) error {
		if slow.CompareAndSwap(true, false) {
			fake.Advance(4 * time.Second) // the round's first chunk takes 4 s
		}
		return nil
	}
	e.runReady(t, fake)
	waiting := fake.Waiters()
	batches := func(n uint64) {
		t.Helper()
		if !testenv.Until(30*time.Second, func() bool { return e.f.Stats().Batches >= n }) {
			t.Fatalf("%d batches written, want %d", e.f.Stats().Batches, n)
		}
	}

	e.commit(t, small()[:2]...)
	slow.Store(true)
	fake.Advance(10 * time.Second)
	batches(1)
	if !testenv.Until(30*time.Second, func() bool { return fake.Waiters() >= waiting }) {
		t.Fatal("Run does not wait for its next round")
	}
	// The round began 4 s ago: the next is due in 6 s, not 10.
	e.commit(t, small()[2:]...)
	fake.Advance(6 * time.Second)
	batches(2)
	e.check(t)
}
