package aggregate

import (
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
)

// MaxSitesCounted bounds the sites Stats counts hits for: sites taken
// from the lines (site = "{host}") could otherwise grow without bound.
// Hits of further sites are counted under OtherSites.
const MaxSitesCounted = 200

// OtherSites is the site the hits of sites past MaxSitesCounted are
// counted under in Stats.HitsBySite.
const OtherSites = "(other sites)"

// SourceStats are one source's running totals.
type SourceStats struct {
	Lines, Hits uint64
}

type sourceCounters struct{ lines, hits atomic.Uint64 }

// counters are the running totals behind Stats: atomic, written by the
// goroutine that adds chunks to the Summer, read by Stats from any.
type counters struct {
	lines, hits, malformed, filtered, tooLong, other atomic.Uint64
	sitesFolded                                      atomic.Uint64
	parsedAhead                                      atomic.Uint64 // Stats.ParsedAhead
	outcomes                                         [parser.NumOutcomes]atomic.Uint64
	measures                                         [measure.N]atomic.Uint64 // Stats.Measures

	byMu     sync.Mutex // guards the maps; the counters are atomic
	bySource map[string]*sourceCounters
	bySite   map[string]*atomic.Uint64
	byDim    DimHits // guarded by byMu too
}

func (cs *counters) sourceCounter(name string) *sourceCounters {
	cs.byMu.Lock()
	defer cs.byMu.Unlock()
	if cs.bySource == nil {
		cs.bySource = map[string]*sourceCounters{}
	}
	c := cs.bySource[name]
	if c == nil {
		c = &sourceCounters{}
		cs.bySource[name] = c
	}
	return c
}

func (cs *counters) siteCounter(site []byte) *atomic.Uint64 {
	cs.byMu.Lock()
	defer cs.byMu.Unlock()
	if cs.bySite == nil {
		cs.bySite = map[string]*atomic.Uint64{}
	}
	if c := cs.bySite[string(site)]; c != nil {
		return c
	}
	name := string(site)
	if len(cs.bySite) >= MaxSitesCounted {
		name = OtherSites
		if c := cs.bySite[name]; c != nil {
			return c
		}
	}
	c := &atomic.Uint64{}
	cs.bySite[name] = c
	return c
}

// Stats are running totals since New.
type Stats struct {
	Lines, Hits, Malformed, Filtered, TooLong, Commits uint64
	// Other counts hits counted as "(other)" by max_pages_per_minute.
	Other uint64
	// SitesFolded counts hits counted under the site "(other)" by
	// max_sites (parser.Config.MaxSites).
	SitesFolded uint64
	// ParsedAhead counts the lines of Lines that a Preparser parsed, on
	// the goroutine that read them, before the aggregator counted them.
	ParsedAhead uint64
	// Outcomes counts lines per parser outcome (malformed and filtered
	// reasons).
	Outcomes parser.Counts
	// BySource holds lines and hits per source name.
	BySource map[string]SourceStats
	// HitsBySite holds hits per site, at most MaxSitesCounted of them
	// and OtherSites.
	HitsBySite map[string]uint64
	// VisitorsUnsalted counts hits of people that added no visitor: no
	// salt was held for their period (see package salts). Like Measures,
	// it counts the hits committed (or drained) and moves at each commit.
	VisitorsUnsalted uint64
	// Measures are the measures of the hits committed (or drained, for a
	// Summer): by status class, by bot class, bytes, response times. They
	// move at each commit, where Hits moves at each chunk.
	Measures measure.Vector
	// ByDim are the hits committed (or drained) by their value in each
	// dimension, with counts by dimension on (parser.Config.Dims): at most
	// MaxDimValuesCounted values a dimension, the rest as dims.Other.
	// Like Measures, they move at each commit.
	ByDim DimHits
	// FullSince is when commits began failing on a full state dir
	// (StateDirFull), zero while they do not.
	FullSince time.Time
	// FullErr is the last such commit error, nil while none fails.
	FullErr error
}

// Add adds o's totals to s, every field (a test fails on a field added
// and not summed): the counters and the maps key by key (sites past
// MaxSitesCounted, taken in name order, fold into OtherSites), Measures
// merged (measure.Vector.Merge: its maximum stays a maximum), FullSince
// the earlier of the two set, FullErr both errors joined. s never shares
// a map with o.
func (s *Stats) Add(o Stats) {
	s.Lines += o.Lines
	s.Hits += o.Hits
	s.Malformed += o.Malformed
	s.Filtered += o.Filtered
	s.TooLong += o.TooLong
	s.Commits += o.Commits
	s.Other += o.Other
	s.SitesFolded += o.SitesFolded
	s.ParsedAhead += o.ParsedAhead
	s.Outcomes.Add(&o.Outcomes)
	if len(o.BySource) > 0 && s.BySource == nil {
		s.BySource = make(map[string]SourceStats, len(o.BySource))
	}
	for k, v := range o.BySource {
		t := s.BySource[k]
		t.Lines += v.Lines
		t.Hits += v.Hits
		s.BySource[k] = t
	}
	if len(o.HitsBySite) > 0 && s.HitsBySite == nil {
		s.HitsBySite = make(map[string]uint64, len(o.HitsBySite))
	}
	for _, k := range slices.Sorted(maps.Keys(o.HitsBySite)) {
		name := k
		if _, ok := s.HitsBySite[k]; !ok && k != OtherSites {
			named := len(s.HitsBySite)
			if _, ok := s.HitsBySite[OtherSites]; ok {
				named--
			}
			if named >= MaxSitesCounted {
				name = OtherSites
			}
		}
		s.HitsBySite[name] += o.HitsBySite[k]
	}
	s.VisitorsUnsalted += o.VisitorsUnsalted
	s.Measures.Merge(&o.Measures)
	s.ByDim.Add(&o.ByDim)
	if !o.FullSince.IsZero() && (s.FullSince.IsZero() || o.FullSince.Before(s.FullSince)) {
		s.FullSince = o.FullSince
	}
	switch {
	case s.FullErr == nil:
		s.FullErr = o.FullErr
	case o.FullErr != nil:
		s.FullErr = errors.Join(s.FullErr, o.FullErr)
	}
}

