package query

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/visitor"
)

// Buckets written before the measures existed hold views alone: their
// views are Unmeasured (views minus the five status classes), at every
// step, for the page and the site, whole or in part of a step.
func TestUnmeasured(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	hits := measureHits()
	writeMeasureHits(t, db, hits)
	ctx := context.Background()
	var colls bucket.Collections
	// Page /a's buckets as an older logtally wrote them: no measures.
	for l := range bucket.Level(bucket.Levels) {
		if _, err := db.Collection(colls.Name(l)).UpdateMany(ctx, bson.D{{Key: l.PageField(), Value: "/a"}},
			bson.D{{Key: "$unset", Value: bson.D{{Key: bucket.FieldMeasures, Value: ""}}}}); err != nil {
			t.Fatal(err)
		}
	}
	// Page /b's daily bucket of 2026-11-01 gains 3 views at 13:00 without
	// measures: an hour counted partly before the upgrade.
	d := bucket.Daily
	if _, err := db.Collection(colls.Name(d)).UpdateOne(ctx, bson.D{{Key: bucket.FieldID, Value: "20261101/" + mSite + "/b"}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: hourly + ".13", Value: int32(3)}, {Key: d.TotalField(), Value: int32(3)}}}}); err != nil {
		t.Fatal(err)
	}
	var aViews int64
	var bHour13 sums
	for _, h := range hits {
		if h.Page == "/a" && !h.At.Before(utc("2026-11-01T00:00:00Z")) && h.At.Before(utc("2026-11-02T00:00:00Z")) {
			aViews++
		}
		if h.Page == "/b" && stepOf(Hour, h.At).Equal(utc("2026-11-01T13:00:00Z")) {
			bHour13.add(&h.F)
		}
	}
	if aViews == 0 || bHour13.views == 0 {
		t.Fatal("the fixture has no hit there")
	}
	r := &Reader{DB: db, Clock: clock.NewFake(utc("2026-11-03T00:00:00Z"))}
	res, err := r.Query(ctx, Request{Site: mSite, From: utc("2026-11-01T00:00:00Z"), To: utc("2026-11-02T00:00:00Z"), Step: Hour,
		Measures: []Measure{Unmeasured, Status2xx, RTCount, Bots}})
	if err != nil {
		t.Fatal(err)
	}
	for k := range res.Series {
		s := &res.Series[k]
		got := res.Value(s, Unmeasured, -1).N
		switch s.Page {
		case "/a":
			if got != aViews || got != s.Total || res.Value(s, Status2xx, -1).N != 0 || res.Value(s, RTCount, -1).N != 0 {
				t.Errorf("/a: unmeasured %d of %d views, 2xx %v: want every view", got, s.Total, res.Value(s, Status2xx, -1))
			}
		case "/b":
			i := slices.IndexFunc(res.Times, func(tm time.Time) bool { return tm.Equal(utc("2026-11-01T13:00:00Z")) })
			if got != 3 || res.Value(s, Unmeasured, i).N != 3 || s.Counts[i] != bHour13.views+3 {
				t.Errorf("/b: unmeasured %d (at 13:00 %d of %d views), want 3 of %d", got, res.Value(s, Unmeasured, i).N, s.Counts[i], bHour13.views+3)
			}
			checkValue(t, "/b 13:00", Status2xx, res.Value(s, Status2xx, i), &bHour13)
		default:
			if got != 0 {
				t.Errorf("%s: %d unmeasured", s.Page, got)
			}
		}
	}
	if got := res.Value(&res.Site, Unmeasured, -1).N; got != aViews+3 {
		t.Errorf("site: %d unmeasured, want %d", got, aViews+3)
	}
	// The other levels say the same of /a.
	for _, step := range []Step{Minute, Day, Month} {
		from, to := utc("2026-11-01T00:00:00Z"), utc("2026-11-02T00:00:00Z")
		if step == Month {
			to = utc("2026-12-01T00:00:00Z")
		}
		res, err := r.Query(ctx, Request{Site: mSite, Page: "/a", From: from, To: to, Step: step, Measures: []Measure{Unmeasured}})
		if err != nil {
			t.Fatal(err)
		}
		want := aViews
		if step == Month { // the month's other days too
			want = 0
			for _, h := range hits {
				if h.Page == "/a" && h.At.Month() == time.November {
					want++
				}
			}
		}
		if got := res.Value(&res.Series[0], Unmeasured, -1).N; got != want || got != res.Series[0].Total {
			t.Errorf("/a at %s: %d unmeasured of %d views, want %d", step, got, res.Series[0].Total, want)
		}
	}
}

