package query

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/fill"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/measure"
)

const mSite = "m.test"

// mhit is one hit of the measures' fixture with its facts.
type mhit = fill.Hit

// measureHits returns the fixture: 3 pages, hits in a few minutes of
// 2026-10-31 to 2026-11-02 (two months, three days), every status class,
// every bot class, bytes and response times (some not logged).
func measureHits() []mhit {
	rng := rand.New(rand.NewPCG(18, 2026))
	minutes := []time.Time{
		utc("2026-10-31T22:58:00Z"), utc("2026-10-31T23:59:00Z"), utc("2026-11-01T00:00:00Z"),
		utc("2026-11-01T00:01:00Z"), utc("2026-11-01T13:30:00Z"), utc("2026-11-02T08:15:00Z"),
	}
	statuses := []int{200, 200, 200, 204, 301, 304, 404, 410, 500, 503, 101}
	var hits []mhit
	for i := range 70 {
		page := []string{"/", "/a", "/b"}[rng.IntN(3)]
		at := minutes[rng.IntN(len(minutes))].Add(time.Duration(rng.IntN(60)) * time.Second)
		f := measure.Hit{
			Status: statuses[rng.IntN(len(statuses))],
			Bot:    botclass.Class(rng.IntN(int(botclass.NumClasses))),
			Bytes:  uint64(rng.IntN(3_000_000)),
			RT:     int64(rng.IntN(2_000_000)),
		}
		if i%5 == 0 {
			f.RT = -1 // not logged
		}
		hits = append(hits, mhit{Page: page, At: at, F: f})
	}
	// A page read only by bots, on one day.
	hits = append(hits, mhit{Page: "/robots.txt", At: utc("2026-11-01T00:00:07Z"), F: measure.Hit{Status: 200, Bot: botclass.AI, Bytes: 120, RT: 300}})
	return hits
}

// writeMeasureHits writes hits of mSite to db as the daemon does.
func writeMeasureHits(t *testing.T, db *mongo.Database, hits []mhit) {
	fill.WriteHot(t, db, mSite, hits)
}

// widen adds an int64 0 to every int32 under "measures" of the documents
// of coll matching filter: the server makes them int64, as it does to a
// count whose $inc overflows 32 bits. It returns how many it widened.
func widen(t *testing.T, coll *mongo.Collection, filter bson.D) int {
	t.Helper()
	ctx := context.Background()
	cur, err := coll.Find(ctx, filter)
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range docs {
		var inc bson.D
		var walk func(prefix string, doc bson.Raw)
		walk = func(prefix string, doc bson.Raw) {
			elems, _ := doc.Elements()
			for _, e := range elems {
				if sub, ok := e.Value().DocumentOK(); ok {
					walk(prefix+e.Key()+".", sub)
				} else if e.Value().Type == bson.TypeInt32 {
					inc = append(inc, bson.E{Key: prefix + e.Key(), Value: int64(0)})
				}
			}
		}
		walk(bucket.FieldMeasures+".", d.Lookup(bucket.FieldMeasures).Document())
		if len(inc) == 0 {
			continue
		}
		id := d.Lookup(bucket.FieldID)
		if _, err := coll.UpdateOne(ctx, bson.D{{Key: bucket.FieldID, Value: id}}, bson.D{{Key: "$inc", Value: inc}}); err != nil {
			t.Fatal(err)
		}
		n += len(inc)
	}
	return n
}

// measureTypes returns the BSON types of the count measures of coll's
// document id (status_2xx at every slot).
func measureTypes(t *testing.T, coll *mongo.Collection, id string) map[bson.Type]int {
	t.Helper()
	raw, err := coll.FindOne(context.Background(), bson.D{{Key: bucket.FieldID, Value: id}}).Raw()
	if err != nil {
		t.Fatalf("%s %s: %v", coll.Name(), id, err)
	}
	v := raw.Lookup(bucket.FieldMeasures, "status_2xx")
	types := map[bson.Type]int{}
	if sub, ok := v.DocumentOK(); ok {
		vals, _ := sub.Values()
		for _, x := range vals {
			types[x.Type]++
		}
	} else {
		types[v.Type]++
	}
	return types
}

