package fill

import (
	"context"
	"maps"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/measure"
)

// Layout says where Docs puts each hit's counts.
type Layout struct {
	// Tail returns the tail shard that hit i (h) of level l counts in, or
	// -1 for its page's own bucket. Nil: every hit in its page's bucket.
	Tail func(l bucket.Level, i int, h Hit) int
	// Hot and Shards are the plans' hot pages and tail shards: a plan is
	// written for every level and plan period holding a hit.
	Hot    []string
	Shards int
}

// Docs writes hits of site to db as one batch leaves them in an empty
// database, built here rather than by the flusher: each level's page
// buckets (bucket.Doc.Whole) and tails (bucket.Tail.Whole) as Layout
// says, the plans (bucket.Plan.Doc) and the site days (bucket.Sites).
// Tests give the same hits to two databases, one as page buckets alone
// and one split between buckets and tails, and compare what the readers
// answer.
func Docs(t testing.TB, db *mongo.Database, site string, hits []Hit, lay Layout) {
	t.Helper()
	order := make([]int, len(hits))
	for i := range order {
		order[i] = i
	}
	// Documents take their hits in time order.
	slices.SortStableFunc(order, func(a, b int) int { return hits[a].At.Compare(hits[b].At) })
	g := bucket.NumberedGuard(1, 1)
	colls := bucket.Collections{}
	ctx := context.Background()
	insert := func(coll string, docs []any) {
		t.Helper()
		for len(docs) > 0 { // small inserts: the test server hangs on big bulk writes
			n := min(len(docs), 20)
			if _, err := db.Collection(coll).InsertMany(ctx, docs[:n]); err != nil {
				t.Fatalf("insert into %s: %v", coll, err)
			}
			docs = docs[n:]
		}
	}
	for l := range bucket.Level(bucket.Levels) {
		pages := map[string]*bucket.Doc{}
		tails := map[string]*bucket.Tail{}
		plans := map[int64]bool{}
		var ids []string
		for _, i := range order {
			h := hits[i]
			sec := h.At.Unix()
			var v measure.Vector
			v.Add(&h.F)
			planStart, _ := l.PlanUnit().Bounds(sec)
			plans[planStart] = true
			shard := -1
			if lay.Tail != nil {
				shard = lay.Tail(l, i, h)
			}
			if shard < 0 {
				start, _ := l.Bounds(sec)
				id := l.ID(start, site, h.Page)
				d := pages[id]
				if d == nil {
					nd := bucket.NewDoc(l, site, h.Page, sec)
					d = &nd
					pages[id] = d
					ids = append(ids, id)
				}
				d.Add(sec, &v)
				continue
			}
			start, _ := l.Bounds(sec)
			id := l.ID(start, site, bucket.TailPage(shard))
			tl := tails[id]
			if tl == nil {
				nt := bucket.NewTail(l, site, shard, sec)
				tl = &nt
				tails[id] = tl
				ids = append(ids, id)
			}
			tl.Add(h.Page, sec, &v)
		}
		var docs []any
		for _, id := range ids {
			var raw bson.Raw
			var err error
			if d := pages[id]; d != nil {
				raw, err = d.Whole(g)
			} else {
				raw, err = tails[id].Whole(g)
			}
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, raw)
		}
		for _, start := range slices.Sorted(maps.Keys(plans)) {
			p := bucket.NewPlan(l, site, start, lay.Hot, max(lay.Shards, 1))
			docs = append(docs, p.Doc())
		}
		insert(colls.Name(l), docs)
	}
	var s bucket.Sites
	for _, i := range order {
		var v measure.Vector
		v.Add(&hits[i].F)
		s.Add([]byte(site), hits[i].At.Unix(), &v)
	}
	var docs []any
	for _, d := range s.Docs() {
		raw, err := d.Whole(g)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, raw)
	}
	insert(colls.SiteName(), docs)
}
