package flusher

// A batch of the tails layout: the plans it follows (routes, loaded once
// per attempt) and its tail passes, which write each cold page's counts
// to its entry in its site's tails.

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/measure"
)

// attempt is one attempt at writing a batch: its layout and, for the
// tails layout, the plans its buckets follow, by level, site and plan
// period, loaded before the first pass that needs them (loadRoutes).
type attempt struct {
	batch  string
	layout buffer.Layout
	plans  map[planKey]*bucket.Plan
	loaded [2]bool // the plans of the fine (minute) and coarse counts
	memo   [bucket.Levels]struct {
		site       string
		start, end int64
		plan       *bucket.Plan
	}
	err error // a plan not loaded (cold)
}

// plan returns the plan of the l bucket of site holding sec, nil if it
// is not loaded.
func (a *attempt) plan(l bucket.Level, site []byte, sec int64) *bucket.Plan {
	m := &a.memo[l]
	if sec >= m.start && sec < m.end && string(site) == m.site && m.plan != nil {
		return m.plan
	}
	start, end := planPeriod(l, sec)
	if string(site) != m.site {
		m.site = string(site)
	}
	m.start, m.end = start, end
	m.plan = a.plans[planKey{l, m.site, start}]
	return m.plan
}

// cold returns the Grouper.Cold of level l's pass: a page not hot in its
// period's plan is cold. A plan not loaded is an error (a.err; the chunk
// is not written).
func (a *attempt) cold(l bucket.Level) func(site, page []byte, sec int64) bool {
	return func(site, page []byte, sec int64) bool {
		p := a.plan(l, site, sec)
		if p == nil {
			a.err = cmp.Or(a.err, fmt.Errorf("no %s plan loaded for a bucket of %s", l, time.Unix(sec, 0).UTC().Format(time.RFC3339)))
			return true
		}
		return !p.IsHot(string(page))
	}
}

// loadRoutes gets, once per attempt, the plans of every bucket of the
// batch's fine counts (the minute level) or coarse ones (daily and
// monthly) that is not past its retention: one scan of the batch's keys,
// then the planner (its cache, one find per level for the others, a
// proposal for those not found, made from the period before and from
// this batch's own hits of the period).
func (f *Flusher) loadRoutes(ctx context.Context, a *attempt, coarse bool) error {
	i, levels := 0, []bucket.Level{bucket.Minute}
	if coarse {
		i, levels = 1, []bucket.Level{bucket.Daily, bucket.Monthly}
	}
	if a.loaded[i] {
		return nil
	}
	now := f.clock.Now()
	var misses []planKey
	seen := map[planKey]map[string]int64{} // the misses' pages and hits in this batch
	var cur [bucket.Levels]struct {
		site       string
		start, end int64
		miss       map[string]int64 // seen[key], when a miss
		page       string
	}
	var scanErr error
	err := f.scan(coarse, a.batch, nil, func(key []byte, v *measure.Vector) bool {
		site, page, sec, err := buffer.DecodeKey(key)
		if err != nil {
			scanErr = err
			return false
		}
		for _, l := range levels {
			if f.maint.retention.Expired(l, sec, now) {
				continue // not written: no plan needed
			}
			c := &cur[l]
			if sec < c.start || sec >= c.end || string(site) != c.site {
				c.start, c.end = planPeriod(l, sec)
				if string(site) != c.site {
					c.site = string(site)
				}
				k := planKey{l, c.site, c.start}
				c.miss = seen[k]
				if _, ok := a.plans[k]; !ok && c.miss == nil {
					if p := f.maint.plans.cached(k); p != nil {
						a.plans[k] = p
					} else {
						c.miss = map[string]int64{}
						seen[k] = c.miss
						misses = append(misses, k)
					}
				}
			}
			if c.miss != nil {
				if string(page) != c.page {
					c.page = string(page)
				}
				c.miss[c.page] += int64(v[measure.Views])
			}
		}
		return true
	})
	if err = cmp.Or(err, scanErr); err != nil {
		return err
	}
	if len(misses) > 0 {
		got, err := f.maint.plans.get(ctx, misses, seen)
		if err != nil {
			return err
		}
		maps.Copy(a.plans, got)
	}
	a.loaded[i] = true
	return nil
}

// tailKey names a tail document of a batch: level, site, bucket period
// start and shard.
type tailKey struct {
	level bucket.Level
	site  string
	start int64
	shard int
}

