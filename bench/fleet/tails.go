package main

// The tails layout (docs/buckets.md, "Hot and cold pages"), modelled
// beside the pages layout the simulation measures: a page is hot at a
// level in a plan period (an hour for minute buckets, a day, a month)
// when the host proposing the period's plan saw at least the level's
// threshold of hits in the period before (bucket.Level.BreakEven, or
// -hot-min-hits); a hot page keeps its own buckets, as in the pages
// layout; a cold page's counts of a batch go to an entry of the tail
// document of its (site, level, bucket period, shard), one guarded update
// per tail and batch from every host that has cold hits for it.
//
// What is measured and what is modelled: entry and document sizes are the
// real builders' (bucket.NewTail, Tail.Add, Tail.Whole, Tail.Zero), page
// by page; rates are each page's per-host rate measured in the sample,
// with Poisson arrivals, as the pages layout's union figures are.
// Approximations (printed with the table):
//   - hot is per page and period with probability atLeast(threshold,
//     rate × plan period) (the proposer's Poisson count in the period
//     before); figures weight the page's bucket and its tail entries by it;
//   - cold hits spread evenly over a daily or monthly level's shards (the
//     FNV hash of the page); shards are one per 2,000 pages a host sees
//     in the plan period (flusher/plans.go), 1 to bucket.MaxPlanShards;
//     a minute tail's shards are its writers' (bucket.MinuteTailShards,
//     hosts spread evenly): a page's entry is in each shard whose hosts
//     hit it;
//   - a tail entry holds one cell per slot (a minute, an hour, a day)
//     any host hit: the first cell's bytes are measured per page, each
//     further cell at one measured size (slot names of 1 or 2 digits);
//   - a tail is bounded at 4 MiB and spills beyond: spills are not
//     modelled (their bytes are counted as if in the tail, their inserts
//     not counted); the table says where a tail's period would exceed
//     the bound;
//   - operations are one per bucket or tail write (the write path's
//     duplicate inserts of a page bucket, the tails' creation and the
//     plans' one find and insert per site, level and period are left
//     out in both layouts).

import (
	"fmt"
	"io"
	"math"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/measure"
)

// tailBound is a tail document's bound (flusher: spill beyond).
const tailBound = 4 << 20

// pagesPerShard mirrors flusher/plans.go: a plan has one shard of its
// daily and monthly tails per pagesPerShard pages of the period before.
const pagesPerShard = 2000

// slots is each level's cells per bucket in a tail entry and their span.
var slots = [3]struct{ n, secs float64 }{{1, minuteSecs}, {24, hourSecs}, {30, daySecs}}

// tailSizes are one level's tail sizes, measured with the builders.
type tailSizes struct {
	zero      float64            // an empty tail document (Tail.Zero)
	entry     map[string]float64 // per page, its entry with one cell
	tailEntry float64            // a seen-once page's entry with one cell
	cell      float64            // each further cell of an entry
}

// measureTails measures level l's tail sizes for the pages of t.
func measureTails(l bucket.Level, pages map[string]int64, hosts int) (tailSizes, error) {
	sec := time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC).Unix()
	g := bucket.NumberedGuard(int64(hosts), 1)
	var v measure.Vector
	v.Add(&measure.Hit{Status: 200, Bytes: 512, RT: -1}) // the simulated log line
	size := func(add func(t *bucket.Tail)) (float64, error) {
		t := bucket.NewTail(l, site, 0, sec)
		add(&t)
		doc, err := t.Whole(g)
		if err != nil {
			return 0, fmt.Errorf("%s tail: %w", l, err)
		}
		return float64(len(doc)), nil
	}
	empty, err := size(func(*bucket.Tail) {})
	if err != nil {
		return tailSizes{}, err
	}
	t0 := bucket.NewTail(l, site, 0, sec)
	zero, err := bson.Marshal(t0.Zero())
	if err != nil {
		return tailSizes{}, fmt.Errorf("%s tail: zero: %w", l, err)
	}
	s := tailSizes{zero: float64(len(zero)), entry: map[string]float64{}}
	for page := range pages {
		n, err := size(func(t *bucket.Tail) { t.Add(page, sec, &v) })
		if err != nil {
			return tailSizes{}, err
		}
		s.entry[page] = n - empty
	}
	one := func(page string) (float64, error) {
		n, err := size(func(t *bucket.Tail) { t.Add(page, sec, &v) })
		return n - empty, err
	}
	if s.tailEntry, err = one(tailPrefix + "3/123456"); err != nil {
		return tailSizes{}, err
	}
	if l != bucket.Minute {
		first, err := one(headPrefix + "1")
		if err != nil {
			return tailSizes{}, err
		}
		two, err := size(func(t *bucket.Tail) {
			t.Add(headPrefix+"1", sec, &v)
			t.Add(headPrefix+"1", sec+int64(slots[l].secs)*11, &v)
		})
		if err != nil {
			return tailSizes{}, err
		}
		s.cell = two - empty - first
	}
	return s, nil
}

