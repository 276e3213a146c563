package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/fill"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/query"
	"github.com/logtally/logtally/visitor"
)

// The benchmark's site: benchPages pages, each with hits on each of the
// benchDays days before now, so that the 30-day range and its previous
// period both have every page.
const (
	benchSite  = "bench.test"
	benchPages = 60
	benchDays  = 60
	benchRange = 30 // days shown
	benchTop   = 50
	// Visitors written per page and day, and per site and day.
	benchPageVisitors = 4
	benchSiteVisitors = 150
)

// dbCounts are what the database did for some requests, counted by a
// command monitor on the client the reader uses.
type dbCounts struct {
	cmds  map[string]int // commands by name
	colls map[string]int // documents returned by collection
	trips int            // commands sent: round trips
	docs  int            // documents returned in cursor batches
	bytes int            // reply bytes
}

// dbCounter counts the commands of a client into its current dbCounts.
type dbCounter struct {
	mu  sync.Mutex
	cur *dbCounts
}

// into makes c count into n (nil: count nothing).
func (c *dbCounter) into(n *dbCounts) {
	c.mu.Lock()
	c.cur = n
	c.mu.Unlock()
}

func (c *dbCounter) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{
		Started: func(_ context.Context, e *event.CommandStartedEvent) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.cur != nil {
				c.cur.cmds[e.CommandName]++
				c.cur.trips++
			}
		},
		Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.cur == nil {
				return
			}
			c.cur.bytes += len(e.Reply)
			ns, _ := e.Reply.Lookup("cursor", "ns").StringValueOK()
			_, coll, _ := strings.Cut(ns, ".")
			for _, batch := range []string{"firstBatch", "nextBatch"} {
				if arr, ok := e.Reply.Lookup("cursor", batch).ArrayOK(); ok {
					vals, _ := arr.Values()
					c.cur.docs += len(vals)
					c.cur.colls[coll] += len(vals)
				}
			}
		},
	}
}

// benchPage is the name of page i.
func benchPage(i int) string { return fmt.Sprintf("/p%02d", i) }

// templateHits returns the hits of page /p00: 1+d%4 hits on day d (in
// one minute of the day), every status and bot class among them, some
// without a response time.
func templateHits(first time.Time) []fill.Hit {
	statuses := []int{200, 200, 304, 404, 500, 200, 101}
	var out []fill.Hit
	k := 0
	for d := range benchDays {
		at := first.AddDate(0, 0, d).Add(time.Duration(d%24)*time.Hour + time.Duration(d%60)*time.Minute)
		for j := range 1 + d%4 {
			rt := int64(1000 + 997*k%400_000)
			if k%5 == 0 {
				rt = -1
			}
			out = append(out, fill.Hit{Page: benchPage(0), At: at.Add(time.Duration(j) * time.Second),
				F: measure.Hit{Status: statuses[k%len(statuses)], Bot: botclass.Class(k % int(botclass.NumClasses)),
					Bytes: uint64(100 + 37*k%20_000), RT: rt}})
			k++
		}
	}
	return out
}

// setPath returns doc with the dotted path set to v, the documents on the
// way copied (doc itself is left as it was).
func setPath(doc bson.D, path string, v any) bson.D {
	out := slices.Clone(doc)
	key, rest, nested := strings.Cut(path, ".")
	for i := range out {
		if out[i].Key != key {
			continue
		}
		if nested {
			out[i].Value = setPath(out[i].Value.(bson.D), rest, v)
		} else {
			out[i].Value = v
		}
		return out
	}
	panic("setPath: no " + path)
}

