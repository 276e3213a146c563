package pipeline

import (
	"fmt"
	"testing"
	"time"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/internal/testenv"
)

// Aggregator returns the aggregator, for tests that wait on its state
// (replays see the pipeline through replay.Target only).
func (p *Pipeline) Aggregator() *aggregate.Aggregator { return p.agg }

// WaitLimit bounds the tests' waits for MongoDB to hold what they wrote: a
// rebuild under -race beside the whole suite on a loaded machine has taken
// over a minute.
const WaitLimit = 3 * time.Minute

// WaitStatus waits, at most WaitLimit, until p's Status satisfies cond,
// and returns it.
func WaitStatus(t *testing.T, p *Pipeline, what string, cond func(Status) bool) Status {
	t.Helper()
	var st Status
	if !testenv.Until(WaitLimit, func() bool {
		var err error
		if st, err = p.Status(); err != nil {
			t.Fatal(err)
		}
		return cond(st)
	}) {
		t.Fatalf("timed out after %v waiting for %s; status %+v", WaitLimit, what, st)
	}
	return st
}

// Settle waits until p has read every file to its end and MongoDB holds
// all it read (Status.Settled): a double count would be in the buckets
// now.
func Settle(t *testing.T, p *Pipeline) {
	t.Helper()
	WaitStatus(t, p, "the pipeline to settle", Status.Settled)
}

// SettleAt waits until p is settled (Settle) with each of paths read and
// committed to its end: a test waits on the pipeline's own status, not on
// reading MongoDB over and over, then reads MongoDB once.
func SettleAt(t *testing.T, p *Pipeline, paths ...string) {
	t.Helper()
	WaitStatus(t, p, fmt.Sprintf("the pipeline to settle at the end of %d files", len(paths)), func(st Status) bool {
		if !st.Settled() {
			return false
		}
		ends := map[string]bool{}
		for _, s := range st.Sources {
			for _, f := range s.Files {
				if f.Checkpoint && f.Size > 0 && f.Offset == f.Size {
					ends[f.Path] = true
				}
			}
		}
		for _, path := range paths {
			if !ends[path] {
				return false
			}
		}
		return true
	})
}

// ReadToEnd waits until p has read every file to its end and committed
// it to the buffer, flushed or not.
func ReadToEnd(t *testing.T, p *Pipeline) Status {
	t.Helper()
	return WaitStatus(t, p, "every file read and committed", func(st Status) bool {
		for _, s := range st.Sources {
			for _, f := range s.Files {
				if f.Lag > 0 {
					return false
				}
			}
		}
		return true
	})
}
