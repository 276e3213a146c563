package query

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/fill"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/measure"
)

// Pages of the tails' fixture: "/" hot (its own buckets), "/both" in its
// buckets and in a tail (every other hit), the others cold (tails, two
// shards), one of them a name that needs escaping as a field.
const (
	tHot     = "/"
	tBoth    = "/both"
	tEscaped = "/a.b$c%"
	tOther   = "(other)"
	tCold    = "/cold"
)

// TailHits returns the tails' fixture: hits of the pages above in a few
// minutes of 2026-10-31 and 2026-11-01 (two months, two days), every
// status and bot class, bytes and response times (some not logged).
func tailHits() []fill.Hit {
	rng := rand.New(rand.NewPCG(32, 2026))
	minutes := []time.Time{
		utc("2026-10-31T22:58:00Z"), utc("2026-10-31T23:59:00Z"), utc("2026-11-01T00:00:00Z"),
		utc("2026-11-01T00:01:00Z"), utc("2026-11-01T13:30:00Z"),
	}
	statuses := []int{200, 200, 200, 204, 301, 304, 404, 410, 500, 503, 101}
	pages := []string{tHot, tBoth, tBoth, tEscaped, tOther, tCold}
	var hits []fill.Hit
	for i := range 120 {
		f := measure.Hit{
			Status: statuses[rng.IntN(len(statuses))],
			Bot:    botclass.Class(rng.IntN(int(botclass.NumClasses))),
			Bytes:  uint64(rng.IntN(3_000_000)),
			RT:     int64(rng.IntN(2_000_000)),
		}
		if i%5 == 0 {
			f.RT = -1
		}
		at := minutes[rng.IntN(len(minutes))].Add(time.Duration(rng.IntN(60)) * time.Second)
		hits = append(hits, fill.Hit{Page: pages[rng.IntN(len(pages))], At: at, F: f})
	}
	return hits
}

// tailLayout puts the fixture's cold pages in tails: /a.b$c% and /cold
// in shard 1 (0 in a minute tail, which has no other), (other) in shard
// 0, every other hit of /both in shard 0.
var tailLayout = fill.Layout{
	Tail: func(l bucket.Level, i int, h fill.Hit) int {
		switch h.Page {
		case tHot:
			return -1
		case tBoth:
			if i%2 == 0 {
				return -1
			}
			return 0
		case tOther:
			return 0
		}
		if l == bucket.Minute {
			return 0 // a minute's tail is one document
		}
		return 1
	},
	Hot:    []string{tHot},
	Shards: 2,
}

// twoDBs returns two databases holding the same hits of site: one as
// page buckets alone, one split between buckets and tails (tailLayout).
func twoDBs(t *testing.T, site string, hits []fill.Hit) (buckets, split *mongo.Database) {
	srv := mongotest.Start(t)
	buckets, split = srv.Database(t), srv.Database(t)
	fill.Docs(t, buckets, site, hits, fill.Layout{})
	fill.Docs(t, split, site, hits, tailLayout)
	// The split database holds tails of both shards at the daily and
	// monthly levels, and /both in a bucket and a tail.
	var colls bucket.Collections
	for l := range bucket.Level(bucket.Levels) {
		for _, page := range []string{bucket.TailPage(0), bucket.TailPage(1), bucket.PlanPage, tBoth} {
			if l == bucket.Minute && page == bucket.TailPage(1) {
				continue
			}
			n, err := split.Collection(colls.Name(l)).CountDocuments(context.Background(), bucket.Level(l).Range(site, page, utc("2026-10-01T00:00:00Z"), utc("2026-12-01T00:00:00Z")))
			if err != nil || n == 0 {
				t.Fatalf("%s: no document of %q: %v", l, page, err)
			}
		}
	}
	return buckets, split
}

// sameResult reports how b's result differs from a's: every time, page,
// count, and every measure of every step and of the range.
func sameResult(a, b *Result) error {
	if !slices.EqualFunc(a.Times, b.Times, time.Time.Equal) {
		return fmt.Errorf("times %v, %v", a.Times, b.Times)
	}
	if a.Pages != b.Pages || len(a.Series) != len(b.Series) {
		return fmt.Errorf("%d pages, %d series; %d pages, %d series", a.Pages, len(a.Series), b.Pages, len(b.Series))
	}
	series := func(what string, sa, sb *Series) error {
		if sa.Page != sb.Page || sa.Total != sb.Total {
			return fmt.Errorf("%s: %q %d; %q %d", what, sa.Page, sa.Total, sb.Page, sb.Total)
		}
		for i := range sa.Counts {
			if sa.Counts[i] != sb.Counts[i] {
				return fmt.Errorf("%s %q: step %d: %d; %d", what, sa.Page, i, sa.Counts[i], sb.Counts[i])
			}
		}
		for _, m := range a.Request.measures() {
			for i := -1; i < len(a.Times); i++ {
				if va, vb := a.Value(sa, m, i), b.Value(sb, m, i); va != vb {
					return fmt.Errorf("%s %q: %s at step %d: %v, %v", what, sa.Page, m, i, va, vb)
				}
			}
		}
		return nil
	}
	for i := range a.Series {
		if err := series("series", &a.Series[i], &b.Series[i]); err != nil {
			return err
		}
	}
	return series("site", &a.Site, &b.Site)
}

