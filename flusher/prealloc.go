package flusher

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/period"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Preallocation defaults, used when Config's fields are zero.
const (
	// DefaultPreallocateRate bounds preallocation, in buckets per second.
	DefaultPreallocateRate = 50
	// DefaultPreallocateMinHits is the hits a page needs in a period for
	// its next period's buckets to be preallocated: about one a minute
	// over an hour, the pages whose next hour's minute buckets are mostly
	// used (docs/scaling.md).
	DefaultPreallocateMinHits = 60
	// DefaultPreallocateMaxPages bounds the pages tracked per level and
	// period (hour, day, month).
	DefaultPreallocateMaxPages = 10000
)

// preallocWindows is, per level (minute, daily, monthly), the last part of
// the current period (hour, day, month) in which the next period's
// buckets are created.
var preallocWindows = [3]time.Duration{15 * time.Minute, 2 * time.Hour, 24 * time.Hour}

// preallocRecheck is how often, within a window and once its moment has
// come, pages that became active since are looked for.
const preallocRecheck = time.Minute

// PreallocStats counts preallocation's work since New.
type PreallocStats struct {
	// Created counts the buckets preallocation inserted; Existing those
	// it found already there (another host, or a flush, made them).
	Created  uint64 `json:"created"`
	Existing uint64 `json:"existing"`
	// InsertCalls counts its insertMany calls, Failures the failed ones.
	InsertCalls uint64 `json:"insert_calls"`
	Failures    uint64 `json:"failures"`
	// Dropped counts buckets not created before their period began (the
	// rate was too low for the pages, or inserts failed): those are
	// inserted whole when first written.
	Dropped uint64 `json:"dropped"`
	// Untracked counts pages not tracked in a period because
	// PreallocateMaxPages pages were tracked already.
	Untracked uint64 `json:"untracked"`
	// Tracked is the pages tracked now, all levels together.
	Tracked int `json:"tracked"`
}

// pageKey is a site and a page.
type pageKey struct{ site, page string }

// pageEntry is a tracked page's hits in the level's current period, and
// whether its next period's buckets are queued.
type pageEntry struct {
	hits   int64
	queued bool
}

// activity is the pages active in one level's current period (an hour
// for the minute buckets, a day, a month).
type activity struct {
	start int64 // period start (Unix seconds)
	pages map[pageKey]*pageEntry
	// moment is when this period's preallocation begins; zero until the
	// window is entered.
	moment time.Time
}

// preallocJob is one page's buckets of one level's next period: count
// buckets starting at first, step seconds apart; next is the first not
// yet sent.
type preallocJob struct {
	p           pass
	site, page  string
	first, step int64
	count, next int
}

// preallocator learns the active pages from the batches written (the
// flusher calls record) and creates their next period's buckets ahead of
// time, in Run. Its lock guards memory only: it is never held during a
// database call, and Flush only takes it to record a chunk's pages.
type preallocator struct {
	rate       float64
	minHits    int64
	maxPages   int
	colls      [3]*mongo.Collection // by pass
	known      *known               // told the buckets that exist after an insert
	timeout    time.Duration
	maxBackoff time.Duration
	clock      clock.Clock
	log        *slog.Logger
	hooks      *hooks // test seams, nil in production

	mu     sync.Mutex
	levels [3]activity
	queue  []preallocJob
	fails  int // insert failures in a row, for the backoff

	created, existing, calls, failures, dropped, untracked atomic.Uint64
	tracked                                                atomic.Int64
}

// periodOf returns the period of level p holding sec: an hour for the
// minute buckets (preallocated an hour at a time), else the bucket's own.
func periodOf(p pass, sec int64) (start, end int64) {
	if p == minutePass {
		return period.Hour.Bounds(sec)
	}
	return p.level().Bounds(sec)
}

// record counts the hits of a minute pass chunk's buckets into the
// current period of each level. Buckets of other periods are ignored.
func (pa *preallocator) record(buckets []bucket.Doc, now time.Time) {
	pa.mu.Lock()
	defer pa.mu.Unlock()
	sec := now.Unix()
	for l := range pa.levels {
		lv := &pa.levels[l]
		cur, _ := periodOf(pass(l), sec)
		pa.roll(lv, cur)
		for i := range buckets {
			b := &buckets[i]
			if s, _ := periodOf(pass(l), b.Start); s != cur {
				continue
			}
			k := pageKey{b.Site, b.Page}
			e := lv.pages[k]
			if e == nil {
				if len(lv.pages) >= pa.maxPages {
					pa.untracked.Add(1)
					continue
				}
				e = &pageEntry{}
				lv.pages[k] = e
				pa.tracked.Add(1)
			}
			e.hits += b.Total
		}
	}
}