// sums are a step's expected sums, counted here from the hits.
type sums struct {
	views, bots, s2, s3, s4, s5, bytes, rtSum, rtN, rtMax int64
	classes                                               [botclass.NumClasses]int64
}

func (s *sums) add(f *measure.Hit) {
	s.views++
	s.classes[f.Bot]++
	if f.Bot != botclass.Person {
		s.bots++
	}
	switch {
	case f.Status >= 200 && f.Status < 300:
		s.s2++
	case f.Status >= 300 && f.Status < 400:
		s.s3++
	case f.Status >= 400 && f.Status < 500:
		s.s4++
	case f.Status >= 500:
		s.s5++
	}
	s.bytes += int64(f.Bytes)
	if f.RT >= 0 {
		s.rtSum += f.RT
		s.rtN++
		s.rtMax = max(s.rtMax, f.RT)
	}
}

// want returns measure m of s: whole measures exactly, the others as
// float64.
func (s *sums) want(m Measure) (n int64, f float64) {
	switch m {
	case Views:
		return s.views, 0
	case Bots:
		return s.bots, 0
	case People:
		return s.views - s.bots, 0
	case Status2xx:
		return s.s2, 0
	case Status3xx:
		return s.s3, 0
	case Status4xx:
		return s.s4, 0
	case Status5xx:
		return s.s5, 0
	case Bytes:
		return s.bytes, 0
	case ErrorRate:
		if s.views == 0 {
			return 0, 0
		}
		return 0, float64(s.s4+s.s5) / float64(s.views)
	case RTAvg:
		if s.rtN == 0 {
			return 0, 0
		}
		return 0, float64(s.rtSum) / float64(s.rtN) / 1000
	case RTMax:
		return 0, float64(s.rtMax) / 1000
	case RTCount:
		return s.rtN, 0
	case BotSearch, BotAI, BotTool, BotOther, BotSuspect:
		return s.classes[botclass.Search+botclass.Class(m-BotSearch)], 0
	case Unmeasured:
		return 0, 0 // every hit of the fixture is measured
	}
	panic(m)
}

// stepOf returns the start of the step holding t, computed here.
func stepOf(step Step, t time.Time) time.Time {
	y, mo, d := t.Date()
	switch step {
	case Minute:
		return time.Date(y, mo, d, t.Hour(), t.Minute(), 0, 0, time.UTC)
	case Hour:
		return time.Date(y, mo, d, t.Hour(), 0, 0, 0, time.UTC)
	case Day:
		return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC)
}

var allMeasures = []Measure{Views, Bots, People, Status2xx, Status3xx, Status4xx, Status5xx, ErrorRate, Bytes, RTAvg, RTMax,
	RTCount, BotSearch, BotAI, BotTool, BotOther, BotSuspect, Unmeasured}

// checkValue compares got with measure m of want.
func checkValue(t *testing.T, what string, m Measure, got Value, want *sums) {
	t.Helper()
	n, f := want.want(m)
	if !m.fractional() {
		if got.Frac || got.N != n {
			t.Errorf("%s %s = %v, want %d", what, m, got, n)
		}
		return
	}
	tol := 0.5e-3 // milliseconds to 3 decimals
	if m == ErrorRate {
		tol = 0.5e-6
	}
	if !got.Frac || math.Abs(got.F-f) > tol+1e-12 {
		t.Errorf("%s %s = %v, want %g", what, m, got, f)
	}
}

