package pipeline

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/flusher"
)

// Health's decision on the components' facts, the clock moving: hits
// pending with nothing written for longer than unhealthy_after fail it,
// saying since when and why; an acknowledgement or an idle flusher is
// healthy; a full buffer fails it once it has paused reading for longer
// than unhealthy_after.
func TestHealthFollowsProgress(t *testing.T) {
	const after = time.Minute
	t0 := time.Date(2026, 3, 1, 13, 27, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	h := health{flush: flusher.Progress{At: t0}} // Run began
	ok := func(what string) {
		t.Helper()
		if err := h.check(clk.Now(), after); err != nil {
			t.Errorf("%s: %v, want healthy", what, err)
		}
	}
	fails := func(what string, want ...string) {
		t.Helper()
		err := h.check(clk.Now(), after)
		if err == nil {
			t.Errorf("%s: healthy, want %q", what, want)
			return
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q, want %q in it", what, err, w)
			}
		}
	}

	// Idle: nothing pending, nothing written for hours.
	clk.Advance(5 * time.Hour)
	ok("idle for hours")

	// MongoDB goes down at 13:27; 300 hits wait; the flusher's last
	// progress was its idle round at 13:27.
	h.flush = flusher.Progress{At: t0, FailingSince: t0.Add(5 * time.Second), Failure: "MongoDB unreachable"}
	clk = clock.NewFake(t0.Add(30 * time.Second))
	h.pendingKeys, h.pendingHits = 12, 300
	ok("hits pending for less than unhealthy_after")
	clk.Advance(after)
	fails("hits pending, nothing written for longer than unhealthy_after",
		"MongoDB unreachable since 2026-03-01T13:27:05Z", "300 hits pending", "nothing written to MongoDB since 2026-03-01T13:27:00Z", "http.unhealthy_after 1m0s")

	// A slow write, not a failing one: still unhealthy, without a failure.
	h.flush.FailingSince, h.flush.Failure = time.Time{}, ""
	fails("no progress and no failure", "300 hits pending, nothing written to MongoDB since 2026-03-01T13:27:00Z")
	if err := h.check(clk.Now(), after); err != nil && strings.Contains(err.Error(), "since 0001") {
		t.Errorf("a zero time in %q", err)
	}

	// MongoDB back: a batch acknowledged now, hits read meanwhile still
	// pending.
	h.flush = flusher.Progress{At: clk.Now()}
	ok("a batch acknowledged, hits still pending")
	clk.Advance(after / 2)
	ok("half of unhealthy_after after the acknowledgement")

	// Nothing pending: healthy however long ago the last write.
	h.pendingKeys, h.pendingHits = 0, 0
	clk.Advance(10 * after)
	ok("nothing pending")

	// Reading paused on a full buffer: unhealthy once it lasts.
	h.bufferFull = clk.Now()
	h.pendingKeys, h.pendingHits, h.flush.At = 5, 900, clk.Now()
	clk.Advance(after - time.Second)
	h.flush.At = clk.Now() // batches acknowledged, but less than is read
	ok("buffer full for less than unhealthy_after")
	clk.Advance(2 * time.Second)
	h.flush.At = clk.Now()
	fails("buffer full for longer than unhealthy_after", "buffer full since "+utc(h.bufferFull), "reading paused")
	h.bufferFull = time.Time{}
	ok("buffer no longer full")

	// A full state dir fails at once, with the MongoDB reason beside it.
	h.stateDirFull, h.stateDirErr = clk.Now(), errors.New("no space left on device")
	fails("state dir full", "state dir full: commit failing since "+utc(clk.Now()), "no space left on device")
	h.flush = flusher.Progress{At: clk.Now(), FailingSince: clk.Now(), Failure: "MongoDB refuses the credentials"}
	clk.Advance(2 * after)
	fails("state dir full and MongoDB refusing", "state dir full", "; MongoDB refuses the credentials since")
}
