package aggregate

// Counts by dimension (package dims): each hit's values (parser.Hit.Dims,
// with parser.Config.Dims) counted per site and UTC day in line order by
// a dims.Counter, which keeps each dimension's first values of a day and
// counts the rest as dims.Other; what it counted goes into the next
// commit (buffer.Commit.Dims).

import (
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/period"
)

// dimsState is the Summer's counts by dimension: the counter, and what
// it handed on for a commit not yet made (kept until one succeeds).
type dimsState struct {
	counter *dims.Counter
	limits  *dims.Limits      // the counter's; nil: dims.DefaultLimits
	held    map[string]uint64 // buffer.AppendDimKey -> hits, drained from counter
	maxDay  int64             // the latest day counted
	// heldHits are held's hits by dimension and value (across sites and
	// days): Stats.ByDim's share of the next commit.
	heldHits DimHits
}

// addDims counts h's values (its site bounded by max_sites).
func (s *Summer) addDims(h *parser.Hit) {
	d := &s.dim
	if d.counter == nil {
		lim := dims.DefaultLimits
		if d.limits != nil {
			lim = *d.limits
		}
		d.counter = dims.NewCounter(lim)
		d.held = map[string]uint64{}
	}
	day, _ := period.Day.Bounds(h.Time) // the UTC day, as the site totals' (bucket.SiteLevel)
	d.counter.Add(h.Site, day, &h.Dims, 1)
	if day > d.maxDay {
		d.maxDay = day
		yesterday, _ := period.Day.Bounds(day - 1)
		d.counter.Forget(yesterday) // the values kept of days before yesterday (by the hits' own days)
	}
}

// sortedDims hands the counts by dimension since the last commit to held
// and returns all of held as a commit takes them.
func (s *Summer) sortedDims() []buffer.DimCount {
	d := &s.dim
	if d.counter == nil {
		return nil
	}
	var key []byte
	d.counter.Drain(func(site string, day int64, dm dims.Dim, value string, n uint64) {
		key = buffer.AppendDimKey(key[:0], []byte(site), dm, value, day)
		d.held[string(key)] += n
		d.holdHits(dm, value, n)
	})
	if len(d.held) == 0 {
		return nil
	}
	out := make([]buffer.DimCount, 0, len(d.held))
	for k, n := range d.held {
		out = append(out, buffer.DimCount{Key: []byte(k), N: n})
	}
	buffer.SortDimCounts(out)
	return out
}

// SetDimLimits makes s keep l values per site, day and dimension
// (default dims.DefaultLimits; dims.NoLimits keeps every value by name,
// as verify counts the files). Call it before the first Add.
func (s *Summer) SetDimLimits(l dims.Limits) { s.dim.limits = &l }

// DimCounts returns the counts by dimension held, as a commit takes them
// (buffer.Commit.Dims): for a Summer alone (a rebuild's re-read).
func (s *Summer) DimCounts() []buffer.DimCount { return s.sortedDims() }

// holdHits adds n hits of value in dimension dm to heldHits.
func (d *dimsState) holdHits(dm dims.Dim, value string, n uint64) {
	if d.heldHits[dm] == nil {
		d.heldHits[dm] = map[string]uint64{}
	}
	d.heldHits[dm][value] += n
}

// countHeld adds heldHits to Stats.ByDim and forgets them: once per
// commit (or drain), not per hit.
func (s *Summer) countHeld() {
	s.stats.addDims(&s.dim.heldHits)
	for _, m := range s.dim.heldHits {
		clear(m)
	}
}

// committedDims forgets what a commit wrote; its hits join Stats.ByDim.
func (s *Summer) committedDims() {
	s.countHeld()
	clear(s.dim.held)
}

// dimsHeld reports whether counts by dimension wait for a commit.
func (s *Summer) dimsHeld() bool {
	return len(s.dim.held) > 0 || s.dim.counter != nil && s.dim.counter.Held() > 0
}

// dropDims forgets the counts by dimension held, not the values kept;
// their hits join Stats.ByDim (drained, as Measures).
func (s *Summer) dropDims() {
	if s.dim.counter != nil {
		s.dim.counter.Drain(func(_ string, _ int64, dm dims.Dim, value string, n uint64) { s.dim.holdHits(dm, value, n) })
	}
	s.countHeld()
	clear(s.dim.held)
}
