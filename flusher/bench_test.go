package flusher

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// benchKeys returns sorted batch keys for pages pages of one site, each
// hit in secs consecutive seconds (spanning a minute boundary), as the
// buffer would hold them.
func benchKeys(pages, secs int) [][]byte {
	var keys [][]byte
	base := int64(1_717_245_570) // 2024-06-01T12:39:30Z
	for p := range pages {
		page := fmt.Appendf(nil, "/articles/%d", p)
		for s := range secs {
			keys = append(keys, buffer.AppendKey(nil, []byte("www.example.com"), page, base+int64(s)))
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	return keys
}

// buildAll groups keys into chunks of maxOps buckets for each pass and
// builds their update models, as writeBatch does minus bbolt and the
// network; encode also marshals each update as the driver would.
func buildAll(b *testing.B, c *Chunker, keys [][]byte, encode bool) {
	three := measure.OfViews(3)
	for p := minutePass; p <= monthlyPass; p++ {
		for i := 0; i < len(keys); {
			c.Reset(p.level(), 1000)
			for i < len(keys) && c.Add(keys[i], &three) {
				i++
			}
			docs := make([]guarded, len(c.Docs))
			for i := range c.Docs {
				docs[i] = &c.Docs[i]
			}
			models := updates(docs, bucket.NumberedGuard(17, 4031))
			if !encode {
				continue
			}
			for _, m := range models {
				u := m.(*mongo.UpdateOneModel)
				if _, err := bson.Marshal(u.Filter); err != nil {
					b.Fatal(err)
				}
				if _, err := bson.Marshal(u.Update); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkBuildUpdates measures the flusher's own CPU for a batch of
// 10,000 keys (3 hits each): 200 pages x 50 seconds, so 400 minute, 200
// daily and 200 monthly buckets. Reported per 1,000 hits.
func BenchmarkBuildUpdates(b *testing.B) {
	for _, encode := range []bool{false, true} {
		name := "models"
		if encode {
			name = "models+bson"
		}
		b.Run(name, func(b *testing.B) {
			keys := benchKeys(200, 50)
			hits := float64(3 * len(keys))
			var c Chunker
			b.ReportAllocs()
			for b.Loop() {
				buildAll(b, &c, keys, encode)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(hits/1000), "ns/1000hits")
		})
	}
}

// BenchmarkZeroDocs measures building and encoding the zero-filled
// documents of new buckets, the cost of a batch after an outage.
func BenchmarkZeroDocs(b *testing.B) {
	one := measure.OfViews(1)
	var c Chunker
	keys := benchKeys(1, 1)
	for p := minutePass; p <= monthlyPass; p++ {
		b.Run(p.String(), func(b *testing.B) {
			c.Reset(p.level(), 1)
			c.Add(keys[0], &one)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bson.Marshal(c.Docs[0].Zero()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// opsRun is what a traffic cost the database.
type opsRun struct{ hits, ops, trips, writes, planOps, dupOps uint64 }

// writeMode is how writeTraffic writes: before, every page to its own
// bucket and every bucket to the guarded update first, as logtally did
// before new buckets were inserted whole (the three-step path for each
// new one); pages, every page to its own bucket, new ones inserted whole
// (logtally before tails); tails, each period's plan deciding (cold
// pages to their site's tails), the plans' finds and inserts counted.
type writeMode string

const (
	modeBefore writeMode = "before"
	modePages  writeMode = "pages"
	modeTails  writeMode = "tails"
)

// writeTraffic commits each of batches to a fresh buffer and writes it
// with the real flusher into a fresh database on srv, starting a new
// flusher (a restart: its known set and plan cache empty) every
// restartEvery batches (0: never), in mode.
func writeTraffic(b *testing.B, srv *mongotest.Server, batches []map[string]measure.Vector, restartEvery int, mode writeMode) opsRun {
	buf := testenv.OpenBuffer(b, filepath.Join(b.TempDir(), "buffer.db"), buffer.Options{})
	db := srv.Database(b)
	start := func() *Flusher {
		f, err := New(Config{Buffer: buf, DB: db, MaxOps: 16, Timeout: 5 * time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		if mode == modeBefore {
			testHooks(f).exists = func(pass, string) bool { return true }
		}
		if mode != modeTails {
			testHooks(f).layout = func(buffer.Layout) buffer.Layout { return buffer.LayoutPages }
		}
		return f
	}
	var r opsRun
	add := func(st Stats) {
		r.hits += st.Hits
		r.ops += st.Updates + st.Inserts + st.InsertDups + st.Finds + st.PlanFinds + st.PlanInserts
		r.trips += st.BulkWrites + st.InsertCalls + st.Finds + st.PlanFinds + st.PlanInsertCalls
		r.planOps += st.PlanFinds + st.PlanInserts
		r.dupOps += st.InsertDups
		r.writes += st.BucketWrites
	}
	f := start()
	for i, counts := range batches {
		if restartEvery > 0 && i > 0 && i%restartEvery == 0 {
			add(f.Stats())
			f = start()
		}
		if err := buf.Commit(buffer.Commit{Counts: buffer.CountsOf(counts)}); err != nil {
			b.Fatal(err)
		}
		if sent, err := f.Flush(context.Background()); err != nil || !sent {
			b.Fatalf("batch %d: Flush = %v, %v", i, sent, err)
		}
	}
	add(f.Stats())
	return r
}

// longTailBatches is the first lines lines of the real Apache log
// (testdata/apache_combined_real.log: a real site, most pages hit once in
// their minute), in batches of per lines.
func longTailBatches(b *testing.B, lines, per int) []map[string]measure.Vector {
	data, err := os.ReadFile("../testdata/apache_combined_real.log")
	if err != nil {
		b.Fatal(err)
	}
	p, err := parser.New(parser.Config{Format: "combined", Site: "semicomplete.com"})
	if err != nil {
		b.Fatal(err)
	}
	var batches []map[string]measure.Vector
	for i, line := range bytes.SplitN(data, []byte("\n"), lines+1)[:lines] {
		if i%per == 0 {
			batches = append(batches, map[string]measure.Vector{})
		}
		var h parser.Hit
		if p.Parse(line, &h) != parser.OK {
			continue
		}
		k := string(buffer.AppendKey(nil, h.Site, h.Page, h.Time))
		v := batches[len(batches)-1][k]
		v.Add(&measure.Hit{Status: h.Status, Bot: h.Bot, Bytes: h.Bytes, RT: h.RT})
		batches[len(batches)-1][k] = v
	}
	return batches
}

// crashBatches is the crash test's page mix: 3 pages, a hit every 100 ms
// of log time for 150 s across a day and a month boundary, in batches of
// 10 s (a flush interval).
func crashBatches() []map[string]measure.Vector {
	pages := []string{"/", "/blog/", "/about/"}
	base := time.Date(2026, 1, 31, 23, 58, 30, 0, time.UTC).Unix()
	var batches []map[string]measure.Vector
	for i := range 1500 {
		if i%100 == 0 {
			batches = append(batches, map[string]measure.Vector{})
		}
		k := string(buffer.AppendKey(nil, []byte("crash.test"), []byte(pages[i*7%len(pages)]), base+int64(i/10)))
		v := batches[len(batches)-1][k]
		v.Add(&measure.Hit{Status: 200 + i%4*100, Bytes: uint64(100 + i), RT: int64(i)})
		batches[len(batches)-1][k] = v
	}
	return batches
}

// BenchmarkOpsPerBucket writes two traffics through the real flusher
// into the embedded server, in each writeMode (before: every bucket to
// the guarded update first, the three-step path for new ones; pages: new
// buckets inserted whole, every page its own; tails: each period's plan
// deciding, cold pages to tails, the plans' finds and inserts counted as
// operations), in the same run, and reports per mode the operations per
// document written (target: at most 1.2; tails no more than pages), the
// documents, operations and round trips per 1,000 hits, and the
// operations over those of one upsert per hit (2 per hit: a daily and a
// monthly, logtally replay's baseline), and, per mode, the operations
// per page bucket: over the documents the pages mode writes for the same
// batches (each page's minute, daily and monthly bucket and the site
// days; a cold page's bucket is an entry of a tail in the tails mode, and
// what a reader reads as that page's bucket):
//   - longtail: the first 300 lines of the real Apache log in batches of
//     100 (the embedded server scans a collection per update: the
//     before mode's cost grows fast with more);
//   - crash: the crash test's page mix, 15 batches of 100 hits, with a
//     restart every 5 batches (the known set is lost: buckets written
//     before it meet a duplicate once).
//
// Run it once: go test -run '^$' -bench OpsPerBucket -benchtime 1x ./flusher
func BenchmarkOpsPerBucket(b *testing.B) {
	srv := mongotest.Start(b)
	pageBuckets := map[string]uint64{} // by traffic: the pages mode's documents
	for _, tr := range []struct {
		name    string
		batches func() []map[string]measure.Vector
		restart int
	}{
		{"longtail", func() []map[string]measure.Vector { return longTailBatches(b, 300, 100) }, 0},
		{"crash", crashBatches, 5},
	} {
		for _, mode := range []writeMode{modeBefore, modePages, modeTails} {
			name := tr.name + "/" + string(mode)
			b.Run(name, func(b *testing.B) {
				var r opsRun
				for b.Loop() {
					r = writeTraffic(b, srv, tr.batches(), tr.restart, mode)
				}
				perBucket := float64(r.ops) / float64(r.writes)
				b.ReportMetric(perBucket, "ops/bucket")
				if mode == modePages {
					pageBuckets[tr.name] = r.writes
				}
				if n := pageBuckets[tr.name]; n > 0 {
					b.ReportMetric(float64(r.ops)/float64(n), "ops/pagebucket")
				}
				b.ReportMetric(1000*float64(r.writes)/float64(r.hits), "docs/1000hits")
				b.ReportMetric(1000*float64(r.ops)/float64(r.hits), "ops/1000hits")
				b.ReportMetric(1000*float64(r.trips)/float64(r.hits), "roundtrips/1000hits")
				b.ReportMetric(float64(r.ops)/float64(2*r.hits), "x-upsert-per-hit")
				b.Logf("%s: %d hits, %d documents written, %d operations (%.2f per document; %d of them plans' finds and inserts, %d inserts meeting a duplicate), %d round trips; one upsert per hit: %d operations",
					name, r.hits, r.writes, r.ops, perBucket, r.planOps, r.dupOps, r.trips, 2*r.hits)
			})
		}
	}
}
