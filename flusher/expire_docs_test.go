package flusher

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/visitor"
)

// The site totals and the visitors documents expire with the retention of
// their level, by the buckets' expiry: the site days and the day-salted
// visitors documents (the site's and its pages') with daily_retention, the
// month-salted ones with monthly_retention, 0 keeping them. The documents
// are as every version wrote them (metadata.date; the visitors'
// metadata.period). On a server that refuses TTL indexes (the embedded
// one) the deleteMany rounds delete exactly the expired ones; on one that
// takes them (MONGODB_URI) the TTL indexes are checked: one per site
// totals, one partial per salt period, expireAfterSeconds the level's.
// Counts and registers of a period past its retention are not written
// back.
func TestSiteTotalsAndVisitorsExpire(t *testing.T) {
	for _, monthly := range []time.Duration{24 * time.Hour, 0} {
		t.Run("monthly="+monthly.String(), func(t *testing.T) {
			e := newEnv(t, 8)
			ctx := context.Background()
			// Written by a flusher without retention (or an older
			// version): site days from 02-29 to 03-05.
			e.commit(t, hit{"a.example", "/", "2024-02-29T23:59:59Z", 1}, hit{"a.example", "/", "2024-03-01T10:00:00Z", 2},
				hit{"a.example", "/b", "2024-03-02T23:00:00Z", 3}, hit{"a.example", "/", "2024-03-03T00:00:00Z", 4},
				hit{"a.example", "/", "2024-03-05T10:20:00Z", 5})
			e.flush(t)
			// Visitors documents of both salt periods, the site's and a
			// page's.
			vis := e.db.Collection(bucket.DefaultVisitorCollection)
			var docs []any
			for _, d := range []struct {
				p         visitor.Period
				day, page string
			}{
				{visitor.Day, "2024-03-01", ""}, {visitor.Day, "2024-03-02", ""}, {visitor.Day, "2024-03-02", "/b"},
				{visitor.Day, "2024-03-03", ""}, {visitor.Day, "2024-03-03", "/b"}, {visitor.Day, "2024-03-05", ""},
				{visitor.Month, "2024-01-01", ""}, {visitor.Month, "2024-02-01", ""}, {visitor.Month, "2024-02-01", "/b"},
				{visitor.Month, "2024-03-01", ""}, {visitor.Month, "2024-03-01", "/b"},
			} {
				// The lowest precision keeps the site's zero-filled
				// documents small for the test server.
				start := mustTime(t, d.day+"T00:00:00Z").Unix()
				docs = append(docs, bucket.VisitorZero(d.p, start, "a.example", d.page, visitor.MinPrecision))
			}
			if _, err := vis.InsertMany(ctx, docs); err != nil {
				t.Fatal(err)
			}

			// 2024-03-05T10:21:10: with 48 hours, the days before 03-03
			// have expired; with 24 hours, the months before March.
			fake := clock.NewFake(mustTime(t, "2024-03-05T10:21:10Z"))
			logs := &syncbuf.Buffer{}
			e.f = e.newFlusher(t, Config{MaxOps: 8, Clock: fake, ExpireEvery: 5 * time.Minute,
				Retention: bucket.Retention{Daily: 48 * time.Hour, Monthly: monthly},
				Logger:    slog.New(slog.NewTextHandler(logs, nil))})
			st := e.f.Stats().Expiry
			if len(st) != 6 {
				t.Fatalf("expiry stats: %+v, want the 3 levels, the site totals, the visitors of 2 periods", st)
			}
			wantMonthly := ExpiryPending
			if monthly == 0 {
				wantMonthly = ExpiryOff
			}
			for i, want := range []ExpiryStats{
				{Level: "daily", Collection: bucket.DefaultSiteCollection, Mode: ExpiryPending},
				{Level: "daily", Collection: bucket.DefaultVisitorCollection, Mode: ExpiryPending},
				{Level: "monthly", Collection: bucket.DefaultVisitorCollection, Mode: wantMonthly},
			} {
				if got := st[3+i]; got.Level != want.Level || got.Collection != want.Collection || got.Mode != want.Mode {
					t.Errorf("expiry %d: %+v, want %+v", 3+i, got, want)
				}
			}

			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- e.f.Run(runCtx) }()
			defer func() { cancel(); <-done }()
			deadline := time.Now().Add(30 * time.Second)
			for {
				st = e.f.Stats().Expiry
				ready := true
				for _, x := range st[3:] {
					ready = ready && x.Mode != ExpiryPending && (x.Mode != ExpiryDeleteMany || x.Runs > 0)
				}
				if ready {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("expiry never set up, or no deleteMany round: %+v\n%s", st, logs)
				}
				time.Sleep(time.Millisecond) // waits for the setup and the round, not for time to pass
			}

			if st[3].Mode == ExpiryTTL {
				checkTTLIndexes(t, e.db, monthly)
				return
			}
			for i, want := range []string{ExpiryDeleteMany, ExpiryDeleteMany, wantMonthly} {
				if want == ExpiryPending {
					want = ExpiryDeleteMany
				}
				if st[3+i].Mode != want || st[3+i].Failures != 0 {
					t.Errorf("expiry %d: %+v, want mode %s", 3+i, st[3+i], want)
				}
			}
			wantSites := []string{"20240303/a.example", "20240305/a.example"}
			wantVisitors := []string{"day:20240303/a.example", "day:20240303/a.example/b", "day:20240305/a.example",
				"month:202403/a.example", "month:202403/a.example/b"}
			if monthly == 0 {
				wantVisitors = append(wantVisitors, "month:202401/a.example", "month:202402/a.example", "month:202402/a.example/b")
			}
			if got := ids(t, e.db.Collection(bucket.DefaultSiteCollection)); !equalSets(got, wantSites) {
				t.Errorf("site totals kept: %v, want %v", got, wantSites)
			}
			if got := ids(t, vis); !equalSets(got, wantVisitors) {
				t.Errorf("visitors documents kept: %v, want %v", got, wantVisitors)
			}
			if st[3].Deleted != 3 || st[4].Deleted != 3 || monthly > 0 && st[5].Deleted != 3 {
				t.Errorf("deleted: %+v, want 3 site days, 3 day documents, 3 month documents", st[3:])
			}

			// Late counts and registers of an expired day are not written
			// back; the day kept takes its own.
			e.commit(t, hit{"a.example", "/", "2024-03-02T12:00:00Z", 7}, hit{"a.example", "/", "2024-03-05T10:21:00Z", 1})
			late := visitor.NewSketch(visitor.MinPrecision)
			late.Add(12345)
			kept := visitor.NewSketch(visitor.MinPrecision)
			kept.Add(67890)
			if err := e.buf.Commit(buffer.Commit{Visitors: map[string]*visitor.Sketch{
				buffer.VisitorKey(mustTime(t, "2024-03-02T00:00:00Z").Unix(), []byte("a.example"), nil): late,
				buffer.VisitorKey(mustTime(t, "2024-03-04T00:00:00Z").Unix(), []byte("a.example"), nil): kept,
			}}); err != nil {
				t.Fatal(err)
			}
			expiredBefore := e.f.Stats().ExpiredHits
			e.flush(t)
			if got := ids(t, e.db.Collection(bucket.DefaultSiteCollection)); !equalSets(got, wantSites) {
				t.Errorf("site totals after late counts: %v, want %v", got, wantSites)
			}
			if got, want := ids(t, vis), append(slices.Clone(wantVisitors), "day:20240304/a.example"); !equalSets(got, want) {
				t.Errorf("visitors documents after late registers: %v, want %v", got, want)
			}
			// 7 hits of 03-02 dropped from the daily buckets and from the
			// site totals.
			if got := e.f.Stats().ExpiredHits - expiredBefore; got != 14 {
				t.Errorf("ExpiredHits rose by %d, want 14", got)
			}
			var rises []buffer.VisitorRise
			err := e.buf.View(func(tx *buffer.ReadTx) (err error) { rises, err = tx.VisitorRises(); return err })
			if err != nil || len(rises) != 0 {
				t.Errorf("registers left to send: %v, %v", rises, err)
			}
		})
	}
}