// roll starts a new period in lv when cur is not its period. mu is held.
func (pa *preallocator) roll(lv *activity, cur int64) {
	if lv.start == cur && lv.pages != nil {
		return
	}
	pa.tracked.Add(-int64(len(lv.pages)))
	*lv = activity{start: cur, pages: map[pageKey]*pageEntry{}}
}

// schedule enqueues, for each level whose moment has come in the current
// period, the next period's buckets of the pages with enough hits that
// are not queued yet. It returns when it should be called again at the
// latest. mu is held.
func (pa *preallocator) schedule(now time.Time) time.Time {
	sec := now.Unix()
	next := now.Add(time.Hour)
	for l := range pa.levels {
		p, lv := pass(l), &pa.levels[l]
		start, end := periodOf(p, sec)
		pa.roll(lv, start)
		w := preallocWindows[l]
		from, to := time.Unix(end, 0).Add(-w), time.Unix(end, 0)
		if now.Before(from) {
			next = earliest(next, from)
			continue
		}
		if lv.moment.IsZero() {
			lv.moment = pa.moment(p, from, w, now)
		}
		if now.Before(lv.moment) {
			next = earliest(next, lv.moment)
			continue
		}
		for k, e := range lv.pages {
			if e.queued || e.hits < pa.minHits {
				continue
			}
			e.queued = true
			j := preallocJob{p: p, site: k.site, page: k.page, first: end, count: 1}
			if p == minutePass {
				j.step, j.count = 60, 60
			}
			pa.queue = append(pa.queue, j)
		}
		next = earliest(next, earliest(now.Add(preallocRecheck), to))
	}
	return next
}

