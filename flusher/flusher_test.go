package flusher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/record"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// env is a buffer in a temp dir, a database on a real server and a
// flusher between them.
type env struct {
	srv  *mongotest.Server
	db   *mongo.Database
	path string
	buf  *buffer.Buffer
	f    *Flusher
	want expected
	// numbers gives every flusher of the env its writer number, as the
	// daemon's do (numbered batches), unless unnumbered.
	numbers    *record.Store
	unnumbered bool
	// tails writes the batches in their own layout (buffer.LayoutTails:
	// cold pages to tails); else every page to its own buckets, as a
	// batch of a logtally before tails is: the page buckets' path, which
	// the tests written before tails judge with check.
	tails bool
}

func newEnv(t *testing.T, maxOps int) *env {
	t.Helper()
	srv := mongotest.Start(t)
	e := &env{srv: srv, db: srv.Database(t), path: filepath.Join(t.TempDir(), "buffer.db"), want: newExpected()}
	var err error
	if e.numbers, err = record.NewStore(record.Config{DB: e.db, Instance: "test", Holder: "test"}); err != nil {
		t.Fatal(err)
	}
	e.open(t)
	e.f = e.newFlusher(t, Config{MaxOps: maxOps})
	if err := e.f.maint.expirer.ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) open(t *testing.T) {
	t.Helper()
	buf := testenv.OpenBuffer(t, e.path, buffer.Options{})
	e.buf = buf
}

func (e *env) newFlusher(t *testing.T, cfg Config) *Flusher {
	t.Helper()
	cfg.Buffer, cfg.DB = e.buf, e.db
	if cfg.Numbers == nil && !e.unnumbered {
		cfg.Numbers = e.numbers
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !e.tails {
		testHooks(f).layout = func(buffer.Layout) buffer.Layout { return buffer.LayoutPages }
	}
	return f
}

// testHooks returns f's test hooks, installing them on first use. Set
// them before Run.
func testHooks(f *Flusher) *hooks {
	if f.hooks == nil {
		f.hooks = &hooks{}
		f.maint.expirer.hooks = f.hooks
		if f.maint.prealloc != nil {
			f.maint.prealloc.hooks = f.hooks
		}
	}
	return f.hooks
}

type hit struct {
	site, page string
	at         string // RFC 3339, UTC
	n          uint64
}

// commit adds hits to the buffer and to the expectations, and returns
// their counts.
func (e *env) commit(t *testing.T, hits ...hit) map[string]measure.Vector {
	t.Helper()
	counts := map[string]measure.Vector{}
	for _, h := range hits {
		at, err := time.Parse(time.RFC3339, h.at)
		if err != nil {
			t.Fatal(err)
		}
		k := string(buffer.AppendKey(nil, []byte(h.site), []byte(h.page), at.Unix()))
		v := counts[k]
		f := factsOf(h.page, at)
		for range h.n {
			v.Add(&f)
		}
		counts[k] = v
		e.want.add(h.site, h.page, at.UTC(), int64(h.n))
	}
	if err := e.buf.Commit(buffer.Commit{Counts: buffer.CountsOf(counts)}); err != nil {
		t.Fatal(err)
	}
	return counts
}

// run runs e.f.Run until the test ends, when an error of Run's fails it.
// sealed returns the batch in flight (buffer.ReadTx.Sealed).
func (e *env) sealed() (*buffer.Batch, error) { return sealedIn(e.buf) }

// sealedIn returns buf's batch in flight (nil: none).
func sealedIn(buf *buffer.Buffer) (*buffer.Batch, error) {
	var b *buffer.Batch
	err := buf.View(func(tx *buffer.ReadTx) error { b = tx.Sealed(); return nil })
	return b, err
}

func (e *env) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.f.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
}

// runReady runs e.f.Run (run) and waits until its indexes are ensured and
// it waits on fake for its interval.
func (e *env) runReady(t *testing.T, fake *clock.Fake) {
	t.Helper()
	e.run(t)
	if !testenv.Until(30*time.Second, e.f.IndexesReady) {
		t.Fatal("indexes not ensured in 30s")
	}
	blockUntil(t, fake) // waiting for the interval
}

func (e *env) flush(t *testing.T) {
	t.Helper()
	sent, err := e.f.Flush(context.Background())
	if err != nil || !sent {
		t.Fatalf("Flush = %v, %v; want true, nil", sent, err)
	}
}

// factsOf returns the facts every test hit of page at t has: a status,
// a bot class, bytes and a response time that vary with the page and the
// second, so that each measure's slots and sums are told apart.
func factsOf(page string, t time.Time) measure.Hit {
	f := measure.Hit{Status: 200, Bytes: uint64(100 + len(page)), RT: int64(1000 * (t.Second() + 1))}
	if strings.Contains(page, "b") {
		f.Status, f.Bot = 404, botclass.AI
	}
	if t.Second()%7 == 3 {
		f.RT = -1 // no response time logged
	}
	return f
}