// cloneBuckets copies every bucket of page /p00 (minute, daily, monthly),
// as the flusher wrote them, to pages /p01 to the last: the same
// documents with their _id and page changed, in inserts of at most 40.
func cloneBuckets(b *testing.B, db *mongo.Database) {
	ctx := context.Background()
	var colls bucket.Collections
	src := benchSite + benchPage(0)
	for l := range bucket.Level(bucket.Levels) {
		coll := db.Collection(colls.Name(l))
		cur, err := coll.Find(ctx, bson.D{{Key: l.SiteField(), Value: benchSite}, {Key: l.PageField(), Value: benchPage(0)}})
		if err != nil {
			b.Fatal(err)
		}
		var tmpl []bson.D
		if err := cur.All(ctx, &tmpl); err != nil {
			b.Fatal(err)
		}
		var docs []any
		for i := 1; i < benchPages; i++ {
			for _, doc := range tmpl {
				id := doc[0].Value.(string)
				if doc[0].Key != bucket.FieldID || !strings.HasSuffix(id, src) {
					b.Fatalf("%s: a document of /p00 without its _id first: %v", colls.Name(l), doc[0])
				}
				c := setPath(doc, bucket.FieldID, strings.TrimSuffix(id, src)+benchSite+benchPage(i))
				docs = append(docs, setPath(c, l.PageField(), benchPage(i)))
			}
		}
		for len(docs) > 0 {
			n := min(len(docs), 40)
			if _, err := coll.InsertMany(ctx, docs[:n]); err != nil {
				b.Fatalf("insert %s: %v", colls.Name(l), err)
			}
			docs = docs[n:]
		}
	}
}

// visitorsDoc returns the visitors document of site (page empty) or page
// on day, as the flusher leaves it after n visitors: the zero document
// (bucket.VisitorZero) with the registers that rose set.
func visitorsDoc(day time.Time, site, page string, n int) bson.D {
	prec := uint8(visitor.SitePrecision)
	if page != "" {
		prec = visitor.PagePrecision
	}
	var salt visitor.Salt
	copy(salt[:], visitor.Day.ID(day.Unix()))
	sk := visitor.NewSketch(prec)
	if page != "" {
		sk = visitor.NewSparse(prec)
	}
	for i := range n {
		sk.Add(visitor.KeyOf(&salt, []byte(site), fmt.Appendf(nil, "10.7.%d.%d", i>>8&255, i&255), visitor.UADigest([]byte("Firefox"))))
	}
	doc := bucket.VisitorZero(visitor.Day, day.Unix(), site, page, prec)
	regs := doc[len(doc)-1].Value.(bson.D)
	sk.Risen(nil, func(i int, r uint8) {
		if page == "" {
			regs[i].Value = int32(r)
		} else {
			regs = append(regs, bson.E{Key: strconv.Itoa(i), Value: int32(r)})
		}
	})
	doc[len(doc)-1].Value = regs
	return doc
}

// putBenchVisitors writes the site's visitors on every day, and each
// page's on the days shown (the previous period asks the site's alone),
// in inserts of at most 40 documents.
func putBenchVisitors(b *testing.B, db *mongo.Database, first time.Time) {
	var docs []any
	for d := range benchDays {
		day := first.AddDate(0, 0, d)
		docs = append(docs, visitorsDoc(day, benchSite, "", benchSiteVisitors))
		if d >= benchDays-benchRange {
			for i := range benchPages {
				docs = append(docs, visitorsDoc(day, benchSite, benchPage(i), benchPageVisitors))
			}
		}
	}
	var colls bucket.Collections
	coll := db.Collection(colls.VisitorName())
	for len(docs) > 0 {
		n := min(len(docs), 40)
		if _, err := coll.InsertMany(context.Background(), docs[:n]); err != nil {
			b.Fatalf("insert visitors: %v", err)
		}
		docs = docs[n:]
	}
}

// wantTotals are the totals api/view should give of c.
func wantTotals(c *counts) map[string]int64 {
	return map[string]int64{"views": c.views, "bots": c.bots, "people": c.views - c.bots, "4xx": c.s4xx, "5xx": c.s5xx,
		"bytes": c.bytes, "rt_count": c.rtN, "unmeasured": 0,
		"bot_search": c.classes[botclass.Search], "bot_ai": c.classes[botclass.AI], "bot_tool": c.classes[botclass.Tool],
		"bot_other": c.classes[botclass.Other], "bot_suspect": c.classes[botclass.Suspect]}
}