// layout is one layout's cluster-wide figures.
type layout struct {
	bytesDay, docsDay [3]float64 // per level
	writes            [3]float64 // bucket and tail writes per second, per level
	busiest           [3]float64 // busiest document's writes per second, per level
	busyTail          [3]bool    // the busiest is a tail
	tailDocBytes      [3]float64 // one tail document's bytes at its period's end
	shards            [3]int
	hotPages          [3]float64 // pages hot (expected)
}

func (o *layout) sum(a [3]float64) float64 { return a[0] + a[1] + a[2] }

// pagesLayout is the simulated layout: every page its own buckets.
func (t *totals) pagesLayout() layout {
	var o layout
	for pi, l := range levels {
		docs, bytes := t.stored(l, t.appliedEntry)
		o.bytesDay[pi] = bytes[head] + bytes[tail]
		o.docsDay[pi] = docs[head] + docs[tail]
		o.writes[pi] = t.scale(float64(t.passes[pi].updates[head] + t.passes[pi].updates[tail]))
		_, o.busiest[pi] = t.busiest(pi, false)
	}
	return o
}

// hotThreshold is level l's hot threshold: -hot-min-hits, else the
// break-even.
func (t *totals) hotThreshold(l bucket.Level) int {
	if t.p.hotMinHits > 0 {
		return t.p.hotMinHits
	}
	return int(l.BreakEven())
}

// minutePieces is the expected minutes a batch of interval secs spans
// that hold at least one of a host's cold hits at rate c, over a uniform
// phase of the batch against the minute.
func minutePieces(secs, c float64) float64 {
	const steps = 240
	var sum float64
	for i := range steps {
		from := 60 * (float64(i) + 0.5) / steps // batch start within its minute
		left, at := secs, from
		for left > 0 {
			piece := math.Min(left, 60-math.Mod(at, 60))
			sum += -math.Expm1(-c * piece)
			left -= piece
			at += piece
		}
	}
	return sum / steps
}

