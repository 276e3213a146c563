// Reading the buckets back from MongoDB.

package bucketcheck

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/measure"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Read reads every non-zero counter and measure of every bucket in db's
// bucket collections and of every document of its site collection
// (default names). A page's entries in its site's tails are added to its
// bucket's id, at the counters a tail holds (the total, the views at the
// level's measure grain: hourly.<h> in a daily bucket, daily.<d> in a
// monthly one, and the measures), and the id is put in Tailed; plans are
// skipped.
func Read(t testing.TB, db *mongo.Database) Counts {
	t.Helper()
	c := newCounts()
	var names bucket.Collections
	for l, b := range [bucket.Levels + 1]Buckets{c.Minute, c.Daily, c.Monthly, c.Sites} {
		name := bucket.DefaultSiteCollection
		if l < bucket.Levels {
			name = names.Name(bucket.Level(l))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cur, err := db.Collection(name).Find(ctx, bson.D{})
		if err != nil {
			cancel()
			t.Fatalf("read %s: %v", name, err)
		}
		var raws []bson.Raw
		err = cur.All(ctx, &raws)
		cancel()
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		for _, raw := range raws {
			if l < bucket.Levels {
				level := bucket.Level(l)
				page, _ := raw.LookupErr(strings.Split(level.PageField(), ".")...)
				if p, ok := page.StringValueOK(); ok && bucket.IsMarker(p) {
					if _, tail := bucket.TailShard(p); tail {
						readTail(t, level, raw, b, c.Tailed[l])
					}
					continue // a plan, or a tail read
				}
			}
			var d bson.M
			if err := bson.Unmarshal(raw, &d); err != nil {
				t.Fatalf("read %s: %v", name, err)
			}
			id := d["_id"].(string)
			if b[id] == nil {
				b[id] = map[string]int64{}
			}
			flatten(b[id], "", d)
		}
	}
	for _, ctrs := range c.Monthly {
		c.MonthTotal += ctrs[bucket.Monthly.TotalField()]
	}
	return c
}

// readTail adds every cell of the l tail doc to its page's bucket id in
// b, at the counters a tail holds (TailCounters), and puts the id in
// tailed.
func readTail(t testing.TB, l bucket.Level, doc bson.Raw, b Buckets, tailed map[string]bool) {
	t.Helper()
	start, err := l.Start(doc)
	if err != nil {
		t.Fatalf("a %s tail: %v", l, err)
	}
	siteVal, err := doc.LookupErr(strings.Split(l.SiteField(), ".")...)
	if err != nil {
		t.Fatalf("a %s tail: no site: %v", l, err)
	}
	site := siteVal.StringValue()
	err = l.DecodeTail(doc, func(cell *bucket.TailCell) {
		id := l.ID(start, site, cell.Page)
		tailed[id] = true
		ctrs := counters(b, id)
		for _, p := range l.Paths(start, cell.From) {
			if atTailGrain(l, p) {
				put(ctrs, p, int64(cell.V[measure.Views]))
			}
		}
		for m := measure.Views + 1; m < measure.N; m++ {
			put(ctrs, l.MeasurePath(m, start, cell.From), int64(cell.V[m]))
		}
	})
	if err != nil {
		t.Fatalf("a %s tail of %s: %v", l, site, err)
	}
}

// atTailGrain reports whether the counter at path p of an l bucket is
// one a tail's entry holds too: the total, the measures, and the views
// of the family at the level's measure grain (not seconds.<s> or
// minute.<h>.<m>, which only a page's own bucket holds).
func atTailGrain(l bucket.Level, p string) bool {
	if p == l.TotalField() || isMeasure(p) {
		return true
	}
	field, _, _ := strings.Cut(p, ".")
	f := l.Family(field)
	return f != nil && f.Slots == l.MeasureSlots()
}

func flatten(out map[string]int64, prefix string, m bson.M) {
	for k, v := range m {
		switch k {
		case bucket.FieldID, bucket.FieldApplied, bucket.FieldMetadata, bucket.FieldSite, bucket.FieldPage, bucket.FieldTimestamp,
			bucket.FieldSources, bucket.FieldSize: // a site day's counts by dimension and their bound: not counters of the files' counts
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
			put(out, prefix+k, v)
		case int32:
			put(out, prefix+k, int64(v))
		}
	}
}

// Total returns the views of level l in db (default collection names):
// the total counters of its page buckets and the views of every entry in
// its tails; plans are skipped. It reads that one collection.
func Total(t testing.TB, db *mongo.Database, l bucket.Level) int64 {
	t.Helper()
	var names bucket.Collections
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cur, err := db.Collection(names.Name(l)).Find(ctx, bson.D{})
	if err != nil {
		t.Fatalf("read %s: %v", names.Name(l), err)
	}
	var raws []bson.Raw
	if err := cur.All(ctx, &raws); err != nil {
		t.Fatalf("read %s: %v", names.Name(l), err)
	}
	var n int64
	for _, raw := range raws {
		v, err := l.Views(raw)
		if err != nil {
			t.Fatalf("read %s: %v", names.Name(l), err)
		}
		n += v
	}
	return n
}