// expected holds, per collection and bucket id, every non-zero counter as
// a dotted path, computed here independently of the flusher's code.
type expected map[string]map[string]map[string]int64

func newExpected() expected {
	return expected{"minutes": {}, "daily": {}, "monthly": {}, "sites": {}}
}

func (x expected) add(site, page string, at time.Time, n int64) {
	inc := func(coll, id string, fields ...string) {
		if x[coll][id] == nil {
			x[coll][id] = map[string]int64{}
		}
		for _, f := range fields {
			x[coll][id][f] += n
		}
	}
	key := site + page
	f := factsOf(page, at)
	var ms []string // the measures each hit adds one to
	if f.Status == 200 {
		ms = append(ms, "status_2xx")
	} else {
		ms = append(ms, "status_4xx")
	}
	if f.Bot == botclass.AI {
		ms = append(ms, "bot_ai")
	}
	if f.RT >= 0 {
		ms = append(ms, "rt_n")
	}
	measures := func(coll, id, slot string) {
		if x[coll][id] == nil {
			x[coll][id] = map[string]int64{}
		}
		c := x[coll][id]
		for _, m := range ms {
			c["measures."+m+slot] += n
		}
		c["measures.bytes"+slot] += n * int64(f.Bytes)
		if f.RT >= 0 {
			c["measures.rt_us"+slot] += n * f.RT
			c["measures.rt_max_us"+slot] = max(c["measures.rt_max_us"+slot], f.RT)
		}
	}
	measures("minutes", fmt.Sprintf("%04d%02d%02d%02d%02d/%s", at.Year(), at.Month(), at.Day(), at.Hour(), at.Minute(), key), "")
	measures("daily", fmt.Sprintf("%04d%02d%02d/%s", at.Year(), at.Month(), at.Day(), key), fmt.Sprintf(".%d", at.Hour()))
	measures("monthly", fmt.Sprintf("%04d%02d/%s", at.Year(), at.Month(), key), fmt.Sprintf(".%d", at.Day()))
	site0 := fmt.Sprintf("%04d%02d%02d/%s", at.Year(), at.Month(), at.Day(), site)
	measures("sites", site0, "")
	x["sites"][site0]["views"] += n
	inc("minutes", fmt.Sprintf("%04d%02d%02d%02d%02d/%s", at.Year(), at.Month(), at.Day(), at.Hour(), at.Minute(), key),
		fmt.Sprintf("seconds.%d", at.Second()), "totalViews")
	inc("daily", fmt.Sprintf("%04d%02d%02d/%s", at.Year(), at.Month(), at.Day(), key),
		fmt.Sprintf("minute.%d.%d", at.Hour(), at.Minute()), fmt.Sprintf("hourly.%d", at.Hour()), "daily")
	inc("monthly", fmt.Sprintf("%04d%02d/%s", at.Year(), at.Month(), key),
		fmt.Sprintf("daily.%d", at.Day()), "total")
}

