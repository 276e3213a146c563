// Package bucketcheck is a test helper: it counts the hits of combined-format
// log files per bucket, independently of logtally's parser, reads every
// counter of every bucket from MongoDB, and compares the two. The end-to-end
// tests (crash, nginx, pipeline) judge logtally with it: every counter of
// every minute, daily and monthly bucket must equal the files' count.
//
// Caveats: it understands only GET requests of combined (or common) lines
// with a path (no query string is kept), which is what the tests write; and
// it assumes the default collection names.
package bucketcheck

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/logtally/logtally/bucket"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Buckets maps a bucket id to its non-zero counters, by dotted path
// ("seconds.7", "hourly.13", "total").
type Buckets map[string]map[string]int64

// Counts are the buckets of the three levels.
type Counts struct {
	Minute, Daily, Monthly Buckets
	// Hits is the number of hits counted (CountFiles), MonthTotal the sum
	// of the monthly buckets' totals (Read).
	Hits, MonthTotal int64
	// Files is the number of files CountFiles read.
	Files int
}

func newCounts() Counts {
	return Counts{Minute: Buckets{}, Daily: Buckets{}, Monthly: Buckets{}}
}

var lineRe = regexp.MustCompile(`\[([^\]]+)\] "GET ([^ ?]+)`)

// CountFiles counts the hits of site in every file glob matches.
func CountFiles(t testing.TB, glob, site string) Counts {
	t.Helper()
	c := newCounts()
	files, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	c.Files = len(files)
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			m := lineRe.FindSubmatch(sc.Bytes())
			if m == nil {
				continue
			}
			ts, err := time.Parse("02/Jan/2006:15:04:05 -0700", string(m[1]))
			if err != nil {
				t.Fatal(err)
			}
			c.Add(ts, site, string(m[2]))
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return c
}

// Add counts one hit of site and page at ts. The ids and counter paths
// are the bucket package's (the shapes); the count is this package's.
func (c *Counts) Add(ts time.Time, site, page string) {
	sec := ts.Unix()
	for l, b := range [bucket.Levels]Buckets{c.Minute, c.Daily, c.Monthly} {
		level := bucket.Level(l)
		start, _ := level.Bounds(sec)
		add(b, level.ID(start, site, page), level.Paths(start, sec)...)
	}
	c.Hits++
}

func add(b Buckets, id string, paths ...string) {
	if b[id] == nil {
		b[id] = map[string]int64{}
	}
	for _, p := range paths {
		b[id][p]++
	}
}

// Read reads every non-zero counter of every bucket in db's bucket
// collections (default names).
func Read(t testing.TB, db *mongo.Database) Counts {
	t.Helper()
	c := newCounts()
	var names bucket.Collections
	for l, b := range [bucket.Levels]Buckets{c.Minute, c.Daily, c.Monthly} {
		name := names.Name(bucket.Level(l))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cur, err := db.Collection(name).Find(ctx, bson.D{})
		if err != nil {
			cancel()
			t.Fatalf("read %s: %v", name, err)
		}
		var docs []bson.M
		err = cur.All(ctx, &docs)
		cancel()
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		for _, d := range docs {
			id := d["_id"].(string)
			b[id] = map[string]int64{}
			flatten(b[id], "", d)
			if bucket.Level(l) == bucket.Monthly {
				c.MonthTotal += b[id][bucket.Monthly.TotalField()]
			}
		}
	}
	return c
}

func flatten(out map[string]int64, prefix string, m bson.M) {
	for k, v := range m {
		switch k {
		case bucket.FieldID, bucket.FieldApplied, bucket.FieldMetadata, bucket.FieldSite, bucket.FieldPage, bucket.FieldTimestamp:
			if prefix == "" {
				continue
			}
		}
		switch v := v.(type) {
		case bson.M:
			flatten(out, prefix+k+".", v)
		case bson.D:
			m := bson.M{}
			for _, e := range v {
				m[e.Key] = e.Value
			}
			flatten(out, prefix+k+".", m)
		case int64:
			if v != 0 {
				out[prefix+k] = v
			}
		case int32:
			if v != 0 {
				out[prefix+k] = int64(v)
			}
		}
	}
}

// Compare reports (t.Errorf) every counter of kind ("minute", "daily" or
// "monthly") that differs, and returns the hits lost and duplicated, judged
// by each bucket's total counter.
func Compare(t testing.TB, kind string, want, got Buckets) (lost, dup int64) {
	t.Helper()
	var total string
	for l := range bucket.Level(bucket.Levels) {
		if l.String() == kind {
			total = l.TotalField()
		}
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
		maps.Copy(paths, g)
		for _, p := range slices.Sorted(maps.Keys(paths)) {
			if w[p] != g[p] {
				t.Errorf("%s bucket %s: %s = %d, want %d", kind, id, p, g[p], w[p])
			}
		}
	}
	return lost, dup
}

// Result is the outcome of CompareAll, per level.
type Result struct {
	Lost, Dup [3]int64 // minute, daily, monthly
}

// Exact reports whether nothing was lost or duplicated at any level.
func (r Result) Exact() bool { return r.Lost == [3]int64{} && r.Dup == [3]int64{} }

// String formats the result for a test log.
func (r Result) String() string {
	return fmt.Sprintf("lost %d/%d/%d, duplicated %d/%d/%d (minute/daily/monthly)",
		r.Lost[0], r.Lost[1], r.Lost[2], r.Dup[0], r.Dup[1], r.Dup[2])
}

// CompareAll compares the three levels with Compare.
func CompareAll(t testing.TB, want, got Counts) Result {
	t.Helper()
	var r Result
	r.Lost[0], r.Dup[0] = Compare(t, "minute", want.Minute, got.Minute)
	r.Lost[1], r.Dup[1] = Compare(t, "daily", want.Daily, got.Daily)
	r.Lost[2], r.Dup[2] = Compare(t, "monthly", want.Monthly, got.Monthly)
	return r
}

// Merge adds o's counts to c.
func (c *Counts) Merge(o Counts) {
	for _, lv := range [][2]Buckets{{c.Minute, o.Minute}, {c.Daily, o.Daily}, {c.Monthly, o.Monthly}} {
		for id, ctrs := range lv[1] {
			if lv[0][id] == nil {
				lv[0][id] = map[string]int64{}
			}
			for p, n := range ctrs {
				lv[0][id][p] += n
			}
		}
	}
	c.Hits += o.Hits
	c.MonthTotal += o.MonthTotal
	c.Files += o.Files
}