// tailsLayout models the tails layout with sizes measured by
// measureTails (indexed by level).
func (t *totals) tailsLayout(sz [3]tailSizes) layout {
	var o layout
	n := float64(t.p.hosts)
	a := t.appliedEntry
	iv := t.p.interval.Seconds()
	for pi, l := range levels {
		bl := bucket.Level(pi)
		k := t.hotThreshold(bl)
		perDay := daySecs / l.bucketSecs
		// ws is the writer shards: a minute tail's writers are spread over
		// bucket.MinuteTailShards (bucket.Plan.Route), hosts/ws each; a
		// daily or monthly tail is sharded by page only.
		ws := 1
		if pi == int(bucket.Minute) {
			ws = min(bucket.MinuteTailShards, t.p.hosts)
		}
		wsf, perShard := float64(ws), t.p.hosts/ws
		var cold, entries, pagesSeen float64 // per host: cold hits/s; fleet: entry bytes per bucket
		for page := range t.pageHits {
			lam := t.rate(page)
			h := atLeast(k, lam*l.periodSecs)
			o.hotPages[pi] += h
			exists := touched(t.p.hosts, lam, l.bucketSecs)
			writers := n * touched(1, lam, l.bucketSecs)
			o.bytesDay[pi] += h * (exists*t.avgZero(pi, head) + writers*a) * perDay
			o.docsDay[pi] += h * exists * perDay
			o.writes[pi] += h * t.scale(float64(t.pageBatches[pi][page]))
			// Its entry in each writer shard that hit it.
			inShard := touched(perShard, lam, l.bucketSecs)
			cells := slots[pi].n * touched(perShard, lam, slots[pi].secs)
			entries += (1 - h) * wsf * (inShard*sz[pi].entry[page] + math.Max(0, cells-inShard)*sz[pi].cell)
			cold += (1 - h) * lam
			pagesSeen += touched(1, lam, l.periodSecs)
		}
		tr := t.tailRate()
		cold += tr
		pagesSeen += tr * l.periodSecs
		entries += n * tr * l.bucketSecs * sz[pi].tailEntry
		shards := ws
		if pi != int(bucket.Minute) {
			shards = min(max(int(math.Ceil(pagesSeen/pagesPerShard)), 1), bucket.MaxPlanShards)
		}
		o.shards[pi] = shards
		s := float64(shards)
		if cold > 0 {
			// Every shard's tail of every bucket period that has a cold
			// hit (fleet-wide); its applied entries are the hosts that
			// wrote it. A page shard takes cold/s of every host's cold
			// hits; a writer shard all of its hosts'.
			exists := touched(t.p.hosts, cold/s, l.bucketSecs)
			writers := n * touched(1, cold/s, l.bucketSecs)
			if ws > 1 {
				exists = touched(perShard, cold, l.bucketSecs)
				writers = float64(perShard) * touched(1, cold, l.bucketSecs)
			}
			o.docsDay[pi] += s * exists * perDay
			o.bytesDay[pi] += (entries + s*exists*(sz[pi].zero+writers*a)) * perDay
			o.tailDocBytes[pi] = entries/s + sz[pi].zero + writers*a
			// Writes: a host writes a tail in every batch holding one of
			// its cold hits for it: the minute's of its writer shard
			// (a batch spanning two minutes writes two), or each page
			// shard's.
			var perBatch float64
			if pi == int(bucket.Minute) {
				perBatch = minutePieces(iv, cold)
			} else {
				perBatch = s * -math.Expm1(-cold/s*iv)
			}
			o.writes[pi] += n * perBatch / iv
			// The busiest tail: the current minute's of one writer
			// shard, or one page shard's.
			busy := float64(perShard) * perBatch / iv
			if pi != int(bucket.Minute) {
				busy = n * -math.Expm1(-cold/s*iv) / iv
			}
			o.busiest[pi], o.busyTail[pi] = busy, true
		}
		// The busiest hot page's bucket, if busier than the tails.
		if b := t.busiestHot(pi, k); b > o.busiest[pi] {
			o.busiest[pi], o.busyTail[pi] = b, false
		}
	}
	return o
}

// busiestHot is busiest over the pages hot at level pi (threshold k)
// with probability at least 1/2.
func (t *totals) busiestHot(pi, k int) float64 {
	hot := func(page string) bool { return atLeast(k, t.rate(page)*levels[pi].periodSecs) >= 0.5 }
	s := float64(t.p.sample)
	var best float64
	if pi == 0 {
		for id, c := range t.minuteDocs {
			if v := float64(c) / s * float64(t.p.hosts) / minuteSecs; v > best && hot(pageOfID(id)) {
				best = v
			}
		}
		return best
	}
	span := t.sampleSecs() / s
	for pg, c := range t.pageBatches[pi] {
		if v := float64(c) / s * float64(t.p.hosts) / span; v > best && hot(pg) {
			best = v
		}
	}
	return best
}

// pageOfID is a minute bucket id's page: the id is "<minute>/<site><page>".
func pageOfID(id string) string {
	for i := 0; i < len(id); i++ {
		if id[i] == '/' {
			rest := id[i+1:]
			if len(rest) >= len(site) && rest[:len(site)] == site {
				return rest[len(site):]
			}
			return rest
		}
	}
	return id
}