// shape returns every counter path a zero-filled document of coll has,
// for a bucket starting at date.
func shape(coll string, date time.Time) []string {
	var paths []string
	measures := func(slots ...string) {
		for _, m := range measureNames {
			for _, s := range slots {
				paths = append(paths, "measures."+m+s)
			}
		}
	}
	switch coll {
	case "sites":
		paths = append(paths, "views")
		measures("")
	case "minutes":
		measures("")
		for s := 0; s < 60; s++ {
			paths = append(paths, fmt.Sprintf("seconds.%d", s))
		}
		paths = append(paths, "totalViews")
	case "daily":
		for h := 0; h < 24; h++ {
			for m := 0; m < 60; m++ {
				paths = append(paths, fmt.Sprintf("minute.%d.%d", h, m))
			}
			paths = append(paths, fmt.Sprintf("hourly.%d", h))
			measures(fmt.Sprintf(".%d", h))
		}
		paths = append(paths, "daily")
	case "monthly":
		days := time.Date(date.Year(), date.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
		for d := 1; d <= days; d++ {
			paths = append(paths, fmt.Sprintf("daily.%d", d))
			measures(fmt.Sprintf(".%d", d))
		}
		paths = append(paths, "total")
	}
	return paths
}

// measureNames are the measures' field names, written out here.
var measureNames = []string{"status_2xx", "status_3xx", "status_4xx", "status_5xx", "status_other",
	"bot_search", "bot_ai", "bot_tool", "bot_other", "bot_suspect", "bytes", "rt_us", "rt_n", "rt_max_us"}

// flatten collects the integer leaves of d under their dotted paths and
// fails on any other leaf type: int64, except the counts of hits among
// the measures of a page bucket (int32; narrow false: the sites').
func flatten(t *testing.T, prefix string, d bson.D, out map[string]int64, narrow bool) {
	t.Helper()
	for _, el := range d {
		path := prefix + el.Key
		count := strings.HasPrefix(path, "measures.status_") || strings.HasPrefix(path, "measures.bot_") || strings.HasPrefix(path, "measures.rt_n")
		switch v := el.Value.(type) {
		case bson.D:
			flatten(t, path+".", v, out, narrow)
		case int64:
			if narrow && count {
				t.Errorf("%s is int64 %d, want int32", path, v)
			}
			out[path] = v
		case int32:
			if !narrow || !count {
				t.Errorf("%s is int32 %d, want int64", path, v)
			}
			out[path] = int64(v)
		default:
			t.Errorf("%s is %T %v, want an integer", path, el.Value, el.Value)
		}
	}
}

// check reads every bucket back and compares it with e.want: the same
// documents, every counter of the full shape present, int64, and equal to
// the expectation (zero where none), and an applied entry for this
// instance.
func (e *env) check(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for coll, want := range e.want {
		cur, err := e.db.Collection(coll).Find(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		var docs []bson.D
		if err := cur.All(ctx, &docs); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, doc := range docs {
			m := toMap(doc)
			id, _ := m["_id"].(string)
			if strings.HasSuffix(id, bucket.PlanPage) {
				continue // a plan (the preallocator proposes them)
			}
			seen[id] = true
			wantCounters, ok := want[id]
			if !ok {
				t.Errorf("%s: unexpected document %q", coll, id)
				continue
			}
			site, page, date := fieldsOf(t, coll, m)
			if !strings.HasSuffix(id, "/"+site+page) {
				t.Errorf("%s %s: site %q page %q do not match the id", coll, id, site, page)
			}
			if got := date.Format(map[string]string{"minutes": "200601021504", "daily": "20060102", "monthly": "200601", "sites": "20060102"}[coll]); !strings.HasPrefix(id, got+"/") {
				t.Errorf("%s %s: date %v does not match the id", coll, id, date)
			}
			counters := map[string]int64{}
			for _, el := range doc {
				if coll == "sites" && (el.Key == bucket.FieldSources || el.Key == bucket.FieldSize) {
					continue // counts by dimension: TestSiteSourcesExactOnce
				}
				if v, ok := el.Value.(bson.D); ok && el.Key != "metadata" && el.Key != "applied" {
					flatten(t, el.Key+".", v, counters, coll != "sites")
				} else if v, ok := el.Value.(int64); ok {
					counters[el.Key] = v
				}
			}
			wantShape := shape(coll, date)
			if len(counters) != len(wantShape) {
				t.Errorf("%s %s: %d counters, want %d", coll, id, len(counters), len(wantShape))
			}
			for _, p := range wantShape {
				got, ok := counters[p]
				if !ok {
					t.Errorf("%s %s: counter %s missing", coll, id, p)
				} else if got != wantCounters[p] {
					t.Errorf("%s %s: %s = %d, want %d", coll, id, p, got, wantCounters[p])
				}
			}
			applied, _ := m["applied"].(bson.D)
			// An empty expectation is a bucket created ahead of time
			// (preallocated) and not written yet.
			mine := toMap(applied)
			if len(wantCounters) > 0 && mine[e.buf.InstanceID()] == nil && mine[strconv.FormatInt(e.buf.Number(), 10)] == nil {
				t.Errorf("%s %s: applied %v has no entry for this writer", coll, id, applied)
			}
		}
		for id := range want {
			if !seen[id] {
				t.Errorf("%s: document %q missing", coll, id)
			}
		}
	}
}

func fieldsOf(t *testing.T, coll string, m map[string]any) (site, page string, date time.Time) {
	t.Helper()
	src := m
	if coll != "minutes" {
		md, _ := m["metadata"].(bson.D)
		src = toMap(md)
	}
	site, _ = src["site"].(string)
	page, _ = src["page"].(string)
	dt, ok := src[map[bool]string{true: "timestamp", false: "date"}[coll == "minutes"]].(bson.DateTime)
	if !ok {
		t.Errorf("%s %v: no date", coll, m["_id"])
	}
	return site, page, dt.Time().UTC()
}

// spread returns hits for 3 pages on 2 sites over seconds spanning three
// minutes, two days and a month boundary, with varied counts: 21 buckets.
func spread() []hit {
	var hits []hit
	times := []string{
		"2024-01-31T05:17:03Z",
		"2024-01-31T23:59:30Z", "2024-01-31T23:59:31Z", "2024-01-31T23:59:59Z",
		"2024-02-01T00:00:00Z", "2024-02-01T00:00:07Z", "2024-02-01T00:00:59Z",
	}
	n := uint64(1)
	for _, sp := range [][2]string{{"a.example", "/"}, {"a.example", "/news"}, {"b.example", "/news"}} {
		for _, at := range times {
			hits = append(hits, hit{sp[0], sp[1], at, n})
			n = n%7 + 1
		}
	}
	return hits
}

func TestCountsLandExactlyAndBucketsAreCreatedOnce(t *testing.T) {
	e := newEnv(t, 4)
	e.commit(t, spread()...)
	e.flush(t)
	e.check(t)

	// 3 pages x (3 minutes, 2 days, 2 months) = 21 buckets and 2 sites x
	// 2 days = 4 site totals, created once.
	st := e.f.Stats()
	if st.Batches != 1 || st.Inserts != 25 || st.Hits == 0 {
		t.Errorf("stats %+v: want 1 batch, 25 inserts", st)
	}
	if keys, hits := e.buf.Pending(); keys != 0 || hits != 0 {
		t.Errorf("pending %d keys %d hits after flush", keys, hits)
	}
	if b, err := e.sealed(); err != nil || b != nil {
		t.Errorf("sealed batch %v, %v after flush", b, err)
	}
	if sent, err := e.f.Flush(context.Background()); sent || err != nil {
		t.Errorf("empty Flush = %v, %v", sent, err)
	}

	// The new buckets are inserted whole: one insert per chunk (9
	// minute, 6 daily, 6 monthly buckets, 4 site totals, by 4), no
	// update, no find.
	first := e.f.Stats()
	if first.Finds != 0 || first.Updates != 0 || first.InsertCalls != 3+2+2+1 || first.BucketWrites != 25 {
		t.Errorf("first batch into new buckets: %+v, want 8 insert calls, 25 buckets written, no find or update", first)
	}
	// A second batch into the same buckets only updates them: no finds,
	// no inserts, one bulk write per chunk.
	e.commit(t, spread()...)
	e.flush(t)
	second := e.f.Stats()
	if second.Finds != first.Finds || second.Inserts != first.Inserts {
		t.Errorf("second batch into existing buckets: finds %d->%d inserts %d->%d, want unchanged",
			first.Finds, second.Finds, first.Inserts, second.Inserts)
	}
	if got := second.BulkWrites - first.BulkWrites; got != 3+2+2+1 {
		t.Errorf("second batch took %d bulk writes, want 8", got)
	}
	if got := second.Updates - first.Updates; got != 21+4 {
		t.Errorf("second batch sent %d updates, want 25", got)
	}
	e.check(t)
}

// small returns hits for 2 pages over 2 minutes of one day: 8 buckets.
func small() []hit {
	return []hit{
		{"a.example", "/", "2024-03-05T10:20:59Z", 3},
		{"a.example", "/", "2024-03-05T10:21:00Z", 1},
		{"a.example", "/b", "2024-03-05T10:20:01Z", 2},
		{"a.example", "/b", "2024-03-05T10:21:30Z", 5},
	}
}

func TestBatchSentTwiceCountsOnce(t *testing.T) {
	e := newEnv(t, 4)
	e.commit(t, small()...)

	// Write every chunk, then "crash" before Ack.
	crash := errors.New("crash")
	testHooks(e.f).afterChunk = func(p pass, _ int) error {
		if p == donePass {
			return crash
		}
		return nil
	}
	if _, err := e.f.Flush(context.Background()); !errors.Is(err, crash) {
		t.Fatalf("Flush = %v, want the crash", err)
	}
	e.check(t)
	batch, err := e.sealed()
	if err != nil || batch == nil {
		t.Fatalf("sealed batch after crash: %v, %v", batch, err)
	}

	// Restart on the same file, with the progress lost too, so the whole
	// batch is sent again.
	if err := e.buf.Close(); err != nil {
		t.Fatal(err)
	}
	e.open(t)
	if err := e.buf.SaveProgress(batch.ID, nil); err != nil {
		t.Fatal(err)
	}
	e.f = e.newFlusher(t, Config{MaxOps: 4})
	e.flush(t)
	st := e.f.Stats()
	if st.Updates != 8+1 || st.Inserts != 0 || st.Batches != 1 {
		t.Errorf("resend stats %+v: want 9 updates (8 buckets, 1 site total), 0 inserts, 1 batch", st)
	}
	e.check(t)
}

func TestExistingBucketsAreNotInsertedAgain(t *testing.T) {
	e := newEnv(t, 8)
	ctx := context.Background()

	// Another host created a minute bucket and counted into it.
	var other Chunker
	other.Reset(minutePass.level(), 8)
	other.Add(buffer.AppendKey(nil, []byte("a.example"), []byte("/x"), mustUnix(t, "2024-03-05T10:20:30Z")), new(measure.OfViews(5)))
	doc := other.Docs[0].Zero()
	doc[len(doc)-1].Value = bson.D{{Key: "otherhost", Value: "b0"}}
	for i := range doc {
		switch doc[i].Key {
		case "totalViews":
			doc[i].Value = int64(5)
		}
	}
	if _, err := e.db.Collection("minutes").InsertOne(ctx, doc); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Collection("minutes").UpdateOne(ctx, bson.D{{Key: "_id", Value: other.Docs[0].ID}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "seconds.30", Value: int64(5)}}}}); err != nil {
		t.Fatal(err)
	}
	e.want["minutes"][other.Docs[0].ID] = map[string]int64{"seconds.30": 5, "totalViews": 5}

	// Between the decision to insert the daily buckets (this flusher has
	// not written them) and the insert, a third host creates one of them:
	// the insert meets a duplicate key, and the guarded update applies
	// this batch to it.
	var raced string
	testHooks(e.f).beforeWhole = func(p pass, ids []string) {
		if p != dailyPass || raced != "" {
			return
		}
		b := bucket.NewDoc(bucket.Daily, "a.example", "/y", mustUnix(t, "2024-03-05T00:00:00Z"))
		if !slices.Contains(ids, b.ID) {
			t.Errorf("daily chunk %v lacks %s", ids, b.ID)
		}
		if _, err := e.db.Collection("daily").InsertOne(ctx, b.Zero()); err != nil {
			t.Errorf("racing insert: %v", err)
		}
		raced = b.ID
	}

	e.commit(t,
		hit{"a.example", "/x", "2024-03-05T10:20:31Z", 2},
		hit{"a.example", "/y", "2024-03-05T10:20:31Z", 3},
	)
	e.flush(t)
	if raced == "" {
		t.Fatal("the racing insert did not happen")
	}
	// 2 minute (1 existed) + 2 daily (1 raced) + 2 monthly buckets + 1
	// site total; the 2 that existed met a duplicate and took one update
	// each, and no find was needed.
	if st := e.f.Stats(); st.Inserts != 1+1+2+1 || st.InsertDups != 2 || st.Updates != 2 || st.Finds != 0 {
		t.Errorf("%+v: want 5 inserts, 2 duplicates, 2 updates, no find", st)
	}
	e.check(t)
	var got bson.D
	if err := e.db.Collection("minutes").FindOne(ctx, bson.D{{Key: "_id", Value: other.Docs[0].ID}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if applied, _ := toMap(got)["applied"].(bson.D); toMap(applied)["otherhost"] != "b0" {
		t.Errorf("other host's applied entry lost: %v", applied)
	}
}

func TestIgnoreDuplicates(t *testing.T) {
	e := newEnv(t, 4)
	ctx := context.Background()
	coll := e.db.Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}}); err != nil {
		t.Fatal(err)
	}
	_, err := coll.InsertMany(ctx, []bson.D{{{Key: "_id", Value: "b"}}, {{Key: "_id", Value: "a"}}, {{Key: "_id", Value: "c"}}},
		options.InsertMany().SetOrdered(false))
	if dups, err := ignoreDuplicates(err); err != nil || dups != 1 {
		t.Errorf("ignoreDuplicates = %d, %v; want 1, nil", dups, err)
	}
	if at := duplicateAt(err); len(at) != 1 || !at[1] {
		t.Errorf("duplicateAt = %v, want the second statement", at)
	}
	if at := duplicateAt(nil); len(at) != 0 {
		t.Errorf("duplicateAt(nil) = %v", at)
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{}); n != 3 {
		t.Errorf("%d documents, want 3", n)
	}
	other := mongo.BulkWriteException{WriteErrors: []mongo.BulkWriteError{
		{WriteError: mongo.WriteError{Code: 11000}}, {WriteError: mongo.WriteError{Code: 121}},
	}}
	if _, err := ignoreDuplicates(other); err == nil {
		t.Error("a validation error was ignored")
	}
	if _, err := ignoreDuplicates(errors.New("network")); err == nil {
		t.Error("a network error was ignored")
	}
}