// The site's sum is every page's, also when the Top is read in three
// passes because the pages do not fit (Reader.MaxCells).
func TestSiteSumOfTopBeyondBound(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	hits := measureHits()
	writeMeasureHits(t, db, hits)
	from, to := utc("2026-11-01T00:00:00Z"), utc("2026-11-03T00:00:00Z")
	steps := int(to.Sub(from) / time.Minute)
	var want sums
	pages := map[string]int64{}
	for _, h := range hits {
		if !h.At.Before(from) && h.At.Before(to) {
			want.add(&h.F)
			pages[h.Page]++
		}
	}
	if len(pages) < 3 {
		t.Fatalf("%d pages in the range", len(pages))
	}
	// Room for the site's sum and one page at two sums each.
	r := &Reader{DB: db, Clock: clock.NewFake(utc("2026-11-03T00:00:00Z")), MaxCells: 4 * steps}
	res, err := r.Query(context.Background(), Request{Site: mSite, From: from, To: to, Step: Minute, Top: 1, Measures: []Measure{Bytes}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pages != len(pages) || len(res.Series) != 1 || res.Series[0].Total != slices.Max(mapValues(pages)) {
		t.Errorf("top 1 of %d pages: %d series, %d pages", len(pages), len(res.Series), res.Pages)
	}
	for _, m := range []Measure{Views, Bytes} {
		checkValue(t, "site", m, res.Value(&res.Site, m, -1), &want)
	}
	// Without a top it is refused, naming the bound.
	if _, err := r.Query(context.Background(), Request{Site: mSite, From: from, To: to, Step: Minute, Measures: []Measure{Bytes}}); err == nil {
		t.Error("no error past the bound")
	} else if want := fmt.Sprintf("over %d counts", 4*steps); !strings.Contains(err.Error(), want) {
		t.Errorf("%v: no %q", err, want)
	}
}

func mapValues(m map[string]int64) []int64 {
	var out []int64
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// PageVisitors reads every page's visitors at once, as Visitors reads one;
// a page without documents is left out; Total adds the steps' estimates
// with the error of independent ones.
func TestPageVisitors(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	coll := db.Collection(bucket.DefaultVisitorCollection)
	r := &Reader{DB: db}
	ctx := context.Background()
	day := utc("2026-11-01T00:00:00Z")
	putVisitors(t, coll, visitor.Day, day, "v.test", 0, 500, false)
	for d := range 2 {
		for i, page := range []string{"/a", "/b"} {
			putPageVisitors(t, coll, day.AddDate(0, 0, d), "v.test", page, 100*(i+1)+d*7)
		}
	}
	req := Request{Site: "v.test", From: day, To: day.AddDate(0, 0, 2), Step: Day}
	got, err := r.PageVisitors(ctx, req, []string{"/a", "/b", "/none"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["/none"] != nil {
		t.Fatalf("pages %v, want /a and /b", slices.Collect(maps.Keys(got)))
	}
	for _, page := range []string{"/a", "/b"} {
		one := req
		one.Page = page
		want, err := r.Visitors(ctx, one)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got[page].Points, want.Points) {
			t.Errorf("%s: %+v, alone %+v", page, got[page].Points, want.Points)
		}
		tot := got[page].Total()
		e0, e1 := want.Points[0].Estimate, want.Points[1].Estimate
		s0, s1 := want.Points[0].Error*e0, want.Points[1].Error*e1
		if tot.Estimate != e0+e1 || math.Abs(tot.Error-math.Sqrt(s0*s0+s1*s1)/(e0+e1)) > 1e-12 || tot.Docs != 2 || e0 == 0 || e1 == 0 {
			t.Errorf("%s total %+v of %+v", page, tot, want.Points)
		}
	}
	if _, err := r.PageVisitors(ctx, Request{Site: "v.test", Page: "/a", From: day, To: day.AddDate(0, 0, 1), Step: Day}, []string{"/a"}); err == nil {
		t.Error("a page and a list: no error")
	}
	if _, err := r.PageVisitors(ctx, req, make([]string, MaxVisitorPages+1)); err == nil {
		t.Error("too many pages: no error")
	}
}

// putPageVisitors writes n visitors of page at day as the flusher does
// (bucket.VisitorZero, then $max of the registers).
func putPageVisitors(t *testing.T, coll *mongo.Collection, day time.Time, site, page string, n int) {
	t.Helper()
	ctx := context.Background()
	var salt visitor.Salt
	copy(salt[:], visitor.Day.ID(day.Unix()))
	sk := visitor.NewSparse(visitor.PagePrecision)
	for i := range n {
		sk.Add(visitor.KeyOf(&salt, []byte(site), fmt.Appendf(nil, "10.9.%d.%d", i>>8, i&255), 1))
	}
	if _, err := coll.InsertOne(ctx, bucket.VisitorZero(visitor.Day, day.Unix(), site, page, visitor.PagePrecision)); err != nil {
		t.Fatal(err)
	}
	var mx bson.D
	sk.Risen(nil, func(i int, r uint8) { mx = append(mx, bson.E{Key: bucket.RegisterPath(i), Value: int32(r)}) })
	if _, err := coll.UpdateOne(ctx, bucket.VisitorKey(visitor.Day, day.Unix(), site, page), bson.D{{Key: "$max", Value: mx}}); err != nil {
		t.Fatal(err)
	}
}

// Sites lists the sites of the sites collection, or of the monthly
// buckets when it has none, under a deadline (the embedded server's
// distinct fails with one).
func TestSites(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := &Reader{DB: db}
	if got, err := r.Sites(ctx); err != nil || len(got) != 0 {
		t.Fatalf("no buckets: %q, %v", got, err)
	}
	writeMeasureHits(t, db, measureHits())
	var colls bucket.Collections
	if _, err := db.Collection(colls.Name(bucket.Monthly)).InsertOne(ctx, bson.D{{Key: bucket.FieldID, Value: "x"}, {Key: bucket.FieldMetadata, Value: bson.D{{Key: bucket.FieldSite, Value: "old.test"}}}}); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Sites(ctx); err != nil || !slices.Equal(got, []string{mSite}) {
		t.Errorf("sites: %q, %v; want %q", got, err, mSite)
	}
	if err := db.Collection(colls.SiteName()).Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Sites(ctx); err != nil || !slices.Equal(got, []string{mSite, "old.test"}) {
		t.Errorf("sites from the monthly buckets: %q, %v", got, err)
	}
}