// checkTTLIndexes checks the TTL indexes of the site totals and the
// visitors documents on a server that takes them.
func checkTTLIndexes(t *testing.T, db *mongo.Database, monthly time.Duration) {
	t.Helper()
	ret := bucket.Retention{Daily: 48 * time.Hour, Monthly: monthly}
	type spec struct {
		key     string
		secs    int64
		partial string
	}
	read := func(coll string) map[string]spec {
		specs, err := db.Collection(coll).Indexes().ListSpecifications(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]spec{}
		for _, s := range specs {
			if s.ExpireAfterSeconds == nil {
				continue
			}
			var key bson.D
			if err := bson.Unmarshal(s.KeysDocument, &key); err != nil || len(key) != 1 {
				t.Fatalf("%s: TTL index %s keys %v", coll, s.Name, s.KeysDocument)
			}
			var raw struct {
				Partial bson.Raw `bson:"partialFilterExpression"`
			}
			cur, err := db.Collection(coll).Indexes().List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for cur.Next(context.Background()) {
				if n, _ := cur.Current.Lookup("name").StringValueOK(); n == s.Name {
					if err := bson.Unmarshal(cur.Current, &raw); err != nil {
						t.Fatal(err)
					}
				}
			}
			cur.Close(context.Background())
			p, _ := raw.Partial.Lookup(bucket.FieldMetadata + "." + bucket.FieldPeriod).StringValueOK()
			out[s.Name] = spec{key[0].Key, int64(*s.ExpireAfterSeconds), p}
		}
		return out
	}
	date := bucket.FieldMetadata + "." + bucket.FieldDate
	if got, want := read(bucket.DefaultSiteCollection), map[string]spec{ExpiryIndexName: {date, int64(ret.TTLSeconds(bucket.Daily)), ""}}; !mapsEqual(got, want) {
		t.Errorf("site totals' TTL indexes: %+v, want %+v", got, want)
	}
	want := map[string]spec{VisitorExpiryIndexName(visitor.Day): {date, int64(ret.TTLSeconds(bucket.Daily)), "day"}}
	if monthly > 0 {
		want[VisitorExpiryIndexName(visitor.Month)] = spec{date, int64(ret.TTLSeconds(bucket.Monthly)), "month"}
	}
	if got := read(bucket.DefaultVisitorCollection); !mapsEqual(got, want) {
		t.Errorf("visitors' TTL indexes: %+v, want %+v", got, want)
	}
}

func mapsEqual[K, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// ids returns the _ids of coll's documents.
func ids(t *testing.T, coll *mongo.Collection) []string {
	t.Helper()
	cur, err := coll.Find(context.Background(), bson.D{}, options.Find().SetProjection(bson.D{{Key: bucket.FieldID, Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for cur.Next(context.Background()) {
		id, _ := cur.Current.Lookup(bucket.FieldID).StringValueOK()
		out = append(out, id)
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func equalSets(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