func TestLargeBatchInterruptedAndResumed(t *testing.T) {
	e := newEnv(t, 3)
	var hits []hit
	for i := range 8 {
		hits = append(hits, hit{"s.example", fmt.Sprintf("/p%02d", i), "2024-05-06T07:08:09Z", uint64(i + 1)})
	}
	e.commit(t, hits...)

	// 8 buckets per pass, 3 chunks each. Stop after the 4th chunk: the
	// minute pass and 1 daily chunk written.
	stop := errors.New("stop")
	testHooks(e.f).afterChunk = func(_ pass, chunk int) error {
		if chunk == 4 {
			return stop
		}
		return nil
	}
	if _, err := e.f.Flush(context.Background()); !errors.Is(err, stop) {
		t.Fatalf("Flush = %v, want stop", err)
	}
	before := e.f.Stats()
	// Every bucket is new: inserted whole, one insert per chunk.
	if before.Updates != 0 || before.Inserts != 8+3 || before.InsertCalls != 4 {
		t.Fatalf("stats %+v before the stop, want 11 inserts in 4 calls, no update", before)
	}
	batch, err := e.sealed()
	if err != nil || batch == nil || len(batch.Progress) == 0 {
		t.Fatalf("sealed batch %+v, %v: want saved progress", batch, err)
	}

	testHooks(e.f).afterChunk = nil
	e.flush(t)
	after := e.f.Stats()
	if d := delta(before, after); d != (statsDelta{Inserts: 24 - 11 + 1, InsertCalls: 5 + 1}) {
		t.Errorf("resume: %+v, want the remaining 13 buckets and the site total inserted in 6 calls, nothing else", d)
	}
	e.check(t)
}

