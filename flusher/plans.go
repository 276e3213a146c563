package flusher

// Plans: which pages of a site are hot in a level's plan period
// (bucket.Plan), got once per period from MongoDB, or proposed and
// inserted by the first writer; a batch of the tails layout writes each
// page where its period's plan says.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
)

// Plan proposal and cache bounds.
const (
	// pagesPerShard is the pages a daily or monthly tail is sized for: a
	// plan has one shard per pagesPerShard pages its site had in the
	// period before (about 300 kB of entries a day at 150 bytes a page).
	pagesPerShard = 2000
	// planCacheMax bounds the plans kept between batches.
	planCacheMax = 4096
	// planFindMax bounds the plans one find asks for.
	planFindMax = 256
)

// unknownShards is, per level, the shards of a plan proposed without the
// period before (a first start, a replay of old logs): enough that a site
// of a few hundred thousand pages a month (a hundred thousand a day)
// keeps its tails within their bound (past it, a batch's share spills:
// spill.go). A minute plan has 1: its tails are sharded by writer
// (bucket.Plan.Route), each bounded by max_pages_per_minute.
var unknownShards = [bucket.Levels]int{bucket.Minute: 1, bucket.Daily: 2, bucket.Monthly: 8}

// planKey names a plan: a level, a site and the start of a plan period.
type planKey struct {
	level bucket.Level
	site  string
	start int64
}

// planner gets the plans the flusher's writes and the preallocator
// follow: from its cache, else from MongoDB, else proposed (propose) and
// inserted, the first writer's proposal winning (a duplicate key means
// another writer's is in; it is read). A plan never changes once
// inserted, so a cached plan is always right. Its lock guards memory
// only.
type planner struct {
	colls   [bucket.Levels]*mongo.Collection
	timeout time.Duration
	act     *activity
	minHits [bucket.Levels]int64 // the hot threshold per level
	clock   clock.Clock
	log     *slog.Logger

	mu    sync.Mutex
	cache map[planKey]*bucket.Plan
	order []planKey // insertion order, the oldest evicted first

	maxInsert int // plans per insertMany: Config.MaxOps

	finds, inserts, insertCalls, dups atomic.Uint64
}

// newPlanner returns the planner of cfg (defaults set) over colls; a
// level's hot threshold is PreallocateMinHits when set, else its
// break-even (bucket.Level.BreakEven).
func newPlanner(cfg Config, colls [bucket.Levels]*mongo.Collection, act *activity) *planner {
	pl := &planner{colls: colls, timeout: cfg.Timeout, act: act, clock: cfg.Clock, log: cfg.Logger, cache: map[planKey]*bucket.Plan{},
		maxInsert: max(cfg.MaxOps, 1)}
	for l := range bucket.Level(bucket.Levels) {
		pl.minHits[l] = l.BreakEven()
		if cfg.PreallocateMinHits > 0 {
			pl.minHits[l] = int64(cfg.PreallocateMinHits)
		}
	}
	return pl
}

// cached returns the plan of k if it is in the cache.
func (pl *planner) cached(k planKey) *bucket.Plan {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.cache[k]
}

// keep puts p in the cache, evicting the oldest entries when it is full.
func (pl *planner) keep(p *bucket.Plan) planKey {
	k := planKey{p.Level, p.Site, p.Start}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if _, ok := pl.cache[k]; ok {
		return k
	}
	for len(pl.cache) >= planCacheMax && len(pl.order) > 0 {
		delete(pl.cache, pl.order[0])
		pl.order = pl.order[1:]
	}
	pl.cache[k] = p
	pl.order = append(pl.order, k)
	return k
}

// propose returns the plan this writer proposes for k: hot, the pages
// with at least the level's threshold of hits in the period before (as
// this flusher saw it) or in seen (this batch's hits in the period
// itself, by page); shards, one per pagesPerShard pages of the period
// before or of seen, or unknownShards without the period before.
func (pl *planner) propose(k planKey, seen map[string]int64) bucket.Plan {
	minHits := pl.minHits[k.level]
	hot, pages, known := pl.act.history(k.level, k.site, k.start, minHits, pl.clock.Now())
	for page, n := range seen {
		if n >= minHits {
			hot = append(hot, page)
		}
	}
	shards := unknownShards[k.level]
	if known {
		shards = (pages + pagesPerShard - 1) / pagesPerShard
	}
	shards = max(shards, (len(seen)+pagesPerShard-1)/pagesPerShard, 1)
	return bucket.NewPlan(k.level, k.site, k.start, hot, shards)
}

// errPlanMissing is a plan neither found nor inserted: a duplicate key on
// insert, then not found (deleted in between).
var errPlanMissing = errors.New("plan neither found nor inserted")