// Stats returns the running totals (Commits, FullSince and FullErr are
// an Aggregator's: zero).
func (s *Summer) Stats() Stats {
	st := s.stats.load()
	st.VisitorsUnsalted = s.vis.unsalted.Load()
	return st
}

// Stats returns the running totals.
func (a *Aggregator) Stats() Stats {
	st := a.sum.Stats()
	st.Commits = a.commit.commits.Load()
	st.FullSince, st.FullErr = a.Full()
	return st
}

// load returns the counters' totals: the Stats but VisitorsUnsalted,
// FullSince and FullErr.
func (cs *counters) load() Stats {
	st := Stats{
		Lines: cs.lines.Load(), Hits: cs.hits.Load(), Malformed: cs.malformed.Load(), Filtered: cs.filtered.Load(),
		TooLong: cs.tooLong.Load(), Other: cs.other.Load(), SitesFolded: cs.sitesFolded.Load(),
		ParsedAhead: cs.parsedAhead.Load(),
	}
	for i := range cs.outcomes {
		st.Outcomes[i] = cs.outcomes[i].Load()
	}
	for i := range cs.measures {
		st.Measures[i] = cs.measures[i].Load()
	}
	cs.byMu.Lock()
	st.BySource = make(map[string]SourceStats, len(cs.bySource))
	for k, c := range cs.bySource {
		st.BySource[k] = SourceStats{Lines: c.lines.Load(), Hits: c.hits.Load()}
	}
	st.HitsBySite = make(map[string]uint64, len(cs.bySite))
	for k, c := range cs.bySite {
		st.HitsBySite[k] = c.Load()
	}
	st.ByDim.Add(&cs.byDim)
	cs.byMu.Unlock()
	return st
}

// addMeasures adds the measures held (committed or drained now) to the
// running totals: once per commit, not per hit, which keeps the per-line
// path to one vector addition.
func (s *Summer) addMeasures() {
	var v measure.Vector
	for i := range s.counts {
		v.Merge(&s.counts[i])
	}
	s.stats.addMeasures(&v)
}

// addMeasures adds v to the measures' totals: summed, but a maximum
// (measure.Index.IsMax) raised to v's where v's is larger.
func (cs *counters) addMeasures(v *measure.Vector) {
	for i, n := range v {
		if n == 0 {
			continue
		}
		if measure.Index(i).IsMax() {
			for old := cs.measures[i].Load(); n > old && !cs.measures[i].CompareAndSwap(old, n); old = cs.measures[i].Load() {
			}
			continue
		}
		cs.measures[i].Add(n)
	}
}

// Full returns when commits began failing on a full state dir and the last
// failure, or the zero time and nil while they do not.
func (a *Aggregator) Full() (since time.Time, err error) { return a.commit.full() }

// MaxDimValuesCounted bounds the values Stats.ByDim keeps a dimension:
// the values come from the lines (referrer hosts, networks, crawlers).
// Hits of further values are counted under dims.Other.
const MaxDimValuesCounted = 1000

// DimHits are hits by dimension (package dims) and value.
type DimHits [dims.N]map[string]uint64

// Add adds o's hits to h, value by value, a value past
// MaxDimValuesCounted (taken in name order) under dims.Other. h never
// shares a map with o.
func (h *DimHits) Add(o *DimHits) {
	for d, m := range o {
		if len(m) == 0 {
			continue
		}
		if h[d] == nil {
			h[d] = make(map[string]uint64, len(m))
		}
		for _, v := range slices.Sorted(maps.Keys(m)) {
			h.add(dims.Dim(d), v, m[v])
		}
	}
}

// add adds n hits of value v in dimension d (its map made).
func (h *DimHits) add(d dims.Dim, v string, n uint64) {
	m := h[d]
	if _, ok := m[v]; !ok && v != dims.Other {
		named := len(m)
		if _, ok := m[dims.Other]; ok {
			named--
		}
		if named >= MaxDimValuesCounted {
			v = dims.Other
		}
	}
	m[v] += n
}

// addDims adds o's hits to the running totals.
func (cs *counters) addDims(o *DimHits) {
	cs.byMu.Lock()
	cs.byDim.Add(o)
	cs.byMu.Unlock()
}
