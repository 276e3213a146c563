package verify

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/query"
)

// Tails: a cold page's counts are entries of its site's tails, not of a
// bucket of its own, and a page may have counts in both (an older
// logtally in the fleet writes every page to its bucket). So MongoDB's
// side of a page's bucket is its bucket's counters plus its tail
// entries', each put where the page's bucket holds it
// (bucket.Level.BucketPaths: a daily tail's hour 13 views are the
// bucket's hourly.13 and part of its daily total), and judged as one
// document against the files' bucket, counter by counter as before.
//
// A tail holds each page's views and measures at its level's measure
// grain (a minute, an hour, a day), not the finer views of the seconds
// (minute.H.M of a day, seconds.N of a minute): where a page has tail
// entries in a measure slot, the bucket's finer counters of that slot
// hold only part of its hits and are not judged, on either side (counted
// in Report.Finer); the slot's own counters, which hold all of them, are.
// A page the period's plan names hot has all its counts in its bucket:
// its finer counters are always judged, so a hot page's hits written to
// a tail show as lost there.

// tailPart is a page's entries in the tails of one level and period, as
// the counters of its bucket.
type tailPart struct {
	page       string
	start, end int64
	counters   map[string]tailCounter // by the bucket's path
	slots      map[int64]bool         // the measure slots (their start) with entries
	seen       bool                   // judged with the page's bucket
}

type tailCounter struct {
	n   int64
	max bool // a maximum: merged by max
}

// add adds n to the counter at path (a maximum's greatest).
func (p *tailPart) add(path string, n int64, isMax bool) {
	c := p.counters[path]
	c.max = isMax
	if isMax {
		c.n = max(c.n, n)
	} else {
		c.n += n
	}
	p.counters[path] = c
}

// merge returns got (sorted by path) with p's counters added, sorted.
func (p *tailPart) merge(got []counter) []counter {
	out := make([]counter, 0, len(got)+len(p.counters))
	done := map[string]bool{}
	for _, c := range got {
		if t, ok := p.counters[c.path]; ok {
			done[c.path] = true
			if t.max {
				c.n = max(c.n, t.n)
			} else {
				c.n += t.n
			}
		}
		out = append(out, c)
	}
	for path, t := range p.counters {
		if !done[path] && t.n != 0 {
			out = append(out, counter{path, t.n})
		}
	}
	return sortCounters(out)
}

// tailSet is a site's tails and plans of one level in a pass's window.
type tailSet struct {
	parts map[string]*tailPart // by the page bucket's _id
	plans map[int64]*bucket.Plan
}

// readTails reads site's l tails whose periods start in [from, to) and
// the plans of the periods holding them (a plan is dated its period's
// last bucket, bucket.PlanDate: the one of the period holding to-1, a
// minute level's hour, may be dated at or after to), the tails as their
// pages' parts, and counts the tails compared (Report.Tails).
func (v *verifier) readTails(ctx context.Context, j *judge, l bucket.Level, site string, from, to int64) (*tailSet, error) {
	ts := &tailSet{parts: map[string]*tailPart{}, plans: map[int64]*bucket.Plan{}}
	finds := []bson.D{l.MarkerRange(site, unix(from), unix(to))}
	if last := l.PlanDate(to - 1); last >= to {
		finds = append(finds, l.Range(site, bucket.PlanPage, unix(to), unix(last+1)))
	}
	for _, f := range finds {
		if err := v.readMarkers(ctx, j, l, site, f, ts); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// readMarkers reads the l tails and plans of site matching f into ts.
func (v *verifier) readMarkers(ctx context.Context, j *judge, l bucket.Level, site string, f bson.D, ts *tailSet) error {
	name := v.opts.Collections.Name(l)
	cur, err := v.opts.DB.Collection(name).Find(ctx, f, options.Find().SetProjection(bson.D{{Key: bucket.FieldApplied, Value: 0}}))
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		raw := cur.Current
		var page string
		if err := raw.Lookup(strings.Split(l.PageField(), ".")...).Unmarshal(&page); err != nil {
			return fmt.Errorf("read %s: %s: %w", name, l.PageField(), err)
		}
		if page == bucket.PlanPage {
			p, err := l.DecodePlan(raw)
			if err != nil {
				return fmt.Errorf("read %s: %w", name, err)
			}
			ts.plans[p.Start] = &p
			continue
		}
		start, err := l.Start(raw)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		if _, ok := bucket.TailShard(page); !ok {
			v.rep.Unknown++ // a marker of a newer version?
			continue
		}
		_, end := l.Bounds(start)
		if start < j.r.to && end > j.r.from && j.w.has(min(end, j.r.to)-1) {
			v.rep.Tails[l]++
		}
		err = bucket.Counters(raw, func(path string, n int64) {
			pg, c, ok := l.TailCounter(start, end, path)
			if !ok {
				v.rep.Unknown++
				return
			}
			id := l.ID(start, site, pg)
			p := ts.parts[id]
			if p == nil {
				p = &tailPart{page: pg, start: start, end: end, counters: map[string]tailCounter{}, slots: map[int64]bool{}}
				ts.parts[id] = p
			}
			for _, bp := range l.BucketPaths(start, c) {
				p.add(bp, n, c.Measure.IsMax())
			}
			p.slots[c.From] = true
		})
		if err != nil {
			// The path names a page (text from the logs): shown escaped.
			id, _ := raw.Lookup(bucket.FieldID).StringValueOK()
			return fmt.Errorf("read %s: %s: %s", name, query.Shown(id), query.Shown(err.Error()))
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	return nil
}

// rest returns the parts not judged with a bucket, by _id.
func (ts *tailSet) rest() []string {
	var ids []string
	for _, id := range slices.Sorted(maps.Keys(ts.parts)) {
		if !ts.parts[id].seen {
			ids = append(ids, id)
		}
	}
	return ids
}

// finer drops from want and got (sorted by path) the counters of an l
// bucket [start, end) finer than its measure grain in the slots where
// p has tail entries, unless the plan of the period names p's page hot;
// it counts those in the judge's window in Report.Finer.
func (v *verifier) finer(j *judge, l bucket.Level, ts *tailSet, p *tailPart, start, end int64, want, got []counter) ([]counter, []counter) {
	if p == nil {
		return want, got
	}
	ps, _ := l.PlanUnit().Bounds(start)
	if plan := ts.plans[ps]; plan != nil && plan.IsHot(p.page) {
		return want, got
	}
	dropped := map[string]bool{}
	keep := func(cs []counter) []counter {
		return slices.DeleteFunc(cs, func(c counter) bool {
			ci, ok := l.Counter(start, end, c.path)
			if !ok {
				return false
			}
			from, to := l.MeasureSpan(start, end, ci.From)
			if ci.To-ci.From >= to-from || !p.slots[from] {
				return false
			}
			if !dropped[c.path] && ci.From < j.r.to && ci.To > j.r.from && ci.From >= j.w.from && ci.From < j.w.to {
				v.rep.Finer++
			}
			dropped[c.path] = true
			return true
		})
	}
	return keep(slices.Clone(want)), keep(got)
}
