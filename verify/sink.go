package verify

import (
	"bytes"
	"cmp"
	"maps"
	"math"
	"slices"
	"sync/atomic"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/dryrun"
	"github.com/logtally/logtally/measure"
)

// A pass reads the files and keeps the sums of its window [lo, hi): hi
// starts at the range's end and is lowered, to a day's start, when the
// sums kept pass the budget (the days after it are left to the next
// pass).
type pass struct {
	first  bool         // the first pass: it notes the files' spans, sites and hits
	r      span         // the range judged; in the first pass without -from/-to, unbounded
	lo     int64        // the window's start
	hi     atomic.Int64 // the window's end
	budget int          // sums a shard keeps before it lowers hi
	// firstDay is the earliest day of the sums kept by any shard: a
	// shard holding one later day may drop it.
	firstDay atomic.Int64
}

// newPass returns the pass of window [lo, r.to) in range r.
func newPass(first bool, r span, lo int64) *pass {
	p := &pass{first: first, r: r, lo: lo}
	p.hi.Store(r.to)
	p.firstDay.Store(math.MaxInt64)
	return p
}

// span is a range of Unix seconds [from, to).
type span struct{ from, to int64 }

func (s span) has(sec int64) bool { return sec >= s.from && sec < s.to }

// all is the unbounded span.
var all = span{math.MinInt64, math.MaxInt64}

// newShard returns the sink of one worker of the dry run.
func (p *pass) newShard() dryrun.Sink {
	return &shard{p: p, pages: map[string]*pageSums{}, sites: map[string]struct{}{}, minDay: math.MaxInt64,
		dims: map[string]uint64{}, cut: map[siteDay]struct{}{}}
}

// shard is one dry-run worker's sink: the sums of the window it was
// handed, by page, and in the first pass what it saw of the files.
type shard struct {
	p      *pass
	pages  map[string]*pageSums // by the keys' site and page part (buffer.SplitKey)
	n      int                  // sums held
	limit  int                  // sums held before the next shed (0: the budget)
	minDay int64                // the earliest day of the sums held
	err    error                // a key that does not decode (a bug)
	// dims are the counts by dimension of the window's days, by
	// dimension key (buffer.AppendDimKey: site, dimension, value, day).
	dims map[string]uint64

	// The first pass's notes.
	spans   []fileSpan           // by file: its hits' seconds
	sites   map[string]struct{}  // the sites of every hit
	inRange uint64               // views in the range
	outside uint64               // views outside it (-from, -to)
	cut     map[siteDay]struct{} // the site days of those views
}

// siteDay is a site and the start of a UTC day (Unix seconds).
type siteDay struct {
	site string
	day  int64
}

// pageSums are the sums of one site and page, by arrival.
type pageSums struct {
	site, page []byte // of prefix
	prefix     string // the keys' site and page part
	sums       []secSums
}

// secSums is the sum of one second.
type secSums struct {
	sec int64
	v   measure.Vector
}

// fileSpan is the first and last second of a file's hits.
type fileSpan struct {
	min, max int64
	any      bool
}

func (s *fileSpan) add(sec int64) {
	if !s.any {
		s.min, s.max, s.any = sec, sec, true
		return
	}
	s.min, s.max = min(s.min, sec), max(s.max, sec)
}

// Sums keeps one sum of the window, and in the first pass notes its file's
// span, its site and whether it is in the range.
func (s *shard) Sums(file int, key []byte, v *measure.Vector) {
	prefix, sec, err := buffer.SplitKey(key)
	if err != nil {
		s.fail(err)
		return
	}
	p := s.p
	ps := s.pages[string(prefix)]
	if ps == nil {
		site, page, _, err := buffer.DecodeKey(key)
		if err != nil {
			s.fail(err)
			return
		}
		ps = &pageSums{site: bytes.Clone(site), page: bytes.Clone(page), prefix: string(prefix)}
		s.pages[ps.prefix] = ps
		if p.first {
			s.sites[string(site)] = struct{}{}
		}
	}
	if p.first {
		if file >= len(s.spans) {
			s.spans = append(s.spans, make([]fileSpan, file+1-len(s.spans))...)
		}
		s.spans[file].add(sec)
		if !p.r.has(sec) {
			s.outside += v[measure.Views]
			start, _ := bucket.Daily.Bounds(sec)
			s.cut[siteDay{string(ps.site), start}] = struct{}{}
			return
		}
		s.inRange += v[measure.Views]
	}
	if sec < p.lo || sec >= p.hi.Load() {
		return
	}
	ps.sums = append(ps.sums, secSums{sec, *v})
	s.n++
	if d := day(sec); d < s.minDay {
		s.minDay = d
		for cur := p.firstDay.Load(); d < cur && !p.firstDay.CompareAndSwap(cur, d); cur = p.firstDay.Load() {
		}
	}
	if s.n > max(s.limit, p.budget) {
		s.shed()
	}
}

