package verify

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/query"
)

// compare compares the window's sums (window: by site, page and second)
// with MongoDB, site by site, each level's buckets and then the site days.
func (v *verifier) compare(ctx context.Context, j *judge, sites []string, bySite map[string][]*pageSums, dimsBySite map[string]map[int64]*siteDims) error {
	for _, site := range sites {
		for l := range bucket.Level(bucket.Levels) {
			if err := v.compareLevel(ctx, j, l, site, bySite[site]); err != nil {
				return err
			}
		}
		if err := v.compareSites(ctx, j, site, bySite[site], dimsBySite[site]); err != nil {
			return err
		}
	}
	return nil
}

// compareLevel compares site's l buckets of the judge's window: the
// files' (grouped from the pages' sums as the flusher groups a batch's)
// with those MongoDB holds. The files' buckets and their counters are
// made on up to Options.Jobs goroutines, each over a share of the pages;
// they are judged in order on this one.
func (v *verifier) compareLevel(ctx context.Context, j *judge, l bucket.Level, site string, pages []*pageSums) error {
	shares := make([]*levelShare, max(min(v.opts.Jobs, len(pages)), 1))
	var wg sync.WaitGroup
	for i := range shares {
		sh := &levelShare{byID: map[string]int{}}
		shares[i] = sh
		part := pages[i*len(pages)/len(shares) : (i+1)*len(pages)/len(shares)]
		wg.Go(func() { sh.make(l, part) })
	}
	wg.Wait()
	find := func(id string) (*levelShare, int) {
		for _, sh := range shares {
			if i, ok := sh.byID[id]; ok {
				return sh, i
			}
		}
		return nil, -1
	}
	from, _ := l.Bounds(j.w.from)
	_, to := l.Bounds(j.w.to - 1)
	// The tails first (tails.go): a page's bucket is judged with its
	// entries in them.
	ts, err := v.readTails(ctx, j, l, site, from, to)
	if err != nil {
		return err
	}
	files := func(id string) []counter {
		if sh, i := find(id); sh != nil {
			sh.docs[i].seen = true
			return sh.docs[i].counters
		}
		return nil
	}
	err = v.each(ctx, v.opts.Collections.Name(l), l.BucketRange(site, unix(from), unix(to)), l.Start, func(id string, start int64, got []counter, _ bson.Raw) error {
		_, end := l.Bounds(start)
		want := files(id)
		p := ts.parts[id]
		if p != nil {
			p.seen = true
			got = p.merge(got)
		}
		want, got = v.finer(j, l, ts, p, start, end, want, got)
		v.judge(j, Kind(l), id, start, end, want, got, p != nil)
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range ts.rest() { // pages with tail entries and no bucket
		p := ts.parts[id]
		want, got := v.finer(j, l, ts, p, p.start, p.end, files(id), p.merge(nil))
		v.judge(j, Kind(l), id, p.start, p.end, want, got, true)
	}
	for _, sh := range shares {
		for _, d := range sh.docs {
			if !d.seen { // not in MongoDB
				v.judge(j, Kind(l), d.id, d.start, d.end, d.counters, nil, false)
			}
		}
	}
	return nil
}

// levelShare is the files' buckets of one level made from a share of a
// site's pages: each one's id, period and counters.
type levelShare struct {
	docs []fileDoc
	byID map[string]int // index in docs
}

type fileDoc struct {
	id         string
	start, end int64
	counters   []counter
	seen       bool // in MongoDB
}

// make groups pages' sums into l's buckets (bucket.Grouper) and keeps
// their counters (docCounters).
func (sh *levelShare) make(l bucket.Level, pages []*pageSums) {
	var g bucket.Grouper
	g.Reset(l, math.MaxInt)
	for _, ps := range pages {
		for i := range ps.sums {
			g.Add(ps.site, ps.page, ps.sums[i].sec, &ps.sums[i].v)
		}
	}
	sh.docs = make([]fileDoc, len(g.Docs))
	for i := range g.Docs {
		d := &g.Docs[i]
		sh.docs[i] = fileDoc{id: d.ID, start: d.Start, end: d.End, counters: docCounters(d)}
		sh.byID[d.ID] = i
	}
}

// compareSites compares site's days of the judge's window: their
// counters, and with [dimensions] on their counts by dimension (dimsOf:
// the files', by day start; see judge.dims).
func (v *verifier) compareSites(ctx context.Context, j *judge, site string, pages []*pageSums, dimsOf map[int64]*siteDims) error {
	var s bucket.Sites
	for _, ps := range pages {
		for i := range ps.sums {
			s.Add(ps.site, ps.sums[i].sec, &ps.sums[i].v)
		}
	}
	docs := s.Docs()
	files := make(map[string]*bucket.SiteDoc, len(docs))
	for i := range docs {
		files[docs[i].ID] = &docs[i]
	}
	from, _ := bucket.Daily.Bounds(j.w.from)
	_, to := bucket.Daily.Bounds(j.w.to - 1)
	err := v.each(ctx, v.opts.Collections.SiteName(), bucket.SiteRange(site, unix(from), unix(to)), bucket.SiteStart, func(id string, start int64, got []counter, raw bson.Raw) error {
		var want []counter
		if d := files[id]; d != nil {
			want = siteCounters(d)
			delete(files, id)
		}
		// The counts by dimension are judged apart (judge.dims).
		got = slices.DeleteFunc(got, func(c counter) bool { return strings.HasPrefix(c.path, bucket.FieldSources+".") })
		_, end := bucket.Daily.Bounds(start)
		if !v.judge(j, Sites, id, start, end, want, got, false) {
			return nil
		}
		return v.judgeDims(j, site, id, start, raw, dimsOf[start])
	})
	if err != nil {
		return err
	}
	for i := range docs {
		if d := &docs[i]; files[d.ID] != nil {
			v.judge(j, Sites, d.ID, d.Start, d.PeriodEnd(), siteCounters(d), nil, false)
		}
	}
	return nil
}

// judge judges a document unless it is past its level's retention (a
// site day the daily one): then it is counted as such (once, in the pass
// holding its end), and judge returns false. tail says got holds tail
// entries (Diff.Tail).
func (v *verifier) judge(j *judge, k Kind, id string, start, end int64, want, got []counter, tail bool) bool {
	if v.opts.Retention.Expired(k.level(), start, v.now) {
		if j.w.has(min(end, j.r.to) - 1) {
			v.rep.Expired[k]++
		}
		return false
	}
	j.bucket(k, id, start, end, want, got, tail)
	return true
}

// judgeDims judges the counts by dimension of site's day starting at
// start, raw its document in MongoDB and files the files' counts (nil:
// none): not with [dimensions] off, nor for a day the range cuts while
// the files hold hits of it outside it, nor for a day MongoDB holds
// without counts by dimension while the files have some (each counted).
func (v *verifier) judgeDims(j *judge, site, id string, start int64, raw bson.Raw, files *siteDims) error {
	mongo, err := bucket.SiteSources(raw)
	if err != nil {
		return fmt.Errorf("read %s: %s: %w", v.opts.Collections.SiteName(), query.Shown(id), err)
	}
	r := &v.rep.Dims
	switch _, cut := v.cut[siteDay{site, start}]; {
	case !r.On:
		if hasDims(&mongo) {
			r.Off++
		}
	case cut:
		r.Cut++
	case !hasDims(&mongo):
		if files != nil && hasDims(files) {
			r.NotCounted++
		}
	default:
		j.dims(id, start, files, &mongo)
	}
	return nil
}

// each finds the documents of coll matching filter (without their
// applied field) and hands each one's _id, period start (read by start)
// and non-zero counters (bucket.Counters, sorted by path) to f.
func (v *verifier) each(ctx context.Context, coll string, filter bson.D, start func(bson.Raw) (int64, error), f func(id string, start int64, got []counter, raw bson.Raw) error) error {
	c := v.opts.DB.Collection(coll)
	cur, err := c.Find(ctx, filter, options.Find().SetProjection(bson.D{{Key: bucket.FieldApplied, Value: 0}}))
	if err != nil {
		return fmt.Errorf("read %s: %w", coll, err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		raw := cur.Current
		id, ok := raw.Lookup(bucket.FieldID).StringValueOK()
		if !ok {
			return fmt.Errorf("read %s: a document whose _id is not a string", coll)
		}
		st, err := start(raw)
		if err != nil {
			return fmt.Errorf("read %s: %w", coll, err)
		}
		var got []counter
		if err := bucket.Counters(raw, func(path string, n int64) { got = append(got, counter{path, n}) }); err != nil {
			return fmt.Errorf("read %s: %w", coll, err)
		}
		if err := f(id, st, sortCounters(got), raw); err != nil {
			return err
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("read %s: %w", coll, err)
	}
	return nil
}

// docCounters returns the non-zero counters a bucket's document in the
// files adds (its $inc and $max, the flusher's own: bucket.Doc), sorted
// by path.
func docCounters(d *bucket.Doc) []counter {
	inc, mx := d.Inc(), d.Max()
	out := make([]counter, 0, len(inc)+len(mx))
	for _, terms := range []bson.D{inc, mx} {
		for _, e := range terms {
			var n int64
			switch x := e.Value.(type) {
			case int32:
				n = int64(x)
			case int64:
				n = x
			}
			if n != 0 {
				out = append(out, counter{e.Key, n})
			}
		}
	}
	return sortCounters(out)
}

// siteCounters returns a site day's non-zero counters in the files,
// sorted by path.
func siteCounters(d *bucket.SiteDoc) []counter {
	var out []counter
	for m := range measure.N {
		if n := d.V[m]; n != 0 {
			out = append(out, counter{bucket.SiteMeasurePath(m), int64(n)})
		}
	}
	return sortCounters(out)
}

func unix(sec int64) time.Time { return time.Unix(sec, 0).UTC() }
