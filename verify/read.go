package verify

import (
	"context"
	"fmt"
	"math"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/measure"
)

// compare compares the window's sums (sorted by key) with MongoDB, site by
// site, each level's buckets and then the site days.
func (v *verifier) compare(ctx context.Context, j *judge, sites []string, sums []sum) error {
	bySite := map[string][]sum{}
	for i := 0; i < len(sums); {
		site, _, _, err := buffer.DecodeKey(sums[i].key)
		if err != nil {
			return err
		}
		k := i + 1
		for k < len(sums) && hasSite(sums[k].key, site) {
			k++
		}
		bySite[string(site)] = sums[i:k:k]
		i = k
	}
	for _, site := range sites {
		for l := range bucket.Level(bucket.Levels) {
			if err := v.compareLevel(ctx, j, l, site, bySite[site]); err != nil {
				return err
			}
		}
		if err := v.compareSites(ctx, j, site, bySite[site]); err != nil {
			return err
		}
	}
	return nil
}

// hasSite reports whether key's site is site.
func hasSite(key, site []byte) bool {
	s, _, _, err := buffer.DecodeKey(key)
	return err == nil && string(s) == string(site)
}

// compareLevel compares site's l buckets of the judge's window: the
// files' (grouped from sums as the flusher groups a batch) with those
// MongoDB holds.
func (v *verifier) compareLevel(ctx context.Context, j *judge, l bucket.Level, site string, sums []sum) error {
	var g bucket.Grouper
	g.Reset(l, math.MaxInt)
	for _, s := range sums {
		st, page, sec, err := buffer.DecodeKey(s.key)
		if err != nil {
			return err
		}
		g.Add(st, page, sec, s.v)
	}
	files := map[string]*bucket.Doc{}
	for i := range g.Docs {
		files[g.Docs[i].ID] = &g.Docs[i]
	}
	from, _ := l.Bounds(j.w.from)
	_, to := l.Bounds(j.w.to - 1)
	err := v.each(ctx, v.opts.Collections.Name(l), l.Range(site, "", unix(from), unix(to)), l.Start, func(id string, start int64, got map[string]int64) {
		_, end := l.Bounds(start)
		var want map[string]int64
		if d := files[id]; d != nil {
			want = docCounters(d)
			delete(files, id)
		}
		v.judge(j, Kind(l), id, start, end, want, got)
	})
	if err != nil {
		return err
	}
	for _, d := range g.Docs {
		if files[d.ID] != nil { // not in MongoDB
			v.judge(j, Kind(l), d.ID, d.Start, d.End, docCounters(&d), nil)
		}
	}
	return nil
}

// compareSites compares site's days of the judge's window.
func (v *verifier) compareSites(ctx context.Context, j *judge, site string, sums []sum) error {
	var s bucket.Sites
	for _, x := range sums {
		st, _, sec, err := buffer.DecodeKey(x.key)
		if err != nil {
			return err
		}
		s.Add(st, sec, x.v)
	}
	files := map[string]*bucket.SiteDoc{}
	docs := s.Docs()
	for i := range docs {
		files[docs[i].ID] = &docs[i]
	}
	from, _ := bucket.Daily.Bounds(j.w.from)
	_, to := bucket.Daily.Bounds(j.w.to - 1)
	err := v.each(ctx, v.opts.Collections.SiteName(), bucket.SiteRange(site, unix(from), unix(to)), bucket.SiteStart, func(id string, start int64, got map[string]int64) {
		var want map[string]int64
		if d := files[id]; d != nil {
			want = siteCounters(d)
			delete(files, id)
		}
		v.judge(j, Sites, id, start, start+86400, want, got)
	})
	if err != nil {
		return err
	}
	for _, d := range docs {
		if files[d.ID] != nil {
			v.judge(j, Sites, d.ID, d.Start, d.Start+86400, siteCounters(&d), nil)
		}
	}
	return nil
}

// judge judges a document unless it is past its level's retention: then
// it is counted as such (once, in the pass holding its end).
func (v *verifier) judge(j *judge, k Kind, id string, start, end int64, want, got map[string]int64) {
	if k != Sites && v.opts.Retention.Expired(bucket.Level(k), v.now, end) {
		if j.w.has(min(end, j.r.to) - 1) {
			v.rep.Expired[k]++
		}
		return
	}
	j.bucket(k, id, start, end, want, got)
}

// each finds the documents of coll matching filter (without their
// applied field) and hands each one's _id, period start (read by start)
// and counters (bucket.Counters, the non-zero ones) to f.
func (v *verifier) each(ctx context.Context, coll string, filter bson.D, start func(bson.Raw) (int64, error), f func(id string, start int64, got map[string]int64)) error {
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
		got := map[string]int64{}
		if err := bucket.Counters(raw, func(path string, n int64) {
			if n != 0 {
				got[path] = n
			}
		}); err != nil {
			return fmt.Errorf("read %s: %w", coll, err)
		}
		f(id, st, got)
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("read %s: %w", coll, err)
	}
	return nil
}

// docCounters returns the counters a bucket's document in the files adds
// (its $inc and $max, the flusher's own: bucket.Doc), the non-zero ones.
func docCounters(d *bucket.Doc) map[string]int64 {
	out := map[string]int64{}
	for _, terms := range []bson.D{d.Inc(), d.Max()} {
		for _, e := range terms {
			var n int64
			switch x := e.Value.(type) {
			case int32:
				n = int64(x)
			case int64:
				n = x
			}
			if n != 0 {
				out[e.Key] = n
			}
		}
	}
	return out
}

// siteCounters returns a site day's counters in the files, the non-zero
// ones.
func siteCounters(d *bucket.SiteDoc) map[string]int64 {
	out := map[string]int64{}
	for m := range measure.N {
		if n := d.V[m]; n != 0 {
			out[bucket.SiteMeasurePath(m)] = int64(n)
		}
	}
	return out
}

func unix(sec int64) time.Time { return time.Unix(sec, 0).UTC() }
