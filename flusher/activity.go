package flusher

// What the flusher learned of each level's pages from the batches it
// wrote: the hits of each page in the current plan period and the one
// before, from which a plan is proposed (its hot pages and shards) and
// preallocation picks the pages to create ahead.

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logtally/logtally/bucket"
)

// pageKey is a site and a page.
type pageKey struct{ site, page string }

// pageEntry is a tracked page's hits in a period.
type pageEntry struct{ hits int64 }

// pageHits is a page's hits in one minute of a batch.
type pageHits struct {
	site, page string
	start      int64 // the minute's start (Unix seconds)
	hits       int64
}

// periodActivity is the pages seen in one plan period of a level.
type periodActivity struct {
	start int64 // the period's start (Unix seconds)
	pages map[pageKey]*pageEntry
	// sites counts each site's pages: those tracked, plus one for each
	// minute of a page not tracked (an upper bound of its distinct pages).
	sites map[string]int
}

// activity is the pages of each level's current plan period (an hour for
// the minute buckets, a day, a month: bucket.Level.PlanUnit) and of the
// period before, learned from the batches written (record). At most
// maxPages pages are tracked per level and period. Its lock guards memory
// only.
type activity struct {
	maxPages int

	mu     sync.Mutex
	levels [bucket.Levels]struct{ cur, prev periodActivity }

	untracked atomic.Uint64
	tracked   atomic.Int64
}

func newActivity(maxPages int) *activity { return &activity{maxPages: maxPages} }

// planPeriod returns the plan period of level l holding sec.
func planPeriod(l bucket.Level, sec int64) (start, end int64) { return l.PlanUnit().Bounds(sec) }

// roll makes the period holding now level l's current one: the current
// one becomes the one before when it is the period just before, else
// both start empty. mu is held.
func (a *activity) roll(l bucket.Level, now int64) *periodActivity {
	lv := &a.levels[l]
	start, _ := planPeriod(l, now)
	if lv.cur.start == start && lv.cur.pages != nil {
		return &lv.cur
	}
	a.tracked.Add(-int64(len(lv.prev.pages)))
	lv.prev = periodActivity{}
	if _, end := planPeriod(l, lv.cur.start); lv.cur.pages != nil && end == start {
		lv.prev = lv.cur
	} else {
		a.tracked.Add(-int64(len(lv.cur.pages)))
	}
	lv.cur = periodActivity{start: start, pages: map[pageKey]*pageEntry{}, sites: map[string]int{}}
	return &lv.cur
}

// record counts the hits of a batch's minutes (hs) into each level's
// current period; those of other periods are ignored.
func (a *activity) record(hs []pageHits, now time.Time) {
	if len(hs) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	sec := now.Unix()
	for l := range bucket.Level(bucket.Levels) {
		cur := a.roll(l, sec)
		_, end := planPeriod(l, cur.start)
		for i := range hs {
			h := &hs[i]
			if h.start < cur.start || h.start >= end {
				continue
			}
			k := pageKey{h.site, h.page}
			e := cur.pages[k]
			if e == nil {
				cur.sites[h.site]++
				if len(cur.pages) >= a.maxPages {
					a.untracked.Add(1)
					continue
				}
				e = &pageEntry{}
				cur.pages[k] = e
				a.tracked.Add(1)
			}
			e.hits += h.hits
		}
	}
}

// history returns what was seen of site in the period of level l before
// the plan period starting at start: the pages with at least minHits
// hits (sorted) and the site's pages (an upper bound); ok is false when
// that period is not known (before this flusher started, or long past).
func (a *activity) history(l bucket.Level, site string, start, minHits int64, now time.Time) (hot []string, pages int, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.roll(l, now.Unix())
	before, _ := planPeriod(l, start-1)
	lv := &a.levels[l]
	var p *periodActivity
	switch {
	case lv.cur.pages != nil && lv.cur.start == before:
		p = &lv.cur
	case lv.prev.pages != nil && lv.prev.start == before:
		p = &lv.prev
	default:
		return nil, 0, false
	}
	for k, e := range p.pages {
		if k.site == site && e.hits >= minHits {
			hot = append(hot, k.page)
		}
	}
	slices.Sort(hot)
	return hot, p.sites[site], true
}

// sites returns the sites seen in level l's current plan period, which
// starts at start (none if the period held by now is another).
func (a *activity) sites(l bucket.Level, start int64, now time.Time) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	cur := a.roll(l, now.Unix())
	if cur.start != start {
		return nil
	}
	return slices.Sorted(maps.Keys(cur.sites))
}

// eligible returns the pages of level l's current plan period with at
// least minHits hits.
func (a *activity) eligible(l bucket.Level, minHits int64, now time.Time) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, e := range a.roll(l, now.Unix()).pages {
		if e.hits >= minHits {
			n++
		}
	}
	return n
}
