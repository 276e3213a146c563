// Comparing the files' counts with the database's.

package bucketcheck

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/measure"
)

// Compare reports (t.Errorf) every counter and measure of kind ("minute",
// "daily", "monthly" or "sites") that differs, and returns the hits lost
// and duplicated, judged by each bucket's total counter (a site
// document's views).
func Compare(t testing.TB, kind string, want, got Buckets) (lost, dup int64) {
	t.Helper()
	return compare(t, kind, want, got, false, nil)
}

// compare is Compare, of the views alone when viewsOnly; the buckets in
// tailed (whose counts are partly or wholly in tails) are compared at the
// tail's grain (atTailGrain).
func compare(t testing.TB, kind string, want, got Buckets, viewsOnly bool, tailed map[string]bool) (lost, dup int64) {
	t.Helper()
	total := bucket.SiteMeasurePath(measure.Views)
	level := bucket.Level(bucket.Levels)
	for l := range bucket.Level(bucket.Levels) {
		if l.String() == kind {
			total, level = l.TotalField(), l
		}
	}
	what := kind + " bucket"
	if kind == "sites" {
		what = "site document"
	}
	ids := maps.Clone(want)
	maps.Copy(ids, got)
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		w, g := want[id], got[id]
		if d := g[total] - w[total]; d > 0 {
			dup += d
		} else {
			lost -= d
		}
		paths := maps.Clone(w)
		if paths == nil {
			paths = map[string]int64{}
		}
		maps.Copy(paths, g)
		for _, p := range slices.Sorted(maps.Keys(paths)) {
			if viewsOnly && isMeasure(p) {
				continue
			}
			if tailed[id] && !atTailGrain(level, p) {
				continue // a tail keeps no finer views
			}
			if w[p] != g[p] {
				t.Errorf("%s %s: %s = %d, want %d", what, id, p, g[p], w[p])
			}
		}
	}
	return lost, dup
}

// Result is the outcome of CompareAll, per level and for the site
// documents.
type Result struct {
	Lost, Dup [4]int64 // minute, daily, monthly, sites
}

// Exact reports whether nothing was lost or duplicated at any level.
func (r Result) Exact() bool { return r.Lost == [4]int64{} && r.Dup == [4]int64{} }

// String formats the result for a test log.
func (r Result) String() string {
	return fmt.Sprintf("lost %d/%d/%d/%d, duplicated %d/%d/%d/%d (minute/daily/monthly/sites)",
		r.Lost[0], r.Lost[1], r.Lost[2], r.Lost[3], r.Dup[0], r.Dup[1], r.Dup[2], r.Dup[3])
}

// CompareAll compares the three levels and the site documents with
// Compare: every counter and measure (rt_max_us as a maximum, the others
// as sums), or the views alone when want.ViewsOnly. A page bucket with
// entries in tails (got.Tailed) is compared on what a tail holds: its
// total, its views per minute (hour, day) and every measure; the finer
// views of a hot page's own bucket (seconds.<s>, minute.<h>.<m>) are
// compared as strictly as ever.
func CompareAll(t testing.TB, want, got Counts) Result {
	t.Helper()
	var r Result
	for i, k := range []struct {
		kind      string
		want, got Buckets
	}{
		{"minute", want.Minute, got.Minute},
		{"daily", want.Daily, got.Daily},
		{"monthly", want.Monthly, got.Monthly},
		{"sites", want.Sites, got.Sites},
	} {
		var tailed map[string]bool
		if i < bucket.Levels {
			tailed = got.Tailed[i]
		}
		r.Lost[i], r.Dup[i] = compare(t, k.kind, k.want, k.got, want.ViewsOnly, tailed)
	}
	return r
}

// Within reports (t.Errorf) every counter and measure of kind's buckets
// ("minute", "daily", "monthly" or "sites") in got that lies outside lo's
// and hi's (counts the files bound from below and above: lines lost to a
// copytruncate may or may not have been read), and every bucket got has
// that hi lacks. A bucket with entries in tails (got.Tailed) is judged at
// the tail's grain, as CompareAll does.
func Within(t testing.TB, kind string, lo, hi Buckets, got Counts) {
	t.Helper()
	g, tailed, level := got.Sites, map[string]bool(nil), bucket.Level(bucket.Levels)
	for l, b := range [bucket.Levels]Buckets{got.Minute, got.Daily, got.Monthly} {
		if bucket.Level(l).String() == kind {
			g, tailed, level = b, got.Tailed[l], bucket.Level(l)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(hi)) {
		h := hi[id]
		paths := maps.Clone(h)
		maps.Copy(paths, g[id])
		for _, p := range slices.Sorted(maps.Keys(paths)) {
			if tailed[id] && !atTailGrain(level, p) {
				continue // a tail keeps no finer views
			}
			if n := g[id][p]; n < lo[id][p] || n > h[p] {
				t.Errorf("%s bucket %s: %s = %d, want %d to %d", kind, id, p, n, lo[id][p], h[p])
			}
		}
	}
	for id := range g {
		if hi[id] == nil {
			t.Errorf("%s bucket %s: not in the files", kind, id)
		}
	}
}
