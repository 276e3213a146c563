package verify

import (
	"cmp"
	"maps"
	"slices"

	"github.com/logtally/logtally/bucket"
)

// Kind is what a compared document is: a bucket of a level, or a site's
// day.
type Kind uint8

// The kinds, bucket.Level's first.
const (
	Minute  = Kind(bucket.Minute)
	Daily   = Kind(bucket.Daily)
	Monthly = Kind(bucket.Monthly)
	Sites   = Kind(bucket.Levels)
	kinds   = Sites + 1
)

// String returns "minute bucket", "daily bucket", "monthly bucket" or
// "site day".
func (k Kind) String() string {
	if k == Sites {
		return "site day"
	}
	return bucket.Level(k).String() + " bucket"
}

// level returns the level whose retention k's documents have: the site
// days the daily one (bucket.SiteLevel).
func (k Kind) level() bucket.Level {
	if k == Sites {
		return bucket.SiteLevel
	}
	return bucket.Level(k)
}

// counter says what the counter at path of a k document [start, end)
// counts (bucket.Level.Counter, bucket.SiteCounter).
func (k Kind) counter(start, end int64, path string) (bucket.CounterInfo, bool) {
	if k == Sites {
		return bucket.SiteCounter(start, path)
	}
	return bucket.Level(k).Counter(start, end, path)
}

// A Diff is one counter whose value in MongoDB is not the files'.
type Diff struct {
	Kind Kind
	// ID is the document's _id, Path the counter's dotted path.
	ID, Path string
	// Files and MongoDB are the counter's values.
	Files, MongoDB int64
	// Tail says MongoDB's value is the page's bucket's (if any) plus
	// its entries in the tails: ID and Path are then the page bucket's,
	// where the counts would be had the page been hot.
	Tail bool
	// Value is a count by dimension's value (Path is then the site day's
	// "sources.<dimension code>"): from the lines, shown with query.Shown.
	Value string
}

// judge compares documents counter by counter (bucket), keeping what it
// found in a Report. Counters are judged by their period (bucket.Counter):
// one inside the range judged r is exact or a difference; one partly
// outside it (the range's first and last minute, day and month) holds
// hits of lines before or after the files, and is judged for lost hits
// only (MongoDB below the files). A counter whose part in r is not all in
// the pass's window w (a month's total, read day by day) is carried to
// the pass that ends it, its files' values added up.
type judge struct {
	r, w     span
	allHosts bool
	rep      *Report
	max      int // the Diffs and Others rep keeps
	carry    map[carryKey]*carried
}

type carryKey struct {
	kind     Kind
	id, path string
}

// carried is a counter judged over several passes.
type carried struct {
	files, mongo int64
	max          bool // a maximum: the files' values are merged by max
	inside       bool // its period is inside r: exact
	tail         bool // MongoDB's value holds tail entries (Diff.Tail)
}

// newJudge returns a judge of range r keeping its findings in rep, the
// first maxDiffs of each list.
func newJudge(r span, allHosts bool, maxDiffs int, rep *Report) *judge {
	return &judge{r: r, allHosts: allHosts, rep: rep, max: maxDiffs, carry: map[carryKey]*carried{}}
}

// add keeps d in *list unless it holds j.max already, and counts it in *n.
func (j *judge) add(list *[]Diff, n *uint64, d Diff) {
	*n++
	if len(*list) < j.max {
		*list = append(*list, d)
	}
}

// counter is one counter of a document: its dotted path and its value.
type counter struct {
	path string
	n    int64
}

// sortCounters sorts cs by path, for bucket.
func sortCounters(cs []counter) []counter {
	slices.SortFunc(cs, func(a, b counter) int { return cmp.Compare(a.path, b.path) })
	return cs
}

// bucket compares one document of kind k, with _id id and period [start,
// end), whose non-zero counters are want in the files and got in MongoDB
// (either may be empty), each sorted by path; tail says got holds the
// page's entries in the tails (Diff.Tail). Counters outside the range,
// or whose part in it is another pass's, are not judged here; a path no
// document of its kind has is counted as unknown.
func (j *judge) bucket(k Kind, id string, start, end int64, want, got []counter, tail bool) {
	judged := false
	visit := func(path string, files, mongo int64) {
		c, ok := k.counter(start, end, path)
		if !ok {
			j.rep.Unknown++
			return
		}
		a, b := max(c.From, j.r.from), min(c.To, j.r.to) // its part in the range
		if b <= a || b <= j.w.from || a >= j.w.to {
			return // outside the range, or another pass's
		}
		judged = true
		inside := c.From >= j.r.from && c.To <= j.r.to
		if a < j.w.from || b > j.w.to {
			key := carryKey{k, id, path}
			cc := j.carry[key]
			if cc == nil {
				cc = &carried{max: c.Measure.IsMax(), inside: inside}
				j.carry[key] = cc
			}
			cc.tail = cc.tail || tail
			if cc.max {
				cc.files = max(cc.files, files)
			} else {
				cc.files += files
			}
			cc.mongo = mongo
			return
		}
		j.counter(k, id, path, files, mongo, inside, tail)
	}
	for len(want) > 0 || len(got) > 0 { // a merge, by path
		switch {
		case len(got) == 0 || len(want) > 0 && want[0].path < got[0].path:
			visit(want[0].path, want[0].n, 0)
			want = want[1:]
		case len(want) == 0 || got[0].path < want[0].path:
			visit(got[0].path, 0, got[0].n)
			got = got[1:]
		default:
			visit(want[0].path, want[0].n, got[0].n)
			want, got = want[1:], got[1:]
		}
	}
	// A document is counted in the pass holding the last second of its
	// part in the range.
	if last := min(end, j.r.to) - 1; judged && j.w.has(last) {
		j.rep.Buckets[k]++
	}
}

// counter judges one counter: files and mongo are its values, inside
// whether its period is inside the range (else MongoDB may hold more:
// hits of lines outside the range), tail whether mongo holds tail
// entries.
func (j *judge) counter(k Kind, id, path string, files, mongo int64, inside, tail bool) {
	r := j.rep
	r.Counters++
	if !inside {
		r.Edge++
	}
	if mongo != files {
		j.unequal(Diff{Kind: k, ID: id, Path: path, Files: files, MongoDB: mongo, Tail: tail}, inside)
	}
}

// unequal judges a counter (or a value by dimension) found unequal:
// MongoDB below is a difference (hits lost); above, a difference with
// AllHosts inside the range, else said apart (other hosts?), and nothing
// at the range's edges (lines outside the range).
func (j *judge) unequal(d Diff, inside bool) {
	r := j.rep
	switch {
	case d.MongoDB < d.Files:
		j.add(&r.Diffs, &r.NDiffs, d)
		r.Lost++
	case !inside:
	case j.allHosts:
		j.add(&r.Diffs, &r.NDiffs, d)
		r.More++
	default:
		j.add(&r.Others, &r.NOthers, d)
	}
}

// finish judges the counters carried across passes.
func (j *judge) finish() {
	keys := slices.SortedFunc(maps.Keys(j.carry), func(a, b carryKey) int {
		return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.id, b.id), cmp.Compare(a.path, b.path))
	})
	for _, key := range keys {
		c := j.carry[key]
		j.counter(key.kind, key.id, key.path, c.files, c.mongo, c.inside, c.tail)
	}
	clear(j.carry)
}