// Every step, every measure, every page, the top, the site alone and
// one page at a time: the same answers from tails beside buckets as from
// buckets alone.
func TestQueryTails(t *testing.T) {
	const site = "tails.test"
	hits := tailHits()
	dbA, dbB := twoDBs(t, site, hits)
	now := clock.NewFake(utc("2026-11-03T00:00:00Z"))
	ra, rb := &Reader{DB: dbA, Clock: now}, &Reader{DB: dbB, Clock: now}
	var all []Measure
	for m := range numMeasures {
		all = append(all, m)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		step     Step
		from, to time.Time
	}{
		{Minute, utc("2026-10-31T22:00:00Z"), utc("2026-11-01T14:00:00Z")},
		{Hour, utc("2026-10-31T00:00:00Z"), utc("2026-11-02T00:00:00Z")},
		{Day, utc("2026-10-31T00:00:00Z"), utc("2026-11-02T00:00:00Z")},
		{Day, utc("2026-11-01T00:00:00Z"), utc("2026-11-02T00:00:00Z")},
		{Month, utc("2026-10-01T00:00:00Z"), utc("2026-12-01T00:00:00Z")},
	} {
		for _, ms := range [][]Measure{nil, all} {
			reqs := []Request{{}, {Top: 2}, {SiteOnly: true}, {Page: tEscaped}}
			if ms != nil { // every page with every measure
				reqs = append(reqs, Request{Page: tHot}, Request{Page: tBoth}, Request{Page: tOther}, Request{Page: tCold})
			}
			for _, req := range reqs {
				req.Site, req.From, req.To, req.Step, req.Measures = site, tc.from, tc.to, tc.step, ms
				name := fmt.Sprintf("%s %s %v page %q top %d site %v", tc.step, tc.from.Format("01-02"), ms, req.Page, req.Top, req.SiteOnly)
				a, err := ra.Query(ctx, req)
				if err != nil {
					t.Fatalf("%s: buckets: %v", name, err)
				}
				b, err := rb.Query(ctx, req)
				if err != nil {
					t.Fatalf("%s: tails: %v", name, err)
				}
				if a.Site.Total == 0 {
					t.Fatalf("%s: no views", name)
				}
				if err := sameResult(a, b); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		}
	}
	// A cold page's classes, from the monthly tails.
	for _, p := range []string{tEscaped, tBoth} {
		req := Request{Site: site, Page: p, From: utc("2026-10-01T00:00:00Z"), To: utc("2026-12-01T00:00:00Z"), Step: Day}
		a, err := ra.Classes(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := rb.Classes(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if a.Views == 0 || a.Views != b.Views || a.Counts != b.Counts {
			t.Errorf("classes of %q: %d %v; %d %v", p, a.Views, a.Counts, b.Views, b.Counts)
		}
	}
}

// A cold page quiet in the range is a zero series, not unknown; a page
// in no bucket and no tail is unknown.
func TestQueryTailsQuietAndUnknown(t *testing.T) {
	const site = "tails.test"
	hits := []fill.Hit{{Page: tEscaped, At: utc("2026-11-01T10:00:00Z"), F: measure.Hit{Status: 200}}, {Page: tHot, At: utc("2026-11-01T10:00:00Z"), F: measure.Hit{Status: 200}}}
	_, db := twoDBs(t, site, append(hits, tailHits()...))
	r := &Reader{DB: db, Clock: clock.NewFake(utc("2026-11-30T00:00:00Z"))}
	ctx := context.Background()
	for _, step := range []Step{Minute, Hour, Day, Month} {
		from, to := utc("2026-11-20T00:00:00Z"), utc("2026-11-20T01:00:00Z")
		if step == Month {
			from, to = utc("2026-09-01T00:00:00Z"), utc("2026-10-01T00:00:00Z")
		}
		res, err := r.Query(ctx, Request{Site: site, Page: tEscaped, From: from, To: to, Step: step})
		if err != nil || len(res.Series) != 1 || res.Series[0].Total != 0 {
			t.Errorf("%s: quiet cold page: %v, %+v", step, err, res)
		}
		for _, page := range []string{"/nope", bucket.TailPage(0), bucket.PlanPage} {
			if _, err := r.Query(ctx, Request{Site: site, Page: page, From: from, To: to, Step: step}); !errors.Is(err, ErrUnknownPage) {
				t.Errorf("%s: unknown page %q: %v", step, page, err)
			}
		}
		if res, err := r.Query(ctx, Request{Site: site, From: from, To: to, Step: step}); err != nil || len(res.Series) != 0 || res.Pages != 0 {
			t.Errorf("%s: quiet site: %v, %+v", step, err, res)
		}
	}
}

// Past MaxCells the top is read in three passes, tails among them; all
// pages are refused, from either layout.
func TestQueryTailsBeyondBound(t *testing.T) {
	const site = "tails.test"
	hits := tailHits()
	dbA, dbB := twoDBs(t, site, hits)
	from, to := utc("2026-10-31T00:00:00Z"), utc("2026-11-02T00:00:00Z")
	steps := int(to.Sub(from) / time.Minute)
	now := clock.NewFake(utc("2026-11-03T00:00:00Z"))
	var res [2]*Result
	for i, db := range []*mongo.Database{dbA, dbB} {
		r := &Reader{DB: db, Clock: now, MaxCells: 4 * steps}
		req := Request{Site: site, From: from, To: to, Step: Minute, Measures: []Measure{Bytes}}
		var tl *TooLargeError
		if _, err := r.Query(context.Background(), req); !errors.As(err, &tl) {
			t.Fatalf("all pages past the bound: %v", err)
		}
		req.Top = 1
		var err error
		if res[i], err = r.Query(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if err := sameResult(res[0], res[1]); err != nil || res[0].Pages != 5 {
		t.Errorf("top 1 of %d pages: %v", res[0].Pages, err)
	}
}