// get returns the plans of keys: the cached ones, then those found in
// MongoDB (one find per level and planFindMax keys), then, for the
// others, this writer's proposals (propose, with seen[k] the batch's own
// hits of k's period by page), inserted together (one unordered
// insertMany per level and maxInsert plans); a proposal that meets a
// duplicate key gives way to the plan in, read by one more find.
func (pl *planner) get(ctx context.Context, keys []planKey, seen map[planKey]map[string]int64) (map[planKey]*bucket.Plan, error) {
	out := make(map[planKey]*bucket.Plan, len(keys))
	var misses []planKey
	for _, k := range keys {
		if p := pl.cached(k); p != nil {
			out[k] = p
		} else {
			misses = append(misses, k)
		}
	}
	if err := pl.find(ctx, misses, out); err != nil {
		return nil, err
	}
	var props []*bucket.Plan
	for _, k := range misses {
		if out[k] == nil {
			p := pl.propose(k, seen[k])
			props = append(props, &p)
		}
	}
	lost, err := pl.insert(ctx, props, out)
	if err != nil {
		return nil, err
	}
	if err := pl.find(ctx, lost, out); err != nil {
		return nil, err
	}
	for _, k := range lost {
		if out[k] == nil {
			return nil, fmt.Errorf("%s plan of a site for %s: %w", k.level, time.Unix(k.start, 0).UTC().Format(time.RFC3339), errPlanMissing)
		}
	}
	return out, nil
}

// find reads the plans of keys from MongoDB into out (and the cache):
// one find per level and planFindMax keys. Those not found are left out.
func (pl *planner) find(ctx context.Context, keys []planKey, out map[planKey]*bucket.Plan) error {
	byLevel := map[bucket.Level][]planKey{}
	for _, k := range keys {
		byLevel[k.level] = append(byLevel[k.level], k)
	}
	for _, l := range slices.Sorted(maps.Keys(byLevel)) {
		ks := byLevel[l]
		for len(ks) > 0 {
			n := min(len(ks), planFindMax)
			or := make(bson.A, n)
			for i, k := range ks[:n] {
				or[i] = l.PlanFilter(k.site, time.Unix(k.start, 0))
			}
			ks = ks[n:]
			if err := pl.findPlans(ctx, l, bson.D{{Key: "$or", Value: or}}, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// findPlans reads the l plans filter selects into out and the cache.
func (pl *planner) findPlans(ctx context.Context, l bucket.Level, filter bson.D, out map[planKey]*bucket.Plan) error {
	ctx, cancel := context.WithTimeout(ctx, pl.timeout)
	defer cancel()
	pl.finds.Add(1)
	cur, err := pl.colls[l].Find(ctx, filter)
	if err != nil {
		return fmt.Errorf("find %s plans: %w", l, err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		p, err := l.DecodePlan(cur.Current)
		if err != nil {
			return fmt.Errorf("%s: %w", pl.colls[l].Name(), err)
		}
		out[pl.keep(&p)] = &p
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("find %s plans: %w", l, err)
	}
	return nil
}

// insert inserts the proposals ps, by level in unordered insertMany
// calls of at most maxInsert plans, puts those that went in into out and
// the cache, and returns the keys of those another writer's plan was in
// first (a duplicate key).
func (pl *planner) insert(ctx context.Context, ps []*bucket.Plan, out map[planKey]*bucket.Plan) (lost []planKey, _ error) {
	slices.SortStableFunc(ps, func(a, b *bucket.Plan) int { return int(a.Level) - int(b.Level) })
	for len(ps) > 0 {
		n := 0
		for n < len(ps) && n < pl.maxInsert && ps[n].Level == ps[0].Level {
			n++
		}
		chunk := ps[:n]
		ps = ps[n:]
		docs := make([]any, n)
		for i, p := range chunk {
			docs[i] = p.Doc()
		}
		l := chunk[0].Level
		ictx, cancel := context.WithTimeout(ctx, pl.timeout)
		pl.inserts.Add(uint64(n))
		pl.insertCalls.Add(1)
		_, insErr := pl.colls[l].InsertMany(ictx, docs, options.InsertMany().SetOrdered(false))
		cancel()
		dups, err := ignoreDuplicates(insErr)
		if err != nil {
			return nil, fmt.Errorf("insert %d %s plans: %w", n, l, err)
		}
		pl.dups.Add(uint64(dups))
		met := duplicateAt(insErr)
		for i, p := range chunk {
			if met[i] {
				lost = append(lost, planKey{p.Level, p.Site, p.Start})
			} else {
				out[pl.keep(p)] = p
			}
		}
	}
	return lost, nil
}
