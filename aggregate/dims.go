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
	// held are the counts drained from counter for a commit not yet
	// made, as Commit takes them (sorted, each key once); their keys are
	// in arena, reused once a commit took them.
	held   []buffer.DimCount
	arena  []byte
	maxDay int64        // the latest day counted, up to the clock's
	limits *dims.Limits // SetDimLimits; nil: the first hit's parser's
	// heldHits are held's hits by dimension and value (across sites and
	// days): Stats.ByDim's share of the next commit.
	heldHits DimHits
}

// addDims counts h's values (its site bounded by max_sites), a hit p
// parsed: the first one's parser sets the bounds (parser.DimsConfig's
// Values: every source's, the pipeline's).
func (s *Summer) addDims(h *parser.Hit, p *parser.Parser) {
	d := &s.dim
	if d.counter == nil {
		limits, _ := p.DimsLimits()
		if d.limits != nil {
			limits = *d.limits
		}
		d.counter = dims.NewCounter(limits)
	}
	day, _ := period.Day.Bounds(h.Time) // the UTC day, as the site totals' (bucket.SiteLevel)
	d.counter.Add(h.Site, day, &h.Dims, 1)
	if day > d.maxDay {
		// A hit dated past the clock's day (a wrong date in a line) does
		// not move maxDay: the days before its yesterday would never be
		// forgotten again.
		if today, _ := period.Day.Bounds(s.clock.Now().Unix()); day <= today {
			d.maxDay = day
			d.forgetOld()
		}
	}
}

// forgetOld drops the values kept of the days before yesterday (by the
// hits' own days: maxDay's) that counted nothing between the last two
// drains: after a day's end, and after each drain for the old days a
// replay read (the values of a year of archives are not all kept).
func (d *dimsState) forgetOld() {
	yesterday, _ := period.Day.Bounds(d.maxDay - 1)
	d.counter.Forget(yesterday)
}

// sortedDims hands the counts by dimension since the last commit to held
// and returns all of held as a commit takes them.
func (s *Summer) sortedDims() []buffer.DimCount {
	d := &s.dim
	if d.counter == nil {
		return nil
	}
	before := len(d.held)
	d.counter.Drain(func(site string, day int64, dm dims.Dim, value string, n uint64) {
		start := len(d.arena)
		d.arena = buffer.AppendDimKey(d.arena, []byte(site), dm, value, day)
		d.held = append(d.held, buffer.DimCount{Key: d.arena[start:len(d.arena):len(d.arena)], N: n})
		d.holdHits(dm, value, n)
	})
	d.forgetOld()
	switch {
	case len(d.held) == before: // nothing new
	case before > 0: // a commit failed: a key may be in twice
		d.held = buffer.MergeDimCounts(d.held)
	default:
		buffer.SortDimCounts(d.held) // each key once: the Counter's
	}
	if len(d.held) == 0 {
		return nil
	}
	return d.held
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
	s.dim.forgetHeld()
}

// forgetHeld empties held, keeping its room and arena's.
func (d *dimsState) forgetHeld() {
	clear(d.held) // the keys' arena is reused
	d.held, d.arena = d.held[:0], d.arena[:0]
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
		s.dim.forgetOld()
	}
	s.countHeld()
	s.dim.forgetHeld()
}