// TestMeasures writes hits with every measure through the real flusher
// into the wire server, every page hot, widens one page's counts to int64
// as the server does on overflow, and, in that database and in one the
// same hits were written to as the daemon writes them (the cold pages in
// tails), checks every measure of every page at every step
// (minute: minute buckets; hour: the daily buckets' hours; day: the
// monthly buckets' days; month: the monthly buckets' sums and maxima)
// against the sums counted here from the hits, each step and the range's
// totals, and the views alone as the seed read them.
func TestMeasures(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	hits := measureHits()
	writeMeasureHits(t, db, hits)

	// Page /b's buckets hold int64 counts, the others the int32 the
	// flusher writes (the sites' documents hold int64s).
	var colls bucket.Collections
	var widened int
	for l := range bucket.Level(bucket.Levels) {
		widened += widen(t, db.Collection(colls.Name(l)), bson.D{{Key: l.PageField(), Value: "/b"}})
	}
	if widened == 0 {
		t.Fatal("nothing widened")
	}
	for _, c := range []struct {
		l      bucket.Level
		id     string
		int64s bool
	}{
		{bucket.Minute, "202611010000/" + mSite + "/b", true},
		{bucket.Daily, "20261101/" + mSite + "/b", true},
		{bucket.Monthly, "202611/" + mSite + "/b", true},
		{bucket.Daily, "20261101/" + mSite + "/a", false},
		{bucket.Monthly, "202610/" + mSite + "/a", false},
	} {
		types := measureTypes(t, db.Collection(colls.Name(c.l)), c.id)
		if c.int64s && (types[bson.TypeInt64] == 0 || types[bson.TypeInt32] != 0) || !c.int64s && (types[bson.TypeInt32] == 0 || types[bson.TypeInt64] != 0) {
			t.Fatalf("%s: status_2xx types %v, want int64 %v", c.id, types, c.int64s)
		}
	}

	// The same hits as the daemon writes them: each period's plan decides,
	// the pages under the break-even in their site's tails.
	daemonDB := srv.Database(t)
	fill.Write(t, daemonDB, mSite, hits)
	ctx := context.Background()
	tails, err := daemonDB.Collection(colls.Name(bucket.Daily)).CountDocuments(ctx, bucket.Daily.Range(mSite, bucket.TailPage(0), utc("2026-10-01T00:00:00Z"), utc("2026-12-01T00:00:00Z")))
	if err != nil || tails == 0 {
		t.Fatalf("the daemon's write made no daily tail: %d, %v", tails, err)
	}
	for _, d := range []struct {
		name string
		db   *mongo.Database
	}{{"hot", db}, {"daemon", daemonDB}} {
		r := &Reader{DB: d.db, Clock: clock.NewFake(utc("2026-11-03T00:00:00Z"))}
		for _, tc := range []struct {
			step     Step
			from, to time.Time
		}{
			{Minute, utc("2026-10-31T22:00:00Z"), utc("2026-11-02T09:00:00Z")},
			{Hour, utc("2026-10-31T00:00:00Z"), utc("2026-11-03T00:00:00Z")},
			{Day, utc("2026-10-31T00:00:00Z"), utc("2026-11-03T00:00:00Z")},
			{Day, utc("2026-11-01T00:00:00Z"), utc("2026-11-02T00:00:00Z")}, // one day of two months' buckets
			{Month, utc("2026-10-01T00:00:00Z"), utc("2026-12-01T00:00:00Z")},
		} {
			t.Run(fmt.Sprintf("%s %s %s", d.name, tc.step, tc.from.Format("01-02")), func(t *testing.T) {
				// Expected: per page and step start, and per page over the range.
				want := map[string]map[time.Time]*sums{}
				total := map[string]*sums{}
				siteWant, siteTotal := map[time.Time]*sums{}, &sums{}
				for _, h := range hits {
					if h.At.Before(tc.from) || !h.At.Before(tc.to) {
						continue
					}
					st := stepOf(tc.step, h.At)
					if siteWant[st] == nil {
						siteWant[st] = &sums{}
					}
					siteWant[st].add(&h.F)
					siteTotal.add(&h.F)
					if want[h.Page] == nil {
						want[h.Page], total[h.Page] = map[time.Time]*sums{}, &sums{}
					}
					if want[h.Page][st] == nil {
						want[h.Page][st] = &sums{}
					}
					want[h.Page][st].add(&h.F)
					total[h.Page].add(&h.F)
				}
				res, err := r.Query(ctx, Request{Site: mSite, From: tc.from, To: tc.to, Step: tc.step, Measures: allMeasures})
				if err != nil {
					t.Fatal(err)
				}
				var pages []string
				for _, s := range res.Series {
					pages = append(pages, s.Page)
				}
				if len(pages) != len(want) {
					t.Errorf("pages %q, want those of %v", pages, total)
				}
				// Ranked by views.
				for i := 1; i < len(res.Series); i++ {
					if res.Series[i].Total > res.Series[i-1].Total {
						t.Errorf("not ranked by views: %q", pages)
					}
				}
				var cells, nonZero int
				for k := range res.Series {
					s := &res.Series[k]
					if total[s.Page] == nil {
						t.Errorf("page %s: not in the range", s.Page)
						continue
					}
					for i, ts := range res.Times {
						w := want[s.Page][ts]
						if w == nil {
							w = &sums{}
						} else {
							nonZero++
						}
						for _, m := range allMeasures {
							checkValue(t, fmt.Sprintf("%s %s", s.Page, ts.Format(time.RFC3339)), m, res.Value(s, m, i), w)
							cells++
						}
					}
					for _, m := range allMeasures {
						checkValue(t, s.Page+" total", m, res.Value(s, m, -1), total[s.Page])
					}
				}
				var steps int
				for _, w := range want {
					steps += len(w)
				}
				if nonZero != steps {
					t.Errorf("%d steps with hits seen, want %d", nonZero, steps)
				}

				// The site's sum, read with the pages and alone (SiteOnly),
				// is every page's hits, at each step and over the range.
				only, err := r.Query(ctx, Request{Site: mSite, From: tc.from, To: tc.to, Step: tc.step, Measures: allMeasures, SiteOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				if len(only.Series) != 0 || only.Pages != 0 {
					t.Errorf("site only: %d series, %d pages", len(only.Series), only.Pages)
				}
				for _, r := range []*Result{res, only} {
					for i, ts := range r.Times {
						w := siteWant[ts]
						if w == nil {
							w = &sums{}
						}
						for _, m := range allMeasures {
							checkValue(t, "site "+ts.Format(time.RFC3339), m, r.Value(&r.Site, m, i), w)
						}
					}
					for _, m := range allMeasures {
						checkValue(t, "site total", m, r.Value(&r.Site, m, -1), siteTotal)
					}
				}

				// The views alone read the seed's fields (the daily totals for
				// a day step) and agree.
				views, err := r.Query(ctx, Request{Site: mSite, From: tc.from, To: tc.to, Step: tc.step})
				if err != nil {
					t.Fatal(err)
				}
				if len(views.Series) != len(res.Series) {
					t.Fatalf("views alone: %d pages, with measures %d", len(views.Series), len(res.Series))
				}
				for k := range views.Series {
					if views.Series[k].Page != res.Series[k].Page || !slices.Equal(views.Series[k].Counts, res.Series[k].Counts) {
						t.Errorf("views alone of %s differ from the views read with the measures", views.Series[k].Page)
					}
				}
				t.Logf("%d pages × %d steps × %d measures checked", len(res.Series), len(res.Times), len(allMeasures))
			})
		}
	}

	// -top ranks by views; -page reads one page's measures.
	r := &Reader{DB: db, Clock: clock.NewFake(utc("2026-11-03T00:00:00Z"))}
	res, err := r.Query(ctx, Request{Site: mSite, From: utc("2026-11-01T00:00:00Z"), To: utc("2026-11-02T00:00:00Z"), Step: Hour, Top: 1, Measures: []Measure{Bytes, RTMax}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Series) != 1 || res.Pages != 4 {
		t.Fatalf("top 1: %d series of %d pages", len(res.Series), res.Pages)
	}
	one, err := r.Query(ctx, Request{Site: mSite, Page: res.Series[0].Page, From: utc("2026-11-01T00:00:00Z"), To: utc("2026-11-02T00:00:00Z"), Step: Hour, Measures: []Measure{RTMax, Bytes}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Times {
		if res.Value(&res.Series[0], Bytes, i) != one.Value(&one.Series[0], Bytes, i) || res.Value(&res.Series[0], RTMax, i) != one.Value(&one.Series[0], RTMax, i) {
			t.Errorf("step %d: top and page differ", i)
		}
	}

	// The bot classes: from the sites collection for the site, from the
	// monthly buckets for a page.
	for _, tc := range []struct {
		page     string
		step     Step
		from, to time.Time
		coll     string
	}{
		{"", Day, utc("2026-10-31T00:00:00Z"), utc("2026-11-03T00:00:00Z"), "sites"},
		{"", Day, utc("2026-11-01T00:00:00Z"), utc("2026-11-02T00:00:00Z"), "sites"},
		{"", Month, utc("2026-10-01T00:00:00Z"), utc("2026-11-01T00:00:00Z"), "sites"},
		{"/a", Day, utc("2026-11-01T00:00:00Z"), utc("2026-11-03T00:00:00Z"), "monthly"},
		{"/b", Day, utc("2026-10-31T00:00:00Z"), utc("2026-11-02T00:00:00Z"), "monthly"},
		{"/robots.txt", Month, utc("2026-10-01T00:00:00Z"), utc("2026-12-01T00:00:00Z"), "monthly"},
	} {
		var w sums
		for _, h := range hits {
			if (tc.page == "" || h.Page == tc.page) && !h.At.Before(tc.from) && h.At.Before(tc.to) {
				w.add(&h.F)
			}
		}
		c, err := r.Classes(ctx, Request{Site: mSite, Page: tc.page, From: tc.from, To: tc.to, Step: tc.step})
		if err != nil {
			t.Fatalf("classes %q: %v", tc.page, err)
		}
		if c.Views != w.views || c.Counts != w.classes || c.Collection != tc.coll {
			t.Errorf("classes of %q %s to %s: %d %v from %s, want %d %v from %s", tc.page, tc.from, tc.to, c.Views, c.Counts, c.Collection, w.views, w.classes, tc.coll)
		}
		if w.views == 0 || w.classes[botclass.Person] == w.views {
			t.Errorf("classes of %q: the fixture has no bot there", tc.page)
		}
	}
	if _, err := r.Classes(ctx, Request{Site: "nosuch.test", From: utc("2026-11-01T00:00:00Z"), To: utc("2026-11-02T00:00:00Z"), Step: Day}); !errors.Is(err, ErrUnknownSite) {
		t.Errorf("classes of an unknown site: %v", err)
	}
	if _, err := r.Classes(ctx, Request{Site: mSite, Page: "/nope", From: utc("2026-11-01T00:00:00Z"), To: utc("2026-11-02T00:00:00Z"), Step: Day}); !errors.Is(err, ErrUnknownPage) {
		t.Errorf("classes of an unknown page: %v", err)
	}
	// A known site, a range without documents: zeros.
	c, err := r.Classes(ctx, Request{Site: mSite, From: utc("2025-01-01T00:00:00Z"), To: utc("2025-02-01T00:00:00Z"), Step: Day})
	if err != nil || c.Views != 0 || c.Counts != [botclass.NumClasses]int64{} {
		t.Errorf("classes of a quiet range: %+v, %v", c, err)
	}

	// A value of another type is an error naming its field.
	if _, err := db.Collection(colls.Name(bucket.Minute)).UpdateOne(ctx, bson.D{{Key: bucket.FieldID, Value: "202611020815/" + mSite + "/a"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "measures.bytes", Value: "many"}}}}); err != nil {
		t.Fatal(err)
	}
	_, err = r.Query(ctx, Request{Site: mSite, Page: "/a", From: utc("2026-11-02T08:00:00Z"), To: utc("2026-11-02T09:00:00Z"), Step: Minute, Measures: []Measure{Bytes}})
	if err == nil || !strings.Contains(err.Error(), "measures.bytes: a string, not an integer") {
		t.Errorf("a string in measures.bytes: %v", err)
	}
}

// The measures' bad requests, the level each step reads (and so the
// retention it is checked against), and the bound on cells counting the
// sums held.
func TestMeasureRequests(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Measure
		err  string
	}{
		{"views", []Measure{Views}, ""},
		{"bots,people, error_rate", []Measure{Bots, People, ErrorRate}, ""},
		{"2xx,3xx,4xx,5xx,bytes,rt_avg,rt_max", []Measure{Status2xx, Status3xx, Status4xx, Status5xx, Bytes, RTAvg, RTMax}, ""},
		{"views,hits", nil, `measure "hits": must be one of views, bots, people, 2xx, 3xx, 4xx, 5xx, error_rate, bytes, rt_avg, rt_max`},
		{"bytes,bytes", nil, `measure "bytes": listed twice`},
		{"", nil, `measure "": must be one of`},
	} {
		got, err := ParseMeasures(tc.in)
		if tc.err != "" {
			if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, %v", tc.in, got, err)
		}
	}

	now := utc("2026-11-23T15:04:05Z")
	r := &Reader{Retention: bucket.Retention{Minute: 48 * time.Hour, Daily: 30 * 24 * time.Hour, Monthly: 0}, Clock: clock.NewFake(now)}
	old := Request{Site: "s", From: utc("2026-09-01T00:00:00Z"), To: utc("2026-09-03T00:00:00Z"), Step: Day}
	// A day step of views alone reads the daily buckets: gone.
	var re *RetentionError
	if _, err := r.Check(old); !errors.As(err, &re) || re.Level != "daily" {
		t.Errorf("day step, views: %v", err)
	}
	// With measures it reads the monthly buckets' days: kept.
	withBytes := old
	withBytes.Measures = []Measure{Views, Bytes}
	if _, err := r.Check(withBytes); err != nil {
		t.Errorf("day step with measures: %v", err)
	}
	// The minute step's retention error with measures, as without.
	recent := Request{Site: "s", From: utc("2026-11-21T12:00:00Z"), To: utc("2026-11-21T18:00:00Z"), Step: Minute, Measures: []Measure{RTAvg}}
	_, err := r.Check(recent)
	want := "minute buckets are kept for 48h0m0s (buckets.minute_retention): 2026-11-21T12:00:00Z to 2026-11-21T15:05:00Z cannot be answered at -step minute; use -step hour, or -from 2026-11-21T15:05:00Z or later"
	if !errors.Is(err, ErrRetention) || err.Error() != want {
		t.Errorf("minute step with measures: %v", err)
	}
	// Monthly buckets past their retention at a day step: no coarser step
	// helps.
	r.Retention.Monthly = 60 * 24 * time.Hour
	old.Measures = []Measure{Bots}
	if _, err := r.Check(old); !errors.As(err, &re) || re.Level != "monthly" || strings.Contains(err.Error(), "use -step") {
		t.Errorf("day step with measures past the monthly retention: %v", err)
	}
	if _, err := r.Check(Request{Site: "s", From: old.From, To: old.To, Step: Day, Measures: []Measure{Bots, Bots}}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("a measure twice: %v", err)
	}

	// The classes: days or months, no top, no measure; a site's are
	// subject to the site totals' retention (the daily one), a page's to
	// the monthly one.
	for name, q := range map[string]Request{
		"hour":     {Site: "s", From: recent.From, To: recent.To, Step: Hour},
		"top":      {Site: "s", From: recent.From, To: recent.To, Step: Day, Top: 3},
		"measures": {Site: "s", From: recent.From, To: recent.To, Step: Day, Measures: []Measure{Bytes}},
	} {
		if _, err := r.CheckClasses(q); !errors.Is(err, ErrBadRequest) {
			t.Errorf("classes %s: %v", name, err)
		}
	}
	ancient := Request{Site: "s", From: utc("2020-01-01T00:00:00Z"), To: utc("2020-02-01T00:00:00Z"), Step: Day}
	if _, err := r.CheckClasses(ancient); !errors.As(err, &re) || re.Level != "daily" || !strings.HasPrefix(err.Error(), "site totals are kept for 720h0m0s (buckets.daily_retention)") ||
		strings.Contains(err.Error(), "use -step") {
		t.Errorf("a site's classes of 2020: %v", err)
	}
	// At a month step, from the first month whose days are all kept: the
	// first day kept whole is 2026-10-25 (10-24 expires within the day),
	// so November.
	_, err = r.CheckClasses(Request{Site: "s", From: utc("2026-10-01T00:00:00Z"), To: utc("2026-12-01T00:00:00Z"), Step: Month})
	if !errors.As(err, &re) || !re.Cutoff.Equal(utc("2026-11-01T00:00:00Z")) || !strings.HasSuffix(err.Error(), "-from 2026-11-01T00:00:00Z or later") {
		t.Errorf("a site's classes of a month partly expired: %v", err)
	}
	if _, err := r.CheckClasses(Request{Site: "s", From: utc("2026-11-01T00:00:00Z"), To: now, Step: Month}); err != nil {
		t.Errorf("a site's classes of the months kept: %v", err)
	}
	if _, err := r.CheckClasses(Request{Site: "s", From: utc("2026-10-25T00:00:00Z"), To: now, Step: Day}); err != nil {
		t.Errorf("a site's classes of the days kept: %v", err)
	}
	r.Retention.Daily = 0 // kept
	if _, err := r.CheckClasses(Request{Site: "s", From: ancient.From, To: ancient.To, Step: Day}); err != nil {
		t.Errorf("a site's classes of 2020, daily_retention 0: %v", err)
	}
	r.Retention.Daily = 30 * 24 * time.Hour
	ancient.Page = "/"
	if _, err := r.CheckClasses(ancient); !errors.As(err, &re) || re.Level != "monthly" {
		t.Errorf("a page's classes of 2020: %v", err)
	}

	// Pages × steps × (views + fields) bound the result.
	from := utc("2026-01-01T00:00:00Z")
	res := &Result{Request: Request{Site: "s", From: from, To: from.Add(MaxSteps * time.Minute), Step: Minute, Measures: []Measure{Views, RTAvg}}}
	res.fields = fieldsOf(res.Request.Measures)
	for tm := from; tm.Before(res.Request.To); tm = tm.Add(time.Minute) {
		res.Times = append(res.Times, tm)
	}
	acc := newAccumulator(res, MaxCells)
	limit := MaxCells/(MaxSteps*3) - 1 // views, rt_us, rt_n; the site's sum
	for i := 0; ; i++ {
		if !acc.addWith(fmt.Sprint("/p", i), from, 1, &[numFields]int64{fRTSum: 5, fRTCount: 1}) {
			if i != limit {
				t.Fatalf("stopped at page %d, want %d", i+1, limit+1)
			}
			break
		}
		if i > limit {
			t.Fatal("no bound")
		}
	}
	for _, want := range []string{"16 or more pages × 100000 steps of a minute × 3 sums (the views and 2 for the measures) is over 5000000 counts", "-top N (N up to 15 at this step)"} {
		if !strings.Contains(acc.tooLarge.Error(), want) {
			t.Errorf("no %q in %q", want, acc.tooLarge)
		}
	}
}

// CSV and JSON carry one column or key per measure, in the request's
// order; table and chart one measure; the views alone are written as
// before (count).
func TestWriteMeasures(t *testing.T) {
	from := utc("2026-11-01T00:00:00Z")
	req := Request{Site: "s.test", From: from, To: from.Add(2 * time.Hour), Step: Hour, Measures: []Measure{Views, People, ErrorRate, Bytes, RTAvg, RTMax}}
	res := &Result{Request: req, Times: []time.Time{from, from.Add(time.Hour)}, fields: fieldsOf(req.Measures), Pages: 1}
	s := Series{Page: "/a,b", Total: 7, Counts: []int64{4, 3}}
	s.fields = make([][]int64, len(res.fields.list))
	s.totals = make([]int64, len(res.fields.list))
	set := func(f field, a, b int64) {
		p := res.fields.pos[f] - 1
		s.fields[p] = []int64{a, b}
		if f.isMax() {
			s.totals[p] = max(a, b)
		} else {
			s.totals[p] = a + b
		}
	}
	set(f4xx, 1, 0)
	set(f5xx, 0, 1)
	set(fBots, 3, 0)
	set(fBytes, 1000, 5_000_000_000)
	set(fRTSum, 3500, 0)
	set(fRTCount, 3, 0)
	set(fRTMax, 2000, 0)
	res.Series = []Series{s}

	var b bytes.Buffer
	if err := Write(&b, res, "csv", Options{}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"time", "page", "views", "people", "error_rate", "bytes", "rt_avg_ms", "rt_max_ms"},
		{"2026-11-01T00:00:00Z", "/a,b", "4", "1", "0.25", "1000", "1.167", "2"},
		{"2026-11-01T01:00:00Z", "/a,b", "3", "3", "0.333333", "5000000000", "0", "0"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("csv\n%q\nwant\n%q", rows, want)
	}

	b.Reset()
	if err := Write(&b, res, "json", Options{}); err != nil {
		t.Fatal(err)
	}
	var pts []map[string]any
	if err := json.Unmarshal(b.Bytes(), &pts); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(pts) != 2 || pts[0]["time"] != "2026-11-01T00:00:00Z" || pts[0]["page"] != "/a,b" || pts[0]["rt_avg_ms"] != 1.167 || pts[1]["bytes"] != 5e9 || pts[1]["error_rate"] != 0.333333 {
		t.Errorf("json %v", pts)
	}
	if !strings.Contains(b.String(), "  {\n    \"time\": \"2026-11-01T00:00:00Z\",\n    \"page\": \"/a,b\",\n    \"views\": 4,\n    \"people\": 1,") {
		t.Errorf("json keys not in the request's order or not indented as the points:\n%s", b.String())
	}

	for _, f := range []string{"table", "chart"} {
		if err := Write(&b, res, f, Options{}); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%s of 6 measures: %v", f, err)
		}
	}
	res.Request.Measures = []Measure{RTAvg}
	b.Reset()
	if err := Write(&b, res, "table", Options{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"time (UTC)        page  rt_avg_ms\n", "2026-11-01 00:00  /a,b      1.167\n", "total             /a,b      1.167\n"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, b.String())
		}
	}
	b.Reset()
	if err := Write(&b, res, "chart", Options{}); err != nil || !strings.Contains(b.String(), "rt_avg_ms of s.test per hour") || !strings.Contains(b.String(), "/a,b (1.167)") {
		t.Errorf("chart: %v\n%s", err, b.String())
	}
}

