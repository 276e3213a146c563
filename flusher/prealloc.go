package flusher

import (
	"cmp"
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Preallocation defaults, used when Config's fields are zero.
const (
	// DefaultPreallocateRate bounds preallocation, in buckets per second.
	DefaultPreallocateRate = 50
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

// preallocJob is one page's buckets of one level's next period: count
// buckets starting at first, step seconds apart; next is the first not
// yet sent.
type preallocJob struct {
	p           pass
	site, page  string
	first, step int64
	count, next int
}

// preallocator creates, in each level's window before the end of its
// plan period, the next period's plans of the sites active in this one
// (proposed from what the flusher's activity saw, so that writers find
// them), and the buckets of the pages those plans name hot, ahead of
// time, in Run. Its lock guards memory only: it is never held during a
// database call.
type preallocator struct {
	rate       float64
	colls      [3]*mongo.Collection // by pass
	known      *known               // told the buckets that exist after an insert
	act        *activity            // the pages seen (the flusher records them)
	plans      *planner             // the next periods' plans
	timeout    time.Duration
	maxBackoff time.Duration
	clock      clock.Clock
	log        *slog.Logger
	hooks      *hooks // test seams, nil in production

	mu     sync.Mutex
	levels [bucket.Levels]levelWindow
	queue  []preallocJob
	fails  int // insert failures in a row, for the backoff

	created, existing, calls, failures, dropped atomic.Uint64
}

// levelWindow is a level's preallocation in its current plan period:
// when it begins, and the sites whose next period's plan is in and whose
// hot pages are queued.
type levelWindow struct {
	start int64 // the plan period's start
	// moment is when this period's preallocation begins; zero until the
	// window is entered.
	moment  time.Time
	planned map[string]bool
}

// periodOf returns the period of level p holding sec: an hour for the
// minute buckets (preallocated an hour at a time), else the bucket's own
// (the level's plan period).
func periodOf(p pass, sec int64) (start, end int64) { return planPeriod(p.level(), sec) }

// window returns level l's window state for the period starting at start,
// a new one when the period changed. mu is held.
func (pa *preallocator) window(l bucket.Level, start int64) *levelWindow {
	w := &pa.levels[l]
	if w.start != start || w.planned == nil {
		*w = levelWindow{start: start, planned: map[string]bool{}}
	}
	return w
}

// due returns, for each level whose moment has come in the current
// period, the next period's plans to get: those of the sites active now
// whose plan is not in yet. It returns when it should be called again at
// the latest. mu is held.
func (pa *preallocator) due(now time.Time) (keys []planKey, next time.Time) {
	sec := now.Unix()
	next = now.Add(time.Hour)
	for l := range bucket.Level(bucket.Levels) {
		p := pass(l)
		start, end := periodOf(p, sec)
		w := pa.window(l, start)
		span := preallocWindows[l]
		from, to := time.Unix(end, 0).Add(-span), time.Unix(end, 0)
		if now.Before(from) {
			next = earliest(next, from)
			continue
		}
		if w.moment.IsZero() {
			w.moment = pa.moment(l, from, span, now)
		}
		if now.Before(w.moment) {
			next = earliest(next, w.moment)
			continue
		}
		for _, site := range pa.act.sites(l, start, now) {
			if !w.planned[site] {
				keys = append(keys, planKey{l, site, end})
			}
		}
		next = earliest(next, earliest(now.Add(preallocRecheck), to))
	}
	return keys, next
}

// queuePlans queues the buckets of the hot pages of plans, the next
// periods' (got for keys), and marks their sites planned. mu is held.
func (pa *preallocator) queuePlans(keys []planKey, plans map[planKey]*bucket.Plan) {
	for _, k := range keys {
		plan := plans[k]
		if plan == nil {
			continue
		}
		cur, _ := planPeriod(k.level, k.start-1)
		w := &pa.levels[k.level]
		if cur != w.start || w.planned == nil || w.planned[k.site] {
			continue // the period rolled meanwhile, or queued already
		}
		w.planned[k.site] = true
		for _, page := range plan.Hot {
			j := preallocJob{p: pass(k.level), site: k.site, page: page, first: k.start, count: 1}
			if k.level == bucket.Minute {
				j.step, j.count = 60, 60
			}
			pa.queue = append(pa.queue, j)
		}
	}
}

// moment draws when a level's preallocation begins in the window of
// length w from from: late in the window more likely than early (the
// density rises linearly, the MongoDB pre-aggregated reports approach),
// so that hosts spread their inserts, and early enough to create, at the
// rate, what is eligible now plus what is queued, with a twentieth of the
// window to spare.
func (pa *preallocator) moment(l bucket.Level, from time.Time, w time.Duration, now time.Time) time.Time {
	work := len(pa.queue) * 60
	n := pa.act.eligible(l, pa.plans.minHits[l], now)
	if l == bucket.Minute {
		n *= 60
	}
	work += n
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

// step does what is due now: gets the next periods' plans of the
// levels whose moment has come (queueing their hot pages' buckets) and
// sends one insertMany of at most the rate's worth of buckets (at least
// one, at most 100). It returns how long to wait before the next step:
// the time those buckets take at the rate, a backoff after a failure, or
// until the next moment or recheck.
func (pa *preallocator) step(ctx context.Context) time.Duration {
	now := pa.clock.Now()
	pa.mu.Lock()
	keys, next := pa.due(now)
	pa.mu.Unlock()
	if len(keys) > 0 {
		plans, err := pa.plans.get(ctx, keys, nil)
		if err != nil {
			if ctx.Err() != nil {
				return 0
			}
			return pa.failed(err, "plans", len(keys))
		}
		pa.mu.Lock()
		pa.queuePlans(keys, plans)
		pa.mu.Unlock()
	}
	pa.mu.Lock()
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
		// The buckets are given back: retried after the backoff, or
		// dropped once their period begins.
		pa.mu.Lock()
		pa.queue = append(pa.queue, preallocJobs(p, buckets)...)
		pa.mu.Unlock()
		return pa.failed(insErr, pa.colls[p].Name(), len(buckets))
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

// failed counts a failed call (what: a collection, or "plans", of n
// documents), logs it and returns the backoff before the next.
func (pa *preallocator) failed(err error, what string, n int) time.Duration {
	pa.failures.Add(1)
	pa.mu.Lock()
	pa.fails++
	fails := pa.fails
	pa.mu.Unlock()
	wait := backoffCeiling(fails, pa.maxBackoff)
	pa.log.Warn("preallocation failed (counts are written meanwhile)", "collection", what, "documents", n, "attempt", fails, "retry_in", wait, "err", err)
	return wait
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
		Dropped: pa.dropped.Load(), Untracked: pa.act.untracked.Load(),
		Tracked: int(pa.act.tracked.Load()),
	}
}

// newPreallocator returns the preallocator of cfg (with its defaults set,
// Config.withDefaults), writing to colls, following the plans of pl and
// telling known what it created; nil when it is off.
func newPreallocator(cfg Config, colls [3]*mongo.Collection, known *known, act *activity, pl *planner) *preallocator {
	if !cfg.Preallocate {
		return nil
	}
	return &preallocator{
		rate:       cmp.Or(cfg.PreallocateRate, DefaultPreallocateRate),
		colls:      colls,
		known:      known,
		act:        act,
		plans:      pl,
		timeout:    cfg.Timeout,
		maxBackoff: cfg.MaxBackoff,
		clock:      cfg.Clock,
		log:        cfg.Logger,
	}
}
