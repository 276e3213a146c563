package flusher

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/testenv"
)

// Progress moves with every round that finds nothing to write and every
// acknowledgement, stays put while MongoDB is down with counts waiting,
// and says since when and how the attempts fail, without the error's
// text.
func TestProgressWhileMongoDBIsDown(t *testing.T) {
	e := newEnv(t, 4)
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	fake := clock.NewFake(t0)
	e.f = e.newFlusher(t, Config{MaxOps: 4, Interval: 10 * time.Second, MaxBackoff: time.Second, Timeout: 300 * time.Millisecond, Clock: fake})
	if p := e.f.Progress(); !p.At.IsZero() {
		t.Errorf("Progress before Run: %+v, want zero", p)
	}
	e.runReady(t, fake)
	until := func(what string, advance time.Duration, cond func(Progress) bool) Progress {
		t.Helper()
		var p Progress
		if !testenv.Until(30*time.Second, func() bool {
			if p = e.f.Progress(); cond(p) {
				return true
			}
			fake.Advance(advance)
			return false
		}) {
			t.Fatalf("%s: Progress %+v after 30s", what, e.f.Progress())
		}
		return p
	}
	if p := e.f.Progress(); !p.At.Equal(t0) || !p.FailingSince.IsZero() || p.Failure != "" {
		t.Errorf("Progress at Run's start: %+v, want At %s and no failure", p, t0)
	}
	// An idle round is progress: nothing is left to write.
	idle := until("an idle round", 10*time.Second, func(p Progress) bool { return p.At.After(t0) })
	if !idle.FailingSince.IsZero() {
		t.Errorf("idle round: %+v, want no failure", idle)
	}

	// MongoDB down, counts waiting: no progress, and failing since the
	// first failed attempt.
	e.srv.Stop()
	e.commit(t, small()...)
	down := until("a failed round", 10*time.Second, func(p Progress) bool { return !p.FailingSince.IsZero() })
	if !down.At.Equal(idle.At) || down.Failure != "MongoDB unreachable" || !down.FailingSince.After(idle.At) {
		t.Errorf("with MongoDB down: %+v, want At %s (the idle round), failing \"MongoDB unreachable\" since after it", down, idle.At)
	}
	retries := e.f.Stats().Retries
	again := until("more failed attempts", time.Second, func(Progress) bool { return e.f.Stats().Retries >= retries+2 })
	if !again.FailingSince.Equal(down.FailingSince) || !again.At.Equal(idle.At) {
		t.Errorf("after more failures: %+v, want failing since the first (%s), At %s", again, down.FailingSince, idle.At)
	}

	// Back: the batch is acknowledged, which is progress, and the failure
	// is over.
	e.srv.Resume()
	back := until("the acknowledgement", time.Second, func(p Progress) bool { return p.FailingSince.IsZero() && e.f.Stats().Batches > 0 })
	if back.Failure != "" || !back.At.After(again.FailingSince) {
		t.Errorf("after the acknowledgement: %+v, want At past the failures and no failure", back)
	}
	e.check(t)
}

// failureKind names the failure without the error's text.
func TestFailureKind(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("flush: %w", errors.New("mongodb://u:pw@db.internal:27017 says no")), "writes to MongoDB failing"},
		{fmt.Errorf("flush batch 1:2: %w", context.DeadlineExceeded), "MongoDB unreachable"},
	} {
		if got := failureKind(tc.err); got != tc.want {
			t.Errorf("failureKind(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