// The classes' formats.
func TestWriteClasses(t *testing.T) {
	c := &Classes{Request: Request{Site: "s.test", From: utc("2026-11-01T00:00:00Z"), To: utc("2026-11-03T00:00:00Z"), Step: Day},
		Views: 200, Counts: [botclass.NumClasses]int64{150, 20, 25, 4, 0, 1}, Collection: "sites"}
	var b bytes.Buffer
	if err := WriteClasses(&b, c, "table", Options{}); err != nil {
		t.Fatal(err)
	}
	want := "class    views    share\n" +
		"people     150   75.00%\n" +
		"search      20   10.00%\n" +
		"ai          25   12.50%\n" +
		"tool         4    2.00%\n" +
		"bot          0    0.00%\n" +
		"suspect      1    0.50%\n" +
		"total      200  100.00%\n" +
		"(site s.test, 2026-11-01 to 2026-11-02 (UTC), from sites; people are the views of no bot class)\n"
	if b.String() != want {
		t.Errorf("table\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteClasses(&b, c, "csv", Options{}); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "class,views,share_percent\npeople,150,75\nsearch,20,10\nai,25,12.5\ntool,4,2\nbot,0,0\nsuspect,1,0.5\n" {
		t.Errorf("csv\n%s", got)
	}
	b.Reset()
	if err := WriteClasses(&b, c, "json", Options{}); err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Class        string  `json:"class"`
		Views        int64   `json:"views"`
		SharePercent float64 `json:"share_percent"`
	}
	if err := json.Unmarshal(b.Bytes(), &rows); err != nil || len(rows) != 6 || rows[2].Class != "ai" || rows[2].Views != 25 || rows[2].SharePercent != 12.5 {
		t.Errorf("json %+v %v", rows, err)
	}
	if err := WriteClasses(&b, c, "chart", Options{}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("chart: %v", err)
	}
}