// moment draws when a level's preallocation begins in the window of
// length w from from: late in the window more likely than early (the
// density rises linearly, the MongoDB pre-aggregated reports approach),
// so that hosts spread their inserts, and early enough to create, at the
// rate, what is eligible now plus what is queued, with a twentieth of the
// window to spare.
func (pa *preallocator) moment(p pass, from time.Time, w time.Duration, now time.Time) time.Time {
	work := len(pa.queue) * 60
	lv := &pa.levels[p]
	for _, e := range lv.pages {
		if !e.queued && e.hits >= pa.minHits {
			work++
			if p == minutePass {
				work += 59
			}
		}
	}
	reserve := time.Duration(float64(work)/pa.rate*float64(time.Second)) + w/20
	span := w - reserve
	if span <= 0 {
		return from
	}
	return from.Add(time.Duration(math.Sqrt(rand.Float64()) * float64(span)))
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// take removes from the queue the buckets whose period has begun
// (counting them as dropped) and returns up to max buckets of one pass
// from its front.
func (pa *preallocator) take(now time.Time, max int) (pass, []bucket.Doc) {
	sec := now.Unix()
	var out []bucket.Doc
	var p pass
	for len(pa.queue) > 0 && len(out) < max {
		j := &pa.queue[0]
		if len(out) > 0 && j.p != p {
			break
		}
		p = j.p
		for j.next < j.count && len(out) < max {
			start := j.first + int64(j.next)*j.step
			j.next++
			if start <= sec {
				pa.dropped.Add(1)
				continue
			}
			out = append(out, bucket.NewDoc(p.level(), j.site, j.page, start))
		}
		if j.next == j.count {
			pa.queue = pa.queue[1:]
		}
	}
	return p, out
}

// step does what is due now: schedules the levels whose moment
// has come and sends one insertMany of at most the rate's worth of
// buckets (at least one, at most 100). It returns how long to wait before
// the next step: the time those buckets take at the rate, a backoff after
// a failure, or until the next moment or recheck.
func (pa *preallocator) step(ctx context.Context) time.Duration {
	now := pa.clock.Now()
	pa.mu.Lock()
	next := pa.schedule(now)
	p, buckets := pa.take(now, min(max(int(pa.rate), 1), 100))
	pa.mu.Unlock()
	if len(buckets) == 0 {
		return max(next.Sub(now), time.Second)
	}
	docs := make([]bson.D, len(buckets))
	for i := range buckets {
		docs[i] = buckets[i].Zero()
	}
	pa.calls.Add(1)
	var insErr error
	if h := pa.hooks; h != nil && h.prealloc != nil {
		insErr = h.prealloc(p, len(docs))
	}
	if insErr == nil {
		ictx, cancel := context.WithTimeout(ctx, pa.timeout)
		_, insErr = pa.colls[p].InsertMany(ictx, docs, options.InsertMany().SetOrdered(false))
		cancel()
	}
	dups, insErr := ignoreDuplicates(insErr)
	if insErr != nil {
		if ctx.Err() != nil {
			return 0
		}
		pa.failures.Add(1)
		// The buckets are given back: retried after the backoff, or
		// dropped once their period begins.
		pa.mu.Lock()
		pa.fails++
		fails := pa.fails
		pa.queue = append(pa.queue, preallocJobs(p, buckets)...)
		pa.mu.Unlock()
		wait := backoffCeiling(fails, pa.maxBackoff)
		pa.log.Warn("preallocation failed (counts are written meanwhile)", "collection", pa.colls[p].Name(), "buckets", len(buckets), "attempt", fails, "retry_in", wait, "err", insErr)
		return wait
	}
	pa.mu.Lock()
	pa.fails = 0
	pa.mu.Unlock()
	pa.created.Add(uint64(len(buckets) - dups))
	pa.existing.Add(uint64(dups))
	// Created or met, they exist: their first write is an update.
	pa.known.add(p, len(buckets), func(i int) string { return buckets[i].ID }, func(i int) int64 { return buckets[i].End }, false)
	return time.Duration(float64(len(buckets)) / pa.rate * float64(time.Second))
}

// preallocJobs turns buckets back into one-bucket jobs.
func preallocJobs(p pass, buckets []bucket.Doc) []preallocJob {
	jobs := make([]preallocJob, len(buckets))
	for i, b := range buckets {
		jobs[i] = preallocJob{p: p, site: b.Site, page: b.Page, first: b.Start, count: 1}
	}
	return jobs
}

// Run runs preallocation steps, on its own rate and timeouts, until ctx
// is done. It holds no lock during a database call that Flush would wait
// for.
func (pa *preallocator) Run(ctx context.Context) {
	for {
		wait := pa.step(ctx)
		select {
		case <-ctx.Done():
			return
		case <-pa.clock.After(wait):
		}
	}
}

// stats returns preallocation's counters.
func (pa *preallocator) stats() PreallocStats {
	if pa == nil {
		return PreallocStats{}
	}
	return PreallocStats{
		Created: pa.created.Load(), Existing: pa.existing.Load(),
		InsertCalls: pa.calls.Load(), Failures: pa.failures.Load(),
		Dropped: pa.dropped.Load(), Untracked: pa.untracked.Load(),
		Tracked: int(pa.tracked.Load()),
	}
}

// newPreallocator returns the preallocator of cfg (with its defaults set,
// Config.withDefaults), writing to colls and telling known what it
// created; nil when it is off.
func newPreallocator(cfg Config, colls [3]*mongo.Collection, known *known) (*preallocator, error) {
	if !cfg.Preallocate {
		return nil, nil
	}
	if cfg.PreallocateRate < 0 || math.IsNaN(cfg.PreallocateRate) || cfg.PreallocateMinHits < 0 || cfg.PreallocateMaxPages < 0 {
		return nil, fmt.Errorf("negative PreallocateRate, PreallocateMinHits or PreallocateMaxPages")
	}
	pa := &preallocator{
		rate:       cfg.PreallocateRate,
		minHits:    int64(cfg.PreallocateMinHits),
		maxPages:   cfg.PreallocateMaxPages,
		colls:      colls,
		known:      known,
		timeout:    cfg.Timeout,
		maxBackoff: cfg.MaxBackoff,
		clock:      cfg.Clock,
		log:        cfg.Logger,
	}
	if pa.rate == 0 {
		pa.rate = DefaultPreallocateRate
	}
	if pa.minHits == 0 {
		pa.minHits = DefaultPreallocateMinHits
	}
	if pa.maxPages == 0 {
		pa.maxPages = DefaultPreallocateMaxPages
	}
	return pa, nil
}
