package bucketcheck

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/measure"
)

// TestReadTails writes, with package bucket's shapes, a hot page's
// buckets, a cold page's tail entries and a page with both (a bucket of
// an older host's batch and a tail entry in one minute), and a plan; Read
// folds the tails into their pages' ids and CompareAll finds them exact;
// then a hit too many in a tail, a measure wrong in a tail and a second
// wrong in a hot bucket are each reported.
func TestReadTails(t *testing.T) {
	db := mongotest.Start(t).Database(t)
	ctx := context.Background()
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	type hit struct {
		page, at string
		h        Hit
		tail     bool
	}
	hits := []hit{
		{"/h", "2026-03-05T10:20:05Z", Hit{Status: 200, Bytes: 10, RT: 1500}, false},
		{"/h", "2026-03-05T10:20:07Z", Hit{Status: 404, Bytes: 5, Bot: botclass.AI, RT: -1}, false},
		{"/c.html", "2026-03-05T10:20:05Z", Hit{Status: 200, Bytes: 7, RT: 900}, true},
		{"/c.html", "2026-03-05T10:20:59Z", Hit{Status: 301, Bytes: 0, RT: 2500}, true},
		{"/c.html", "2026-03-06T11:30:00Z", Hit{Status: 500, Bytes: 3, Bot: botclass.Search, RT: -1}, true},
		{"/m", "2026-03-05T10:20:10Z", Hit{Status: 200, Bytes: 1, RT: 100}, false},
		{"/m", "2026-03-05T10:20:40Z", Hit{Status: 200, Bytes: 2, RT: 7000}, true},
	}
	var want Counts
	docs := map[string]*bucket.Doc{}
	tails := map[string]*bucket.Tail{}
	for _, h := range hits {
		tm := at(h.at)
		want.AddHit(tm, "s.test", h.page, h.h)
		var v measure.Vector
		v.Add(&measure.Hit{Status: h.h.Status, Bytes: uint64(h.h.Bytes), Bot: h.h.Bot, RT: h.h.RT})
		for l := range bucket.Level(bucket.Levels) {
			start, _ := l.Bounds(tm.Unix())
			if h.tail {
				id := l.ID(start, "s.test", bucket.TailPage(0))
				if tails[id] == nil {
					tl := bucket.NewTail(l, "s.test", 0, tm.Unix())
					tails[id] = &tl
				}
				tails[id].Add(h.page, tm.Unix(), &v)
				continue
			}
			id := l.ID(start, "s.test", h.page)
			if docs[id] == nil {
				d := bucket.NewDoc(l, "s.test", h.page, tm.Unix())
				docs[id] = &d
			}
			docs[id].Add(tm.Unix(), &v)
		}
	}
	var names bucket.Collections
	g := bucket.NumberedGuard(1, 1)
	insert := func(l bucket.Level, doc any) {
		if _, err := db.Collection(names.Name(l)).InsertOne(ctx, doc); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range docs {
		w, err := d.Whole(g)
		if err != nil {
			t.Fatal(err)
		}
		insert(d.Level, w)
	}
	for _, tl := range tails {
		w, err := tl.Whole(g)
		if err != nil {
			t.Fatal(err)
		}
		insert(tl.Level, w)
	}
	for l := range bucket.Level(bucket.Levels) {
		p := bucket.NewPlan(l, "s.test", at("2026-03-05T10:20:05Z").Unix(), []string{"/h"}, 1)
		insert(l, p.Doc())
	}
	// The site totals, as the flusher writes them.
	var sites bucket.Sites
	for _, h := range hits {
		var v measure.Vector
		v.Add(&measure.Hit{Status: h.h.Status, Bytes: uint64(h.h.Bytes), Bot: h.h.Bot, RT: h.h.RT})
		sites.Add([]byte("s.test"), at(h.at).Unix(), &v)
	}
	for _, d := range sites.Docs() {
		w, err := d.Whole(g)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Collection(bucket.DefaultSiteCollection).InsertOne(ctx, w); err != nil {
			t.Fatal(err)
		}
	}

	got := Read(t, db)
	if r := CompareAll(t, want, got); !r.Exact() {
		t.Fatalf("tails folded into their pages: %v", r)
	}
	if got.MonthTotal != int64(len(hits)) {
		t.Errorf("month total %d, want %d", got.MonthTotal, len(hits))
	}
	for l, ids := range got.Tailed {
		var list []string
		for id := range ids {
			list = append(list, id)
		}
		if s := strings.Join(list, " "); len(ids) == 0 || strings.Contains(s, "/h") {
			t.Errorf("%s: tailed %v; want the ids of /c.html and /m only", bucket.Level(l), list)
		}
	}
	if !got.Tailed[bucket.Daily]["20260305/s.test/m"] || !got.Tailed[bucket.Minute]["202603051020/s.test/c.html"] {
		t.Errorf("tailed %v", got.Tailed)
	}

	// Each kind of difference is still seen.
	for _, c := range []struct {
		name string
		edit func(c *Counts)
		want string
	}{
		{"a hit too many in a tail", func(c *Counts) {
			c.Daily["20260306/s.test/c.html"]["hourly.11"]++
			c.Daily["20260306/s.test/c.html"]["daily"]++
		},
			"daily bucket 20260306/s.test/c.html: hourly.11 = 2, want 1"},
		{"a measure wrong in a tail", func(c *Counts) { c.Minute["202603051020/s.test/m"]["measures.rt_max_us"] = 100 },
			"minute bucket 202603051020/s.test/m: measures.rt_max_us = 100, want 7000"},
		{"a second wrong in a hot bucket", func(c *Counts) {
			c.Minute["202603051020/s.test/h"]["seconds.5"] = 0
			c.Minute["202603051020/s.test/h"]["seconds.6"] = 1
		},
			"minute bucket 202603051020/s.test/h: seconds.5 = 0, want 1"},
	} {
		bad := Read(t, db)
		c.edit(&bad)
		rec := &recorder{TB: t}
		CompareAll(rec, want, bad)
		if all := strings.Join(rec.errs, "\n"); !strings.Contains(all, c.want) {
			t.Errorf("%s: missing %q in:\n%s", c.name, c.want, all)
		}
	}
	// A tail's seconds are not compared: it keeps none.
	if got.Minute["202603051020/s.test/c.html"]["seconds.5"] != 0 {
		t.Errorf("a tail gave seconds: %v", got.Minute["202603051020/s.test/c.html"])
	}
}
