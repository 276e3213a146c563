package flusher

import (
	"sync/atomic"
	"time"
)

// FlushBuckets are the upper bounds, in seconds, of the flush duration
// histogram in Stats: how long writing one batch took, from its record to
// its acknowledgement.
var FlushBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// timing keeps the flush duration histogram, the failed attempts and the
// time of the last acknowledged batch.
type timing struct {
	counts   [16]atomic.Uint64 // per FlushBuckets bound, then +Inf
	sumNanos atomic.Uint64
	failed   atomic.Uint64
	lastAck  atomic.Int64 // Unix nanoseconds
}

// done records a batch written in d, acknowledged at now.
func (t *timing) done(d time.Duration, now time.Time) {
	i := len(FlushBuckets)
	for j, b := range FlushBuckets {
		if d.Seconds() <= b {
			i = j
			break
		}
	}
	t.counts[i].Add(1)
	t.sumNanos.Add(uint64(max(d, 0)))
	t.lastAck.Store(now.UnixNano())
}

// fill copies the timing into st.
func (t *timing) fill(st *Stats) {
	st.FlushDurations = make([]uint64, len(FlushBuckets)+1)
	for i := range st.FlushDurations {
		n := t.counts[i].Load()
		st.FlushDurations[i] = n
		st.FlushCount += n
	}
	st.FlushSeconds = float64(t.sumNanos.Load()) / 1e9
	st.FailedFlushes = t.failed.Load()
	if n := t.lastAck.Load(); n != 0 {
		st.LastAck = time.Unix(0, n)
	}
}
