package query

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/visitor"
)

// putVisitors writes site's visitors document of the period starting at
// start as the flusher does (bucket.VisitorZero, then $max of the
// registers) from a sketch of visitors from..from+n-1 keyed under a salt
// of the period, and returns that sketch. With wide, the registers are
// sent as int64 (the server then stores int64).
func putVisitors(t *testing.T, coll *mongo.Collection, per visitor.Period, start time.Time, site string, from, n int, wide bool) *visitor.Sketch {
	t.Helper()
	ctx := context.Background()
	var salt visitor.Salt
	copy(salt[:], per.ID(start.Unix()))
	s := visitor.NewSketch(visitor.SitePrecision)
	for i := from; i < from+n; i++ {
		client := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		s.Add(visitor.KeyOf(&salt, []byte(site), []byte(client), visitor.UADigest([]byte("Firefox"))))
	}
	if _, err := coll.InsertOne(ctx, bucket.VisitorZero(per, start.Unix(), site, "", visitor.SitePrecision)); err != nil {
		t.Fatal(err)
	}
	var mx bson.D
	s.Risen(nil, func(i int, r uint8) {
		var v any = int32(r)
		if wide {
			v = int64(r)
		}
		mx = append(mx, bson.E{Key: bucket.RegisterPath(i), Value: v})
	})
	if len(mx) > 0 {
		_, err := coll.UpdateOne(ctx, bucket.VisitorKey(per, start.Unix(), site, ""), bson.D{{Key: "$max", Value: mx}})
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// registerTypes counts the BSON types of the registers of document id.
func registerTypes(t *testing.T, coll *mongo.Collection, id string) map[bson.Type]int {
	t.Helper()
	raw, err := coll.FindOne(context.Background(), bson.D{{Key: bucket.FieldID, Value: id}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := raw.Lookup(bucket.FieldRegisters).Document().Values()
	types := map[bson.Type]int{}
	for _, v := range vals {
		types[v.Type]++
	}
	return types
}

// sumError is the relative standard error of a sum of independent
// estimates es, each with relative error sigma, computed here.
func sumError(es ...float64) float64 {
	var sum, sq float64
	for _, e := range es {
		s := visitor.StdError(visitor.SitePrecision) * e
		sum, sq = sum+e, sq+s*s
	}
	return math.Sqrt(sq) / sum
}

// TestVisitorsQuery writes visitors documents as the flusher does into
// the wire server and checks Reader.Visitors and WriteVisitors: daily
// estimates equal to the sketches' own (within 3 s.e. of the truth), an
// empty day 0 without error, int64 registers read, the month step over
// daily salts a labelled sum with its error, monthly salts one estimate,
// mixed periods stated, and the refusals (page, minute, hour, top, other
// measures, a month document at a day step, an unknown site).
func TestVisitorsQuery(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	coll := db.Collection(bucket.DefaultVisitorCollection)
	r := &Reader{DB: db}
	ctx := context.Background()
	sigma := visitor.StdError(visitor.SitePrecision)

	// v.test: daily salts; 1,000, 500 (200 of them seen on the 1st: another
	// salt, so other keys) and, on the 4th with int64 registers, 50
	// visitors; nothing on the 3rd.
	d1 := putVisitors(t, coll, visitor.Day, utc("2026-11-01T00:00:00Z"), "v.test", 0, 1000, false)
	d2 := putVisitors(t, coll, visitor.Day, utc("2026-11-02T00:00:00Z"), "v.test", 800, 500, false)
	d4 := putVisitors(t, coll, visitor.Day, utc("2026-11-04T00:00:00Z"), "v.test", 5000, 50, true)
	if ty := registerTypes(t, coll, "day:20261104/v.test"); ty[bson.TypeInt64] == 0 {
		t.Fatalf("the 4th's registers were not stored as int64: %v", ty)
	}
	truth := []int{1000, 500, 0, 50}
	sk := []*visitor.Sketch{d1, d2, nil, d4}
	res, err := r.Visitors(ctx, Request{Site: "v.test", From: utc("2026-11-01T00:00:00Z"), To: utc("2026-11-05T00:00:00Z"), Step: Day, Measures: []Measure{Visitors}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Points) != 4 || res.DailySum || res.Column() != "visitors" {
		t.Fatalf("day step: %d points, daily sum %v, column %s", len(res.Points), res.DailySum, res.Column())
	}
	for i, p := range res.Points {
		if want := utc("2026-11-01T00:00:00Z").AddDate(0, 0, i); !p.Time.Equal(want) {
			t.Errorf("point %d at %s, want %s", i, p.Time, want)
		}
		if sk[i] == nil {
			if p.Estimate != 0 || p.Error != 0 || p.Docs != 0 {
				t.Errorf("empty day %s: %+v, want 0 without error", p.Time, p)
			}
			continue
		}
		if p.Estimate != sk[i].Estimate() || p.Error != sigma || p.PeriodName() != "day" {
			t.Errorf("day %s: estimate %v ± %v (%s), want %v ± %v (day)", p.Time, p.Estimate, p.Error, p.PeriodName(), sk[i].Estimate(), sigma)
		}
		if d := math.Abs(p.Estimate/float64(truth[i]) - 1); d > 3*sigma {
			t.Errorf("day %s: estimate %.0f of %d visitors: beyond 3 s.e.", p.Time, p.Estimate, truth[i])
		}
	}
	var out bytes.Buffer
	if err := WriteVisitors(&out, res, "table", Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if !strings.Contains(lines[0], "visitors") || !strings.Contains(lines[0], "(1 s.e.)") || strings.Contains(lines[0], "sum") {
		t.Errorf("day table header %q", lines[0])
	}
	if f := strings.Fields(lines[1]); len(f) != 3 || f[0] != "2026-11-01" || f[1] != strconv.FormatFloat(math.Round(d1.Estimate()), 'f', 0, 64) || f[2] != "±1.6%" {
		t.Errorf("day table line %q", lines[1])
	}
	if f := strings.Fields(lines[3]); len(f) != 2 || f[1] != "0" {
		t.Errorf("empty day's table line %q: want 0 without error", lines[3])
	}
	t.Logf("day step:\n%s", out.String())
	if !strings.Contains(out.String(), "daily salts") {
		t.Errorf("day table does not name the salts:\n%s", out.String())
	}

	// A month step over daily salts: the sum of daily uniques, labelled.
	res, err = r.Visitors(ctx, Request{Site: "v.test", From: utc("2026-11-01T00:00:00Z"), To: utc("2026-12-01T00:00:00Z"), Step: Month, Measures: []Measure{Visitors}})
	if err != nil {
		t.Fatal(err)
	}
	sum := d1.Estimate() + d2.Estimate() + d4.Estimate()
	wantErr := sumError(d1.Estimate(), d2.Estimate(), d4.Estimate())
	if p := res.Points[0]; len(res.Points) != 1 || !res.DailySum || math.Abs(p.Estimate-sum) > 1e-6 || math.Abs(p.Error-wantErr) > 1e-12 || p.Docs != 3 {
		t.Fatalf("month over daily salts: %+v (daily sum %v), want %v ± %v summed from 3", res.Points, res.DailySum, sum, wantErr)
	}
	out.Reset()
	WriteVisitors(&out, res, "table", Options{})
	if head, _, _ := strings.Cut(out.String(), "\n"); !strings.Contains(head, "visitors_daily_sum (sum of daily uniques, not uniques)") {
		t.Errorf("month table header %q: not labelled a sum of daily uniques", head)
	}
	out.Reset()
	WriteVisitors(&out, res, "csv", Options{})
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := "time,site,visitors_daily_sum,visitors_error,salt_period"; strings.Join(rows[0], ",") != want {
		t.Errorf("csv header %q, want %q", strings.Join(rows[0], ","), want)
	}
	if e, _ := strconv.ParseFloat(rows[1][3], 64); len(rows) != 2 || rows[1][0] != "2026-11-01T00:00:00Z" || rows[1][1] != "v.test" ||
		rows[1][2] != strconv.FormatFloat(math.Round(sum), 'f', 0, 64) || math.Abs(e-wantErr) > 1e-6 || rows[1][4] != "day" {
		t.Errorf("csv rows %q, want the sum %.0f ± %.6f", rows, sum, wantErr)
	}
	out.Reset()
	WriteVisitors(&out, res, "json", Options{})
	var pts []map[string]any
	if err := json.Unmarshal(out.Bytes(), &pts); err != nil {
		t.Fatalf("json: %v\n%s", err, out.String())
	}
	if len(pts) != 1 || pts[0]["visitors_daily_sum"] != math.Round(sum) || pts[0]["visitors"] != nil || pts[0]["visitors_error"] == nil {
		t.Errorf("json %v: want visitors_daily_sum %.0f and visitors_error, no visitors", pts, sum)
	}

	// Monthly salts: one estimate per month, not a sum.
	m10 := putVisitors(t, coll, visitor.Month, utc("2026-10-01T00:00:00Z"), "m.test", 0, 3000, false)
	res, err = r.Visitors(ctx, Request{Site: "m.test", From: utc("2026-10-01T00:00:00Z"), To: utc("2026-12-01T00:00:00Z"), Step: Month})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Points) != 2 || res.DailySum || res.Points[0].Estimate != m10.Estimate() || res.Points[0].Error != sigma || res.Points[1].Estimate != 0 {
		t.Fatalf("monthly salts: %+v (daily sum %v), want %v ± %v then 0", res.Points, res.DailySum, m10.Estimate(), sigma)
	}
	out.Reset()
	WriteVisitors(&out, res, "json", Options{})
	pts = nil
	json.Unmarshal(out.Bytes(), &pts)
	if len(pts) != 2 || pts[0]["visitors"] != math.Round(m10.Estimate()) || pts[0]["visitors_error"] != round(sigma, 6) || pts[0]["salt_period"] != "month" ||
		pts[1]["visitors"] != 0.0 || pts[1]["visitors_error"] != 0.0 || pts[1]["salt_period"] != "" {
		t.Errorf("monthly json %v", pts)
	}
	_, err = r.Visitors(ctx, Request{Site: "m.test", From: utc("2026-10-01T00:00:00Z"), To: utc("2026-10-03T00:00:00Z"), Step: Day})
	if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "-step month") {
		t.Errorf("day step over a monthly salt: %v, want a bad request naming -step month", err)
	}

	// Mixed: daily salts in October, monthly in November; each counted
	// with its own, and stated.
	x1 := putVisitors(t, coll, visitor.Day, utc("2026-10-30T00:00:00Z"), "x.test", 0, 200, false)
	x2 := putVisitors(t, coll, visitor.Day, utc("2026-10-31T00:00:00Z"), "x.test", 100, 200, false)
	x3 := putVisitors(t, coll, visitor.Month, utc("2026-11-01T00:00:00Z"), "x.test", 0, 700, false)
	res, err = r.Visitors(ctx, Request{Site: "x.test", From: utc("2026-10-01T00:00:00Z"), To: utc("2026-12-01T00:00:00Z"), Step: Month})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Points; !res.DailySum || periodNames(res.Periods) != "day+month" || math.Abs(p[0].Estimate-x1.Estimate()-x2.Estimate()) > 1e-6 ||
		p[0].PeriodName() != "day" || p[1].Estimate != x3.Estimate() || p[1].PeriodName() != "month" || p[1].Error != sigma {
		t.Errorf("mixed periods: %+v, periods %s", p, periodNames(res.Periods))
	}
	out.Reset()
	WriteVisitors(&out, res, "table", Options{})
	t.Logf("mixed, month step:\n%s", out.String())
	if !strings.Contains(out.String(), "mixes daily and monthly salts") {
		t.Errorf("mixed table does not say so:\n%s", out.String())
	}

	// Refusals, before anything is read.
	base := Request{Site: "v.test", From: utc("2026-11-01T00:00:00Z"), To: utc("2026-11-05T00:00:00Z"), Step: Day, Measures: []Measure{Visitors}}
	for _, c := range []struct {
		name string
		edit func(*Request)
		want string
	}{
		{"minute", func(q *Request) { q.Step = Minute }, "-step day or -step month"},
		{"hour", func(q *Request) { q.Step = Hour }, "-step day or -step month"},
		{"top", func(q *Request) { q.Top = 3 }, "per site"},
		{"with views", func(q *Request) { q.Measures = []Measure{Views, Visitors} }, "read alone"},
	} {
		q := base
		c.edit(&q)
		if _, err := r.Visitors(ctx, q); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a bad request saying %q", c.name, err, c.want)
		}
	}
	q := base
	q.Measures = []Measure{Visitors, Views}
	if _, err := r.Query(ctx, q); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "read alone") {
		t.Errorf("Query with visitors: %v, want a bad request", err)
	}
	q = base
	q.Site = "nobody.test"
	if _, err := r.Visitors(ctx, q); !errors.Is(err, ErrUnknownSite) {
		t.Errorf("unknown site: %v, want ErrUnknownSite", err)
	}
	q.Site, q.From, q.To = "v.test", utc("2025-01-01T00:00:00Z"), utc("2025-01-03T00:00:00Z")
	if res, err := r.Visitors(ctx, q); err != nil || len(res.Points) != 2 || res.Points[0].Docs != 0 {
		t.Errorf("a quiet range of a known site: %v, %+v; want zeros", err, res)
	}
}

// TestParseMeasuresVisitors: "visitors" parses, alone or listed, and is
// named in the list of measures.
func TestParseMeasuresVisitors(t *testing.T) {
	ms, err := ParseMeasures("visitors")
	if err != nil || len(ms) != 1 || ms[0] != Visitors || ms[0].String() != "visitors" || ms[0].Column() != "visitors" {
		t.Fatalf("ParseMeasures(visitors) = %v, %v", ms, err)
	}
	if !strings.Contains(MeasureNames, "visitors") {
		t.Errorf("MeasureNames %q lacks visitors", MeasureNames)
	}
	if _, err := ParseMeasures("visitors,visitors"); err == nil {
		t.Error("visitors twice parsed")
	}
}

// A page's visitors are read from its own document (sparse, precision
// 10); the site's answer ignores the pages' documents.
func TestVisitorsQueryPage(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	coll := db.Collection(bucket.DefaultVisitorCollection)
	r := &Reader{DB: db}
	ctx := context.Background()
	day := utc("2026-11-01T00:00:00Z")
	site := putVisitors(t, coll, visitor.Day, day, "v.test", 0, 1000, false)
	var salt visitor.Salt
	page := visitor.NewSparse(visitor.PagePrecision)
	for i := range 300 {
		page.Add(visitor.KeyOf(&salt, []byte("v.test"), fmt.Appendf(nil, "10.9.%d.%d", i>>8, i&255), 1))
	}
	if _, err := coll.InsertOne(ctx, bucket.VisitorZero(visitor.Day, day.Unix(), "v.test", "/a", visitor.PagePrecision)); err != nil {
		t.Fatal(err)
	}
	var mx bson.D
	page.Risen(nil, func(i int, r uint8) { mx = append(mx, bson.E{Key: bucket.RegisterPath(i), Value: int32(r)}) })
	if _, err := coll.UpdateOne(ctx, bucket.VisitorKey(visitor.Day, day.Unix(), "v.test", "/a"), bson.D{{Key: "$max", Value: mx}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		page string
		want *visitor.Sketch
	}{{"", site}, {"/a", page}} {
		res, err := r.Visitors(ctx, Request{Site: "v.test", Page: c.page, From: day, To: day.AddDate(0, 0, 1), Step: Day, Measures: []Measure{Visitors}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Points) != 1 || res.Points[0].Estimate != c.want.Estimate() {
			t.Errorf("page %q: %+v, want the estimate %.0f", c.page, res.Points, c.want.Estimate())
		}
	}
}
