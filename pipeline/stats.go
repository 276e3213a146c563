package pipeline

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/tailer"
	"github.com/logtally/logtally/visitor"
)

// Alive reports whether the aggregator and the flusher are making their
// rounds (nil), or which one has not for too long: the aggregator turns
// every CommitInterval while it holds counts (holding nothing, it waits for
// input and is alive), the flusher at least once per flush interval plus
// its retry backoff and operation timeout. It is meant for a watchdog: a
// stuck pipeline (a disk or a database call that hangs, a deadlock) stops
// proving it is alive, while one that merely waits for MongoDB does not.
func (p *Pipeline) Alive(now time.Time) error {
	if b := p.agg.LastBeat(); b.IsZero() || now.Sub(b) > 3*p.cfg.CommitInterval+time.Second {
		return fmt.Errorf("aggregator: no progress since %s", b.UTC().Format(time.RFC3339))
	}
	f := p.cfg.Flush
	limit := 2*(cmp.Or(f.Interval, flusher.DefaultInterval)+cmp.Or(f.MaxBackoff, flusher.DefaultMaxBackoff)+
		cmp.Or(f.Timeout, flusher.DefaultTimeout)) + time.Second
	if b := p.flush.LastBeat(); b.IsZero() || now.Sub(b) > limit {
		return fmt.Errorf("flusher: no progress since %s", b.UTC().Format(time.RFC3339))
	}
	return nil
}

// Stats returns the running totals.
func (p *Pipeline) Stats() Stats {
	st := Stats{Aggregator: p.agg.Stats(), Flusher: p.flush.Stats(), BufferBytes: p.buf.Size()}
	// An error (a truncated file: the watch reports it) leaves zero.
	_ = p.buf.View(func(tx *buffer.ReadTx) error {
		st.PendingKeys, st.PendingHits = tx.Unacked()
		return nil
	})
	st.Tailers = make(map[string]tailer.Stats, len(p.tailers))
	for i, t := range p.tailers {
		st.Tailers[p.cfg.Sources[i].Name] = t.Stats()
	}
	return st
}

// VisitorsNow is this host's estimate of its sites' visitors in the
// current salt period (today, or this month with monthly salts), from the
// registers its buffer holds: what it read since its sketch began (a
// rebuilt state dir starts again), not the fleet's (logtally query
// -measure visitors reads that).
type VisitorsNow struct {
	// Period is the salt period, Start the current one's start.
	Period visitor.Period
	Start  time.Time
	// Sites are the first aggregate.MaxSitesCounted sites' estimates, by
	// site name.
	Sites []buffer.VisitorEstimate
	// StdError is the estimates' relative standard error (1 s.e.).
	StdError float64
}

// VisitorsNow returns this host's visitors of the salt period holding
// now; ok is false when visitors are off.
func (p *Pipeline) VisitorsNow(now time.Time) (v VisitorsNow, ok bool, err error) {
	if p.cfg.Visitors == nil {
		return v, false, nil
	}
	start, _ := p.cfg.Visitors.Period.Bounds(now.Unix())
	v = VisitorsNow{Period: p.cfg.Visitors.Period, Start: time.Unix(start, 0).UTC(), StdError: visitor.StdError(visitor.SitePrecision)}
	err = p.buf.View(func(tx *buffer.ReadTx) (err error) {
		v.Sites, err = tx.VisitorEstimates(start, aggregate.MaxSitesCounted)
		return err
	})
	return v, true, err
}

// logStats logs the running totals.
func (p *Pipeline) logStats() {
	st := p.Stats()
	a, f := st.Aggregator, st.Flusher
	p.log.Info("stats",
		"lines", a.Lines, "hits", a.Hits, "malformed", a.Malformed, "filtered", a.Filtered, "other", a.Other,
		"too_long", a.TooLong, "commits", a.Commits, "by_reason", reasons(a.Outcomes),
		"pending_keys", st.PendingKeys, "pending_hits", st.PendingHits, "buffer_bytes", st.BufferBytes,
		"batches", f.Batches, "hits_written", f.Hits, "bulk_writes", f.BulkWrites, "updates", f.Updates,
		"finds", f.Finds, "inserts", f.Inserts, "insert_calls", f.InsertCalls, "retries", f.Retries)
}

// reasons formats the non-zero malformed and filtered counters.
func reasons(c parser.Counts) string {
	var b strings.Builder
	for o, n := range c {
		if n == 0 || parser.Outcome(o) == parser.OK {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%d", parser.Outcome(o), n)
	}
	return b.String()
}
