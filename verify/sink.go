package verify

import (
	"bytes"
	"maps"
	"math"
	"slices"
	"sync/atomic"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/replay"
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
func (p *pass) newShard() replay.Sink {
	return &shard{p: p, days: map[int64]int{}, sites: map[string]struct{}{}}
}

// shard is one dry-run worker's sink: the sums of the window it was
// handed, in an arena, and in the first pass what it saw of the files.
type shard struct {
	p    *pass
	keys []byte  // the sums' keys, one after the other
	sums []entry // by arrival
	days map[int64]int
	err  error // a key that does not decode (a bug)

	// The first pass's notes.
	spans   []fileSpan          // by file: its hits' seconds
	sites   map[string]struct{} // the sites of every hit
	inRange uint64              // views in the range
	outside uint64              // views outside it (-from, -to)
}

// entry is one sum: its key (keys[off:off+n]), its second and measures.
type entry struct {
	off int
	n   int
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
	site, _, sec, err := buffer.DecodeKey(key)
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return
	}
	p := s.p
	if p.first {
		if file >= len(s.spans) {
			s.spans = append(s.spans, make([]fileSpan, file+1-len(s.spans))...)
		}
		s.spans[file].add(sec)
		if _, ok := s.sites[string(site)]; !ok {
			s.sites[string(site)] = struct{}{}
		}
		if !p.r.has(sec) {
			s.outside += v[measure.Views]
			return
		}
		s.inRange += v[measure.Views]
	}
	if sec < p.lo || sec >= p.hi.Load() {
		return
	}
	s.sums = append(s.sums, entry{off: len(s.keys), n: len(key), sec: sec, v: *v})
	s.keys = append(s.keys, key...)
	d := day(sec)
	s.days[d]++
	for cur := p.firstDay.Load(); d < cur && !p.firstDay.CompareAndSwap(cur, d); cur = p.firstDay.Load() {
	}
	if len(s.sums) > p.budget {
		s.shed()
	}
}

// day returns the UTC day (days since the epoch) holding sec.
func day(sec int64) int64 {
	d := sec / 86400
	if sec < 0 && sec%86400 != 0 {
		d--
	}
	return d
}

// shed lowers the window's end so that the sums this shard keeps fall to
// about half its budget, dropping the days after it; the window's first
// day (of every shard's sums) is always kept, whole.
func (s *shard) shed() {
	hi := cut(s.days, s.p.firstDay.Load(), s.p.budget/2)
	if hi == math.MaxInt64 {
		return
	}
	for cur := s.p.hi.Load(); hi < cur && !s.p.hi.CompareAndSwap(cur, hi); cur = s.p.hi.Load() {
	}
	s.drop(s.p.hi.Load())
}

// cut returns the start of the first day of days (sums by day) after
// first whose sums, added to those of the days before it, pass keep: the
// end of a window holding at most keep of them, or first whole; MaxInt64
// when every day fits, or none is after first.
func cut(days map[int64]int, first int64, keep int) int64 {
	ds := slices.Sorted(maps.Keys(days))
	kept := 0
	for _, d := range ds {
		if d > first && kept+days[d] > keep {
			return d * 86400
		}
		kept += days[d]
	}
	return math.MaxInt64
}

// drop forgets the sums at or after hi.
func (s *shard) drop(hi int64) {
	keys := make([]byte, 0, len(s.keys))
	sums := s.sums[:0]
	for _, e := range s.sums {
		if e.sec >= hi {
			continue
		}
		k := s.keys[e.off : e.off+e.n]
		e.off = len(keys)
		keys = append(keys, k...)
		sums = append(sums, e)
	}
	s.keys, s.sums = keys, sums
	for d := range s.days {
		if d*86400 >= hi {
			delete(s.days, d)
		}
	}
}

// sum is a sum of the window, its key in its shard's arena.
type sum struct {
	key []byte
	sec int64
	v   *measure.Vector
}

// window returns every shard's sums in w, sorted by key: by site and
// page, then by second (buffer keys sort so), as the flusher reads a
// batch.
func window(shards []*shard, w span) []sum {
	n := 0
	for _, s := range shards {
		n += len(s.sums)
	}
	out := make([]sum, 0, n)
	for _, s := range shards {
		for i := range s.sums {
			e := &s.sums[i]
			if w.has(e.sec) {
				out = append(out, sum{s.keys[e.off : e.off+e.n], e.sec, &e.v})
			}
		}
	}
	slices.SortFunc(out, func(a, b sum) int { return bytes.Compare(a.key, b.key) })
	return out
}
