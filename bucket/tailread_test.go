package bucket

import (
	"testing"
	"time"

	"github.com/logtally/logtally/measure"
)

// The page field's ranges the readers filter on: every tail's marker in
// the tails' range, the plan's outside it, every marker in the markers'
// range and no page.
func TestMarkerRanges(t *testing.T) {
	in := func(s, from, to string) bool { return s >= from && s < to }
	for k := range MaxPlanShards {
		if p := TailPage(k); !in(p, tailsFrom, tailsTo) || !in(p, markersFrom, markersTo) {
			t.Errorf("tail %q outside the ranges", p)
		}
	}
	if in(PlanPage, tailsFrom, tailsTo) || !in(PlanPage, markersFrom, markersTo) {
		t.Errorf("plan %q: in the tails' range, or not in the markers'", PlanPage)
	}
	for _, page := range []string{"/", "/~0", "(other)", "/\x7f", "/ünï"} {
		if in(page, markersFrom, markersTo) {
			t.Errorf("page %q in the markers' range", page)
		}
	}
}

// A tail's counters, put where BucketPaths says, are the page's own
// bucket's counters of the same hits; the bucket's other counters are
// finer than the tail's grain (MeasureSpan).
func TestBucketPaths(t *testing.T) {
	sec := time.Date(2026, 1, 15, 10, 20, 30, 0, time.UTC).Unix()
	hits := []struct {
		off int64
		v   measure.Vector
	}{{0, hitVector(200, 1000, 400)}, {7, hitVector(404, 10, 900)}, {4000, hitVector(503, 7, 100)}, {2*86400 + 5, hitVector(301, 3, -1)}}
	for l := range Level(Levels) {
		start, end := l.Bounds(sec)
		d := NewDoc(l, "s", "/a.b", sec)
		tl := NewTail(l, "s", 1, sec)
		for _, h := range hits {
			if at := sec + h.off; at < end {
				d.Add(at, &h.v)
				tl.Add("/a.b", at, &h.v)
			}
		}
		page := map[string]int64{}
		for _, e := range append(d.Inc(), d.Max()...) {
			switch n := e.Value.(type) {
			case int32:
				page[e.Key] = int64(n)
			case int64:
				page[e.Key] = n
			}
		}
		doc, err := tl.Whole(NumberedGuard(1, 1))
		if err != nil {
			t.Fatal(err)
		}
		mapped := map[string]int64{}
		if err := Counters(doc, func(path string, n int64) {
			p, c, ok := l.TailCounter(start, end, path)
			if !ok || p != "/a.b" {
				t.Fatalf("%s: %s: %q, %v", l, path, p, ok)
			}
			for _, bp := range l.BucketPaths(start, c) {
				if c.Measure.IsMax() {
					mapped[bp] = max(mapped[bp], n)
				} else {
					mapped[bp] += n
				}
			}
		}); err != nil {
			t.Fatal(err)
		}
		for path, n := range mapped {
			if page[path] != n {
				t.Errorf("%s: %s: tail %d, bucket %d", l, path, n, page[path])
			}
		}
		finer := 0
		for path, n := range page {
			if _, ok := mapped[path]; ok {
				continue
			}
			c, ok := l.Counter(start, end, path)
			from, to := l.MeasureSpan(start, end, c.From)
			if !ok || c.To-c.From >= to-from || c.From < from || c.To > to {
				t.Errorf("%s: the bucket's %s (%d) has no counterpart in the tail and is not finer than its grain", l, path, n)
			}
			finer++
		}
		if want := map[Level]int{Minute: 2, Daily: 2, Monthly: 0}[l]; finer != want {
			t.Errorf("%s: %d finer counters, want %d", l, finer, want)
		}
	}
}

// Views counts a page bucket's total, a tail's cells of every page, and
// nothing of a plan.
func TestViews(t *testing.T) {
	sec := time.Date(2026, 1, 15, 10, 20, 30, 0, time.UTC).Unix()
	v := hitVector(200, 10, -1)
	for l := range Level(Levels) {
		d := NewDoc(l, "s", "/a", sec)
		tl := NewTail(l, "s", 3, sec)
		for i := range 3 {
			d.Add(sec+int64(i), &v)
			tl.Add("/a", sec+int64(i), &v)
			tl.Add("/b.c", sec+int64(i), &v)
		}
		bd, err := d.Whole(NumberedGuard(1, 1))
		if err != nil {
			t.Fatal(err)
		}
		td, err := tl.Whole(NumberedGuard(1, 1))
		if err != nil {
			t.Fatal(err)
		}
		p := NewPlan(l, "s", sec, []string{"/a"}, 4)
		pd := mustMarshal(p.Doc())
		for _, c := range []struct {
			doc  []byte
			want int64
		}{{bd, 3}, {td, 6}, {pd, 0}} {
			if n, err := l.Views(c.doc); err != nil || n != c.want {
				t.Errorf("%s: %d views, %v; want %d", l, n, err, c.want)
			}
		}
	}
}
