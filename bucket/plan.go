package bucket

// Plans: which pages of a site are hot in a period, decided once before
// the period's first write and never changed.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/period"
)

// Exactly once needs one destination for a page's counts of a batch in a
// level's period, whatever attempt, replay or rebuild writes them; and the
// seeds' queries need all of a hot page's counts in its own bucket. So
// each site, level and plan period has a plan, fixed before the period's
// first write (inserted once: the first writer's proposal wins, every
// writer reads the winner) and never changed: a page it names is hot, its
// counts go to its own bucket, preallocated; any other page is cold, its
// counts go to the entry of the tail shard Route names.
//
//	{_id: "<time>/<site>~p", <the level's site, page "~p" and date fields>,
//	 hot: [<page>, ...], shards: <int32>}
//
// A plan lives in its level's collection (its page is the marker "~p",
// which no page and no tail has), so it expires with the level's buckets.
// Its period is the preallocator's for the level (PlanUnit): an hour for
// the minute buckets, a day, a month. Its date is the start of its
// period's last bucket (PlanDate: an hour's plan is dated its 59th
// minute), so that no expiry deletes it before a bucket of its period:
// a plan gone means every bucket it routed is past its retention, which
// the flusher no longer writes; a plan proposed again (otherwise) could
// send a batch's retry elsewhere than its first attempt.

// PlanPage is the page field of a plan.
const PlanPage = TailMarker + "p"

// Plan fields.
const (
	FieldHot    = "hot"
	FieldShards = "shards"
)

// Plan bounds.
const (
	// MaxPlanShards bounds a plan's tail shards.
	MaxPlanShards = 256
	// MaxPlanPages bounds a plan's hot pages.
	MaxPlanPages = 10000
	// MinuteTailShards is the shards of a minute tail, one per writer
	// (Route): a fleet's hosts spread over them.
	MinuteTailShards = 4
)

// PlanUnit returns the period of l's plans: an hour for the minute
// buckets, a day for the daily ones, a month for the monthly ones.
func (l Level) PlanUnit() period.Unit { return planUnits[l] }

var planUnits = [Levels]period.Unit{Minute: period.Hour, Daily: period.Day, Monthly: period.Month}

// Plan is the hot pages and tail shards of a site in one plan period of
// a level.
type Plan struct {
	Level Level
	Site  string
	// Start is the plan period's start (Unix seconds, UTC).
	Start int64
	// Hot are the hot pages, sorted.
	Hot []string
	// Shards is the number of tail shards by page, 1 to MaxPlanShards; 1
	// for a minute plan, whose tails are sharded by writer instead
	// (Route), each bounded by max_pages_per_minute.
	Shards int
}

// NewPlan returns the l plan of site whose period holds sec, with the
// hot pages (at most MaxPlanPages are kept: the first in sorted order)
// and the shards (clamped to 1..MaxPlanShards; 1 for Minute).
func NewPlan(l Level, site string, sec int64, hot []string, shards int) Plan {
	start, _ := l.PlanUnit().Bounds(sec)
	h := slices.Clone(hot)
	slices.Sort(h)
	h = slices.Compact(h)
	if len(h) > MaxPlanPages {
		h = h[:MaxPlanPages]
	}
	shards = min(max(shards, 1), MaxPlanShards)
	if l == Minute {
		shards = 1
	}
	return Plan{Level: l, Site: site, Start: start, Hot: h, Shards: shards}
}

// PlanID returns the _id of the l plan of site whose period starts at
// start.
func (l Level) PlanID(start int64, site string) string { return l.ID(start, site, PlanPage) }

// ID returns p's _id.
func (p *Plan) ID() string { return p.Level.PlanID(p.Start, p.Site) }

// PlanDate returns the date of the l plan whose period starts at start:
// the start of the period's last bucket.
func (l Level) PlanDate(start int64) int64 {
	_, end := l.PlanUnit().Bounds(start)
	last, _ := l.Bounds(end - 1)
	return last
}

// AppendKey appends p's _id and shard-key fields (Level.AppendKey).
func (p *Plan) AppendKey(f bson.D) bson.D {
	return p.Level.AppendKey(f, p.ID(), p.Site, PlanPage, p.Level.PlanDate(p.Start))
}

// Doc returns p's document.
func (p *Plan) Doc() bson.D {
	hot := p.Hot
	if hot == nil {
		hot = []string{}
	}
	doc := markerDoc(p.Level, p.ID(), p.Site, PlanPage, p.Level.PlanDate(p.Start))
	return append(doc, bson.E{Key: FieldHot, Value: hot}, bson.E{Key: FieldShards, Value: int32(p.Shards)})
}

// DecodePlan reads an l plan document.
func (l Level) DecodePlan(doc bson.Raw) (Plan, error) {
	p := Plan{Level: l}
	date, err := l.Start(doc)
	if err != nil {
		return p, fmt.Errorf("plan: %w", err)
	}
	p.Start, _ = l.PlanUnit().Bounds(date)
	site, err := doc.LookupErr(strings.Split(l.SiteField(), ".")...)
	if err != nil {
		return p, fmt.Errorf("plan: %s: %w", l.SiteField(), err)
	}
	if err := site.Unmarshal(&p.Site); err != nil {
		return p, fmt.Errorf("plan: %s: %w", l.SiteField(), err)
	}
	if v, err := doc.LookupErr(FieldHot); err == nil {
		if err := v.Unmarshal(&p.Hot); err != nil {
			return p, fmt.Errorf("plan: %s: %w", FieldHot, err)
		}
	}
	v, err := doc.LookupErr(FieldShards)
	if err != nil {
		return p, fmt.Errorf("plan: %s: %w", FieldShards, err)
	}
	n, ok := v.AsInt64OK()
	if !ok || n < 1 || n > MaxPlanShards {
		return p, fmt.Errorf("plan: %s: %v: not 1 to %d", FieldShards, v, MaxPlanShards)
	}
	p.Shards = int(n)
	if !slices.IsSorted(p.Hot) {
		slices.Sort(p.Hot)
	}
	return p, nil
}

// IsHot reports whether page is hot in p.
func (p *Plan) IsHot(page string) bool {
	_, ok := slices.BinarySearch(p.Hot, page)
	return ok
}

// Route returns where page's counts of the batch of guard g go under p:
// its own bucket (hot), or a tail shard: a daily or monthly page's by the
// page (FNV-1a of it mod Shards), so that its entries of a period are one
// whatever writer sends them; a minute page's by the writer
// (g.Spread(MinuteTailShards)), so that a fleet's every batch does not
// land on one document a minute (a minute tail is short-lived: one page
// in several shards costs little, one tail written by every host in every
// batch is the fleet's busiest document). Both are fixed for a batch on
// every attempt, replay and rebuild: the plan never changes, nor the
// batch's guard.
func (p *Plan) Route(page string, g Guard) (hot bool, shard int) {
	if p.IsHot(page) {
		return true, 0
	}
	if p.Level == Minute {
		return false, g.Spread(MinuteTailShards)
	}
	if p.Shards <= 1 {
		return false, 0
	}
	// FNV-1a of the page: the same in every process and version, as it
	// must be (a page's shard is where its counts are, for every host).
	return false, int(fnv1a.Extend(fnv1a.Offset, []byte(page)) % uint64(p.Shards))
}

// PlanFilter returns the find filter of the l plan of site whose period
// holds t.
func (l Level) PlanFilter(site string, t time.Time) bson.D {
	start, _ := l.PlanUnit().Bounds(t.Unix())
	return l.AppendKey(nil, l.PlanID(start, site), site, PlanPage, l.PlanDate(start))
}