// A server too slow for a whole chunk within Timeout must not stall the
// batch forever: chunks shrink after a timeout until they get through.
func TestTimedOutChunksShrink(t *testing.T) {
	e := newEnv(t, 8)
	var hits []hit
	for i := range 6 {
		hits = append(hits, hit{"s.example", fmt.Sprintf("/p%02d", i), "2024-05-06T07:08:09Z", uint64(i + 1)})
	}
	e.commit(t, hits...)
	largest := 0
	testHooks(e.f).exists = func(pass, string) bool { return true } // updates first
	testHooks(e.f).beforeBulk = func(n int) error {
		if n > 2 {
			return context.DeadlineExceeded // what the driver returns when Timeout passes
		}
		largest = max(largest, n)
		return nil
	}
	for attempt := 1; ; attempt++ {
		if _, err := e.f.Flush(context.Background()); err == nil {
			break
		} else if !errors.Is(err, context.DeadlineExceeded) || attempt > 5 {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
	}
	if largest != 2 || e.f.chunk.ops > 8 {
		t.Errorf("largest chunk written %d (want 2), chunk size now %d", largest, e.f.chunk.ops)
	}
	e.check(t)
}

func TestRunRetriesWhileDatabaseIsDown(t *testing.T) {
	e := newEnv(t, 4)
	fake := clock.NewFake(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	// Timeout must exceed what FerretDB takes for a chunk (about 60 ms per
	// daily update), or no attempt ever succeeds; while the proxy is down,
	// each attempt after the first waits this long for server selection.
	logs := &syncbuf.Buffer{}
	e.f = e.newFlusher(t, Config{
		MaxOps: 4, Interval: 10 * time.Second, MaxBackoff: time.Second,
		Timeout: 2 * time.Second, Clock: fake, Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	e.runReady(t, fake)
	e.srv.Stop()
	e.commit(t, small()...)
	fake.Advance(10 * time.Second)

	// Let it fail a few times; each failure is followed by a backoff wait.
	for e.f.Stats().Retries < 2 {
		blockUntil(t, fake)
		fake.Advance(time.Second)
	}
	// A first start while the database is down: the writer number cannot
	// be claimed, so nothing is sealed; the counts wait in the buffer.
	if b, err := e.sealed(); err != nil || b != nil || e.buf.Number() != 0 {
		t.Fatalf("sealed batch while down: %v, %v (writer %d)", b, err, e.buf.Number())
	}
	var hits uint64
	if err := e.buf.View(func(tx *buffer.ReadTx) error { _, hits = tx.Unacked(); return nil }); err != nil {
		t.Fatal(err)
	}
	if hits != 11 {
		t.Fatalf("%d hits in the buffer while down, want 11", hits)
	}
	if !strings.Contains(logs.String(), "writer number") {
		t.Errorf("the failed rounds do not say what failed:\n%s", logs.String())
	}
	if e.f.Stats().Batches != 0 {
		t.Fatal("a batch was acknowledged while the database was down")
	}
	for _, attempt := range []string{"attempt=1 ", "attempt=2 "} {
		if n := strings.Count(logs.String(), "component=flusher "+attempt); n != 1 {
			t.Errorf("%d log lines with %q, want 1:\n%s", n, attempt, logs.String())
		}
	}

	e.srv.Resume()
	deadline := time.Now().Add(30 * time.Second)
	for e.f.Stats().Batches == 0 {
		if time.Now().After(deadline) {
			t.Fatal("batch not written after resume")
		}
		blockUntil(t, fake)
		fake.Advance(time.Second)
	}
	e.check(t)
	if keys, _ := e.buf.Pending(); keys != 0 {
		t.Errorf("%d keys pending", keys)
	}
	if b, _ := e.sealed(); b != nil {
		t.Errorf("batch %s still sealed", b.ID)
	}
}

// blockUntil waits, with a generous deadline, until the component waits on
// the fake clock.
func blockUntil(t *testing.T, fake *clock.Fake) {
	t.Helper()
	ok := make(chan struct{})
	go func() { fake.BlockUntil(1); close(ok) }()
	select {
	case <-ok:
	case <-time.After(30 * time.Second):
		t.Fatal("flusher never waited on the clock")
	}
}

func TestDrainWritesEverything(t *testing.T) {
	e := newEnv(t, 8)
	e.commit(t, small()[:2]...)
	if _, err := e.buf.Seal(buffer.Seal{}); err != nil { // a batch in flight ...
		t.Fatal(err)
	}
	e.commit(t, small()[2:]...) // ... and more pending behind it
	if err := e.f.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := e.f.Stats(); st.Batches != 2 {
		t.Errorf("%d batches, want 2", st.Batches)
	}
	e.check(t)

	// With the database gone, Drain gives up when ctx ends and keeps the counts.
	e.srv.Stop()
	e.commit(t, hit{"a.example", "/late", "2024-01-31T05:17:03Z", 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := e.f.Drain(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Drain while down = %v, want deadline exceeded", err)
	}
	if b, _ := e.sealed(); b == nil || b.Hits != 1 {
		t.Errorf("sealed batch %+v, want the late hit kept", b)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New without buffer or database succeeded")
	}
}

// TestNewDefaults checks that zero fields get the Default constants. No
// server is needed: the client never connects.
func TestNewDefaults(t *testing.T) {
	buf := testenv.OpenBuffer(t, filepath.Join(t.TempDir(), "buffer.db"), buffer.Options{})
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://127.0.0.1:1").SetServerSelectionTimeout(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	f, err := New(Config{Buffer: buf, DB: client.Database("d")})
	if err != nil {
		t.Fatal(err)
	}
	if f.interval != DefaultInterval || f.chunk.max != DefaultMaxOps || f.chunk.ops != DefaultMaxOps ||
		f.maxBackoff != DefaultMaxBackoff || f.timeout != DefaultTimeout || f.clock != (clock.Real{}) {
		t.Errorf("defaults: interval %v, max ops %d, chunk %d, max backoff %v, timeout %v, clock %T",
			f.interval, f.chunk.max, f.chunk.ops, f.maxBackoff, f.timeout, f.clock)
	}
	names := []string{f.colls[0].Name(), f.colls[1].Name(), f.colls[2].Name()}
	if !slices.Equal(names, []string{bucket.DefaultMinuteCollection, bucket.DefaultDailyCollection, bucket.DefaultMonthlyCollection}) {
		t.Errorf("collections %q", names)
	}
	f, err = New(Config{Buffer: buf, DB: client.Database("d"), Collections: bucket.Collections{Daily: "days"}, MaxOps: 7})
	if err != nil {
		t.Fatal(err)
	}
	if n := f.colls[1].Name(); n != "days" || f.colls[0].Name() != bucket.DefaultMinuteCollection || f.chunk.max != 7 {
		t.Errorf("daily collection %q, minute %q, max ops %d", n, f.colls[0].Name(), f.chunk.max)
	}
}

// TestIgnoreDuplicateCodes checks ignoreDuplicates error by error: every
// duplicate-key code the driver knows (a sharded router's included) is
// ignored, and any other write error, alone or beside duplicates, is not.
func TestIgnoreDuplicateCodes(t *testing.T) {
	we := func(code int, msg string) mongo.BulkWriteError {
		return mongo.BulkWriteError{WriteError: mongo.WriteError{Code: code, Message: msg}}
	}
	dup := we(11000, "E11000 duplicate key error collection: logtally.minutes index: _id_")
	for _, tc := range []struct {
		name string
		err  error
		dups int // -1: the error is returned
	}{
		{"nil", nil, 0},
		{"one duplicate", mongo.BulkWriteException{WriteErrors: []mongo.BulkWriteError{dup}}, 1},
		{"wrapped", fmt.Errorf("insert: %w", mongo.BulkWriteException{WriteErrors: []mongo.BulkWriteError{dup, dup}}), 2},
		{"every duplicate code", mongo.BulkWriteException{WriteErrors: []mongo.BulkWriteError{
			dup, we(11001, "E11001 duplicate key on update"), we(12582, "duplicate key insert for unique index of capped collection"),
			we(16460, "error inserting 1 documents to shard ... :: caused by :: E11000 duplicate key error"),
		}}, 4},
		{"duplicate then validation", mongo.BulkWriteException{WriteErrors: []mongo.BulkWriteError{dup, we(121, "Document failed validation")}}, -1},
		{"validation then duplicate", mongo.BulkWriteException{WriteErrors: []mongo.BulkWriteError{we(121, "Document failed validation"), dup}}, -1},
		{"router error without E11000", mongo.BulkWriteException{WriteErrors: []mongo.BulkWriteError{we(16460, "shard unreachable")}}, -1},
		{"write concern error", mongo.BulkWriteException{WriteErrors: []mongo.BulkWriteError{dup}, WriteConcernError: &mongo.WriteConcernError{Code: 64}}, -1},
		{"no write errors", mongo.BulkWriteException{}, -1},
		{"not a write error", errors.New("network"), -1},
	} {
		dups, err := ignoreDuplicates(tc.err)
		switch {
		case tc.dups < 0 && (err == nil || err.Error() != tc.err.Error() || dups != 0):
			t.Errorf("%s: ignoreDuplicates = %d, %v; want 0 and the error", tc.name, dups, err)
		case tc.dups >= 0 && (err != nil || dups != tc.dups):
			t.Errorf("%s: ignoreDuplicates = %d, %v; want %d, nil", tc.name, dups, err, tc.dups)
		}
	}
}

func mustUnix(t *testing.T, s string) int64 {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at.Unix()
}

func toMap(d bson.D) map[string]any {
	m := make(map[string]any, len(d))
	for _, el := range d {
		m[el.Key] = el.Value
	}
	return m
}

// A bucket that another writer creates (and counts into) after this
// flusher's step 1 found it missing must still take this batch: the find
// asks which buckets carry the batch, not which exist.
func TestBucketCreatedAfterStep1StillCounts(t *testing.T) {
	e := newEnv(t, 8)
	ctx := context.Background()
	// The flusher thinks the buckets exist: the update goes first, and
	// the three-step path follows.
	testHooks(e.f).exists = func(pass, string) bool { return true }
	var raced string
	testHooks(e.f).afterUpdate = func(p pass, ids []string) {
		if p != minutePass || raced != "" {
			return
		}
		// Another host creates the minute bucket of /x and counts 4 hits.
		var other Chunker
		other.Reset(minutePass.level(), 8)
		other.Add(buffer.AppendKey(nil, []byte("a.example"), []byte("/x"), mustUnix(t, "2024-03-05T10:20:30Z")), new(measure.OfViews(4)))
		b := &other.Docs[0]
		if !slices.Contains(ids, b.ID) {
			t.Errorf("minute chunk %v lacks %s", ids, b.ID)
		}
		doc := b.Zero()
		doc[len(doc)-1].Value = bson.D{{Key: "otherhost", Value: "b0"}}
		if _, err := e.db.Collection("minutes").InsertOne(ctx, doc); err != nil {
			t.Errorf("racing insert: %v", err)
		}
		if _, err := e.db.Collection("minutes").UpdateOne(ctx, bson.D{{Key: "_id", Value: b.ID}},
			bson.D{{Key: "$inc", Value: bson.D{{Key: "seconds.30", Value: int64(4)}, {Key: "totalViews", Value: int64(4)}}}}); err != nil {
			t.Errorf("racing update: %v", err)
		}
		raced = b.ID
	}
	e.commit(t, hit{"a.example", "/x", "2024-03-05T10:20:31Z", 2})
	e.flush(t)
	if raced == "" {
		t.Fatal("the racing insert did not happen")
	}
	e.want["minutes"][raced]["seconds.30"] += 4
	e.want["minutes"][raced]["totalViews"] += 4
	e.check(t)
}

// Indexes that cannot be created (no createIndex privilege, a conflicting
// index) do not hold back the counts: they are retried beside the flushes.
func TestFailingIndexesDoNotHoldBackCounts(t *testing.T) {
	e := newEnv(t, 4)
	fake := clock.NewFake(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	logs := &syncbuf.Buffer{}
	e.f = e.newFlusher(t, Config{MaxOps: 4, Interval: 10 * time.Second, MaxBackoff: time.Second,
		Timeout: 2 * time.Second, Clock: fake, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	var refuse atomic.Bool
	refuse.Store(true)
	testHooks(e.f).index = func() error {
		if refuse.Load() {
			return errors.New("(Unauthorized) not authorized to execute createIndexes")
		}
		return nil
	}
	e.commit(t, small()...)
	e.run(t)
	deadline := time.Now().Add(30 * time.Second)
	for e.f.Stats().Batches == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no batch written while indexes fail:\n%s", logs)
		}
		blockUntil(t, fake)
		fake.Advance(time.Second)
	}
	e.check(t)
	if e.f.IndexesReady() {
		t.Fatal("IndexesReady while creating them fails")
	}
	if !strings.Contains(logs.String(), "ensure indexes (counts are written meanwhile) failed") {
		t.Errorf("the failing indexes are not logged:\n%s", logs)
	}
	refuse.Store(false)
	for !e.f.IndexesReady() {
		if time.Now().After(deadline) {
			t.Fatal("indexes not created once allowed")
		}
		blockUntil(t, fake)
		fake.Advance(time.Second)
	}
}

// Stats time the written batches and count the failed attempts.
func TestFlushTiming(t *testing.T) {
	e := newEnv(t, 8)
	fail := true
	testHooks(e.f).afterWhole = func(pass) error {
		if fail {
			return errors.New("reply lost")
		}
		return nil
	}
	e.commit(t, small()...)
	if _, err := e.f.Flush(context.Background()); err == nil {
		t.Fatal("Flush with the insert's reply lost succeeded")
	}
	fail = false
	e.flush(t)
	st := e.f.Stats()
	var inBuckets uint64
	for _, n := range st.FlushDurations {
		inBuckets += n
	}
	if st.FailedFlushes != 1 || st.FlushCount != 1 || inBuckets != 1 || st.LastAck.IsZero() || st.FlushSeconds <= 0 {
		t.Errorf("stats %+v: want 1 failed and 1 timed flush with a last ack time", st)
	}
}