// reportTails prints the two layouts side by side.
func reportTails(w io.Writer, t *totals, sz [3]tailSizes) {
	pg, tl := t.pagesLayout(), t.tailsLayout(sz)
	hitsDay := float64(t.p.hosts) * float64(t.p.rate) * daySecs
	thr := make([]any, 3)
	for pi := range 3 {
		thr[pi] = t.hotThreshold(bucket.Level(pi))
	}
	fmt.Fprintf(w, "\n## Layouts: pages (every page its own buckets) against tails (cold pages in tail documents)\n\n")
	fmt.Fprintf(w, "Hot threshold (hits a page needs on the proposing host in the plan period before): minute %d an hour, daily %d a day, monthly %d a month. Hot pages (expected, of %d): minute %.0f, daily %.0f, monthly %.0f; tail shards: daily %d, monthly %d.\n\n",
		append(thr, len(t.pageHits), tl.hotPages[0], tl.hotPages[1], tl.hotPages[2], tl.shards[1], tl.shards[2])...)
	fmt.Fprintf(w, "| level | bytes/day: pages | tails | tails/pages | documents/day: pages | tails | ratio | writes/s: pages | tails | ratio | busiest document, writes/s: pages | tails | ratio | one tail document at its period's end |\n")
	fmt.Fprintf(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	ratio := func(a, b float64) string {
		if b == 0 {
			return "–"
		}
		return fmt.Sprintf("×%.2f", a/b)
	}
	var busyP, busyT float64
	busyTail := false
	for pi := range 3 {
		what := "a bucket"
		if tl.busyTail[pi] {
			what = "a tail"
		}
		doc := "–"
		if tl.tailDocBytes[pi] > 0 {
			doc = si(tl.tailDocBytes[pi]) + "B"
			if tl.tailDocBytes[pi] > tailBound {
				doc += " (over 4 MiB: would spill)"
			}
		}
		fmt.Fprintf(w, "| %s | %sB | %sB | %s | %s | %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s |\n", passNames[pi],
			si(pg.bytesDay[pi]), si(tl.bytesDay[pi]), ratio(tl.bytesDay[pi], pg.bytesDay[pi]),
			si(pg.docsDay[pi]), si(tl.docsDay[pi]), ratio(tl.docsDay[pi], pg.docsDay[pi]),
			si(pg.writes[pi]), si(tl.writes[pi]), ratio(tl.writes[pi], pg.writes[pi]),
			si(pg.busiest[pi]), si(tl.busiest[pi]), what, ratio(tl.busiest[pi], pg.busiest[pi]), doc)
		if pg.busiest[pi] > busyP {
			busyP = pg.busiest[pi]
		}
		if tl.busiest[pi] > busyT {
			busyT, busyTail = tl.busiest[pi], tl.busyTail[pi]
		}
	}
	what := "a bucket"
	if busyTail {
		what = "a tail"
	}
	fmt.Fprintf(w, "| **all** | **%sB** | **%sB** | **%s** | %s | %s | %s | **%s** | **%s** | **%s** | **%s** | **%s** (%s) | **%s** | |\n",
		si(pg.sum(pg.bytesDay)), si(tl.sum(tl.bytesDay)), ratio(tl.sum(tl.bytesDay), pg.sum(pg.bytesDay)),
		si(pg.sum(pg.docsDay)), si(tl.sum(tl.docsDay)), ratio(tl.sum(tl.docsDay), pg.sum(pg.docsDay)),
		si(pg.sum(pg.writes)), si(tl.sum(tl.writes)), ratio(tl.sum(tl.writes), pg.sum(pg.writes)),
		si(busyP), si(busyT), what, ratio(busyT, busyP))
	fmt.Fprintf(w, "\nBytes per hit stored: pages %.3g B, tails %.3g B (%s hits a day).\n\n", pg.sum(pg.bytesDay)/hitsDay, tl.sum(tl.bytesDay)/hitsDay, si(hitsDay))
	fmt.Fprintf(w, "Pages layout: the simulation's figures above (bytes and documents as in the storage table; writes: one per bucket, batch and host, measured; busiest as in the writes table). Tails layout, modelled from the same sample with sizes from the builders (bucket.NewTail, Tail.Add, Tail.Whole, Tail.Zero): a page is hot in a plan period with the Poisson probability that the proposing host saw the threshold in the period before, and its bucket and tail entries are weighted by it; a tail entry holds one cell per slot (minute, hour, day) any host hit; cold hits spread evenly over the shards; a tail's applied entries are the hosts with a cold hit for it in its period. Writes: one per bucket or tail, batch and host (duplicate inserts, tail creation and plan finds left out in both). A tail over 4 MiB spills; spills are not modelled (their bytes counted as if in the tail).\n")
}