// Dims keeps one count by dimension of a day the window holds (the
// window's days are whole but for the range's first and last).
func (s *shard) Dims(_ int, key []byte, n uint64) {
	_, _, _, d, err := buffer.DecodeDimKey(key)
	if err != nil {
		s.fail(err)
		return
	}
	if dayEnd(d) <= s.p.lo || d >= s.p.hi.Load() {
		return
	}
	s.dims[string(key)] += n
}

// days returns the sums held by day.
func (s *shard) days() map[int64]int {
	out := map[int64]int{}
	for _, ps := range s.pages {
		for i := range ps.sums {
			out[day(ps.sums[i].sec)]++
		}
	}
	return out
}

func (s *shard) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// dayEnd returns the end of the UTC day starting at start (Unix
// seconds), the start of a dimension key's day.
func dayEnd(start int64) int64 {
	_, end := bucket.Daily.Bounds(start)
	return end
}

// day returns the UTC day (days since the epoch) holding sec.
func day(sec int64) int64 {
	start, _ := bucket.Daily.Bounds(sec)
	return start / 86400
}

// shed lowers the window's end so that the sums this shard keeps fall to
// about half its budget, dropping the days after it; the window's first
// day (of every shard's sums) is always kept, whole.
func (s *shard) shed() {
	if hi := cut(s.days(), s.p.firstDay.Load(), s.p.budget/2); hi != math.MaxInt64 {
		for cur := s.p.hi.Load(); hi < cur && !s.p.hi.CompareAndSwap(cur, hi); cur = s.p.hi.Load() {
		}
		s.drop(s.p.hi.Load())
	}
	// A first day past the budget stays: shed again once it doubles, not
	// at every sum (each shed reads every sum held).
	s.limit = 2 * s.n
}

// cut returns the start of the first day of days (sums by day) after
// first whose sums, added to those of the days before it, pass keep: the
// end of a window holding at most keep of them, or first whole; MaxInt64
// when every day fits, or none is after first.
func cut(days map[int64]int, first int64, keep int) int64 {
	kept := 0
	for _, d := range slices.Sorted(maps.Keys(days)) {
		if d > first && kept+days[d] > keep {
			return d * 86400
		}
		kept += days[d]
	}
	return math.MaxInt64
}

// drop forgets the sums at or after hi.
func (s *shard) drop(hi int64) {
	for k, ps := range s.pages {
		ps.sums = slices.DeleteFunc(ps.sums, func(x secSums) bool { return x.sec >= hi })
		if len(ps.sums) == 0 {
			delete(s.pages, k)
		}
	}
	s.n = 0
	for _, ps := range s.pages {
		s.n += len(ps.sums)
	}
	for k := range s.dims {
		if _, _, _, d, _ := buffer.DecodeDimKey([]byte(k)); d >= hi {
			delete(s.dims, k)
		}
	}
}

// windowDims returns every shard's counts by dimension of the days
// overlapping w, by site and day start.
func windowDims(shards []*shard, w span) map[string]map[int64]*siteDims {
	out := map[string]map[int64]*siteDims{}
	for _, s := range shards {
		for k, n := range s.dims {
			site, dm, value, d, err := buffer.DecodeDimKey([]byte(k))
			if err != nil || dayEnd(d) <= w.from || d >= w.to {
				continue // (a bad key failed the shard)
			}
			days := out[string(site)]
			if days == nil {
				days = map[int64]*siteDims{}
				out[string(site)] = days
			}
			sd := days[d]
			if sd == nil {
				sd = &siteDims{}
				days[d] = sd
			}
			if sd[dm] == nil {
				sd[dm] = map[string]int64{}
			}
			sd[dm][string(value)] += int64(n)
		}
	}
	return out
}

// window returns every shard's sums in w by site, each site's pages in
// page order, each page's sums in time order: as the flusher reads a
// batch, but for the order of the pages, which does not matter.
func window(shards []*shard, w span) map[string][]*pageSums {
	merged := map[string]*pageSums{}
	for _, s := range shards {
		for k, ps := range s.pages {
			m := merged[k]
			if m == nil {
				m = &pageSums{site: ps.site, page: ps.page, prefix: ps.prefix}
				merged[k] = m
			}
			for _, x := range ps.sums {
				if w.has(x.sec) {
					m.sums = append(m.sums, x)
				}
			}
		}
	}
	out := map[string][]*pageSums{}
	for _, ps := range merged {
		if len(ps.sums) == 0 {
			continue
		}
		slices.SortStableFunc(ps.sums, func(a, b secSums) int { return cmp.Compare(a.sec, b.sec) })
		out[string(ps.site)] = append(out[string(ps.site)], ps)
	}
	for _, pages := range out {
		slices.SortFunc(pages, func(a, b *pageSums) int { return cmp.Compare(string(a.page), string(b.page)) })
	}
	return out
}