// writeTails writes the chunk of tail pass p that starts at from (nil:
// the pass's first key) and returns the key the next chunk starts at
// (nil: the pass is written). A tail must take exactly one update per
// batch (its guard is the document's), and its pages are spread over the
// whole pass (keys are ordered by site, page, time), so a chunk is whole
// sites: the keys are read site after site, each cold page's counts added
// to its tail (bucket.Tail, the shard its plan routes it to), until at
// least chunk.ops tails are complete at a site's end; then they are
// written, at most chunk.ops per bulk write (applyLevel: guarded update,
// whole insert of a new tail, the three-step fallback). A chunk cut short
// is written again whole: the tails that took the batch skip it.
func (f *Flusher) writeTails(ctx context.Context, a *attempt, p pass, from []byte, g bucket.Guard) ([]byte, error) {
	coarse := p == coarseTailPass
	if err := f.loadRoutes(ctx, a, coarse); err != nil {
		return nil, err
	}
	levels := p.tailLevels()
	now := f.clock.Now()
	tails := map[tailKey]*bucket.Tail{}
	var hs []pageHits // the minute tails' pages, for the activity
	var site string
	var next []byte
	var route [bucket.Levels]struct {
		page       string
		start, end int64
		hot        bool
		shard      int
	}
	var scanErr error
	err := f.scan(coarse, a.batch, from, func(key []byte, v *measure.Vector) bool {
		s, page, sec, err := buffer.DecodeKey(key)
		if err != nil {
			scanErr = err
			return false
		}
		if string(s) != site {
			if len(tails) >= f.chunk.ops {
				next = bytes.Clone(key) // the next chunk starts with this site
				return false
			}
			site = string(s)
			route = [bucket.Levels]struct {
				page       string
				start, end int64
				hot        bool
				shard      int
			}{}
		}
		for _, l := range levels {
			if f.maint.retention.Expired(l, sec, now) {
				continue // the level's pass counted it (expiredHits)
			}
			r := &route[l]
			if sec < r.start || sec >= r.end || string(page) != r.page {
				plan := a.plan(l, s, sec)
				if plan == nil {
					scanErr = fmt.Errorf("no %s plan loaded for a bucket of %s", l, time.Unix(sec, 0).UTC().Format(time.RFC3339))
					return false
				}
				r.start, r.end = planPeriod(l, sec)
				r.page = string(page)
				r.hot, r.shard = plan.Route(r.page, g)
			}
			if r.hot {
				continue
			}
			start, _ := l.Bounds(sec)
			k := tailKey{l, site, start, r.shard}
			t := tails[k]
			if t == nil {
				nt := bucket.NewTail(l, site, r.shard, sec)
				t = &nt
				tails[k] = t
			}
			t.Add(r.page, sec, v)
			if l == bucket.Minute {
				if n := len(hs) - 1; n >= 0 && hs[n].start == start && hs[n].page == r.page && hs[n].site == site {
					hs[n].hits += int64(v[measure.Views])
				} else {
					hs = append(hs, pageHits{site: site, page: r.page, start: start, hits: int64(v[measure.Views])})
				}
			}
		}
		return true
	})
	if err = cmp.Or(err, scanErr); err != nil {
		return nil, err
	}
	keys := slices.SortedFunc(maps.Keys(tails), func(x, y tailKey) int {
		return cmp.Or(cmp.Compare(x.level, y.level), cmp.Compare(x.site, y.site), cmp.Compare(x.start, y.start), cmp.Compare(x.shard, y.shard))
	})
	b := f.tailBounds()
	for len(keys) > 0 {
		l := keys[0].level
		n := 0
		for n < len(keys) && n < f.chunk.ops && keys[n].level == l {
			n++
		}
		// A tail's share of the batch goes to the tail in one update
		// when it fits one (Split), else to a spill of its own, in
		// parts, the tail untouched: the same on every attempt.
		var docs []guarded
		var spills []spill
		for _, k := range keys[:n] {
			t := tails[k]
			t.Limit = b.tail
			if parts := t.Split(min(b.part, b.tail), b.statement); len(parts) > 1 {
				spills = append(spills, spill{tail: t, parts: parts, why: "its share of the batch is more than one update carries"})
				continue
			}
			docs = append(docs, t)
		}
		keys = keys[n:]
		full, err := f.applyLevel(ctx, pass(l), g, docs)
		if err != nil {
			return nil, fmt.Errorf("%s tails: %w", f.colls[l].Name(), err)
		}
		for _, i := range full {
			t := docs[i].(*bucket.Tail)
			spills = append(spills, spill{tail: t, parts: []bucket.Tail{*t}, why: "it has no room left for the batch"})
		}
		if err := f.writeSpills(ctx, pass(l), g, spills); err != nil {
			return nil, fmt.Errorf("%s tails: %w", f.colls[l].Name(), err)
		}
		f.stats.tailWrites.Add(uint64(len(docs) - len(full)))
		f.heartbeat()
	}
	f.maint.act.record(hs, now)
	return next, nil
}