func checkTotals(b *testing.B, what string, c *counts, got map[string]float64) {
	b.Helper()
	for k, w := range wantTotals(c) {
		if v, ok := got[k]; !ok || int64(v) != w {
			b.Fatalf("%s %s = %v, want %d", what, k, got[k], w)
		}
	}
}

// BenchmarkView measures the page's data for one site's top 50 pages
// over 30 days (GET api/view: a day step, every measure of the top pages
// and the site, the previous 30 days, the visitors of the site and of
// each top page), against the embedded server, and in the same run the
// baseline `logtally query -top 50 -step day -format json` (the views
// alone, through query.Reader and query.Write). It counts what the
// database does for each (commands, round trips, documents returned,
// reply bytes) with a command monitor on the reader's client, and
// reports the view's figures per op and as ratios to the baseline's:
// docs_ratio, roundtrips_ratio, bytes_ratio, time_ratio. ns/op is the
// view's alone. It checks first that both answer the hits written.
//
//	go test -run '^$' -bench BenchmarkView -benchtime 5x ./dashboard
func BenchmarkView(b *testing.B) {
	srv := mongotest.Start(b)
	fillDB := srv.Database(b)
	now := utc("2026-11-25T12:00:00Z")
	today := now.Truncate(24 * time.Hour)
	first := today.AddDate(0, 0, -benchDays)
	from, to := today.AddDate(0, 0, -benchRange), today

	// One page's hits through the buffer and the flusher, its buckets
	// copied to the other pages: on the embedded server an update's cost
	// grows with the collection (60 page-days take about 3 s, the next 60
	// about 18 s), so writing 3,600 page-days through the flusher would
	// take hours. hs are the hits the buckets then hold: /p00's for every
	// page.
	start := time.Now()
	tmpl := templateHits(first)
	fill.WriteHot(b, fillDB, benchSite, tmpl) // every count in its page bucket, which cloneBuckets copies
	filled := time.Since(start)
	cloneBuckets(b, fillDB)
	cloned := time.Since(start) - filled
	var hs []fill.Hit
	for i := range benchPages {
		for _, h := range tmpl {
			h.Page = benchPage(i)
			hs = append(hs, h)
		}
	}
	putBenchVisitors(b, fillDB, first)
	b.Logf("setup: %d hits of one page over %d days through the flusher in %s, its buckets copied to %d pages in %s; %d visitors documents in %s",
		len(tmpl), benchDays, filled.Round(time.Millisecond), benchPages, cloned.Round(time.Millisecond),
		benchDays+benchRange*benchPages, (time.Since(start) - filled - cloned).Round(time.Millisecond))

	// The reader's own client, its commands counted.
	var counter dbCounter
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()).SetMonitor(counter.monitor()).
		SetConnectTimeout(2 * time.Second).SetServerSelectionTimeout(5 * time.Second))
	if err != nil {
		b.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	r := &query.Reader{DB: client.Database(fillDB.Name()), Clock: clock.NewFake(now)}
	// The embedded server reads the daily buckets slowly (seconds; on a
	// loaded machine past the API's 30 s): its counts, not its times,
	// carry over to MongoDB.
	d, err := New(Config{Reader: r, Timeout: 10 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	h := d.Handler()
	target := viewURL(benchSite, "", from, to)
	view := func() []byte {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Host = "localhost"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("api/view: %d %s", w.Code, w.Body)
		}
		return w.Body.Bytes()
	}
	ctx := context.Background()
	baseReq := query.Request{Site: benchSite, From: from, To: to, Step: query.Day, Top: benchTop}
	baseline := func() *query.Result {
		res, err := r.Query(ctx, baseReq)
		if err != nil {
			b.Fatal(err)
		}
		if err := query.Write(io.Discard, res, "json", query.Options{}); err != nil {
			b.Fatal(err)
		}
		return res
	}

	// Both answer the hits written: the view's totals, previous period,
	// top pages and visitors; the baseline's pages and total.
	var got reply
	if err := json.Unmarshal(view(), &got); err != nil {
		b.Fatal(err)
	}
	want := count(hs, from, to, "")
	if got.Step != "day" || len(got.Times) != benchRange {
		b.Fatalf("step %s × %d, want day × %d", got.Step, len(got.Times), benchRange)
	}
	checkTotals(b, "totals", want, got.Totals)
	if got.Previous == nil {
		b.Fatalf("no previous period: %s", got.PrevNote)
	}
	prev := count(hs, from.AddDate(0, 0, -benchRange), from, "")
	if prev.views == 0 || got.Previous.From != from.AddDate(0, 0, -benchRange).UnixMilli() {
		b.Fatalf("previous period from %d, %d views", got.Previous.From, prev.views)
	}
	checkTotals(b, "previous", prev, got.Previous.Totals)
	if len(got.Pages) != benchTop || got.PagesTotal != benchPages {
		b.Fatalf("top pages: %d of %d, want %d of %d", len(got.Pages), got.PagesTotal, benchTop, benchPages)
	}
	for i, p := range got.Pages {
		name, _ := p["page"].(string)
		views, _ := p["views"].(float64)
		if int64(views) != want.pages[name] || p["visitors"] == nil {
			b.Fatalf("page %q: %v views, visitors %v; want %d", name, views, p["visitors"], want.pages[name])
		}
		if i > 0 && views > got.Pages[i-1]["views"].(float64) {
			b.Fatal("pages not ranked")
		}
	}
	if got.Visitors == nil {
		b.Fatal("no site visitors")
	}
	res := baseline()
	if res.Site.Total != want.views || len(res.Series) != benchTop || res.Pages != benchPages {
		b.Fatalf("baseline: %d views, %d of %d pages; want %d, %d of %d", res.Site.Total, len(res.Series), res.Pages, want.views, benchTop, benchPages)
	}
	for _, s := range res.Series {
		if s.Total != want.pages[s.Page] {
			b.Fatalf("baseline %s: %d views, want %d", s.Page, s.Total, want.pages[s.Page])
		}
	}

	vc := dbCounts{cmds: map[string]int{}, colls: map[string]int{}}
	bc := dbCounts{cmds: map[string]int{}, colls: map[string]int{}}
	var tView, tBase time.Duration
	for i := 0; b.Loop(); i++ {
		// Alternate which runs first.
		for j := range 2 {
			t0 := time.Now()
			if (i+j)%2 == 0 {
				counter.into(&vc)
				view()
				tView += time.Since(t0)
			} else {
				counter.into(&bc)
				baseline()
				tBase += time.Since(t0)
			}
			counter.into(nil)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(tView.Nanoseconds())/n, "ns/op")
	b.ReportMetric(float64(tBase.Nanoseconds())/n, "baseline_ns/op")
	b.ReportMetric(float64(tView)/float64(tBase), "time_ratio")
	b.ReportMetric(float64(vc.docs)/n, "docs/op")
	b.ReportMetric(float64(bc.docs)/n, "baseline_docs/op")
	b.ReportMetric(float64(vc.docs)/float64(bc.docs), "docs_ratio")
	b.ReportMetric(float64(vc.trips)/n, "roundtrips/op")
	b.ReportMetric(float64(bc.trips)/n, "baseline_roundtrips/op")
	b.ReportMetric(float64(vc.trips)/float64(bc.trips), "roundtrips_ratio")
	b.ReportMetric(float64(vc.bytes)/n, "reply_B/op")
	b.ReportMetric(float64(vc.bytes)/float64(bc.bytes), "bytes_ratio")
	b.Logf("per op, view: commands %v, documents %v, reply bytes %d; baseline: commands %v, documents %v, reply bytes %d",
		perOp(vc.cmds, b.N), perOp(vc.colls, b.N), vc.bytes/b.N, perOp(bc.cmds, b.N), perOp(bc.colls, b.N), bc.bytes/b.N)
}

// perOp divides counts by n.
func perOp(m map[string]int, n int) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = float64(v) / float64(n)
	}
	return out
}
