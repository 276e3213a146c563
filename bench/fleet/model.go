package main

import (
	"math"
	"time"

	"github.com/logtally/logtally/bucket"
)

// Periods, in seconds, of the bucket levels and of preallocation.
const (
	minuteSecs = 60
	hourSecs   = 3600
	daySecs    = 86400
	monthSecs  = 30 * daySecs
)

// totals are the sampled hosts' measurements merged.
type totals struct {
	p                     params
	flushes, coarseN      int // flushes and coarse flushes, summed over sampled hosts
	genHits               [2]int64
	passes, coarse        [3]passStats
	pageHits              map[string]int64
	pageBatches, coarsePB [3]map[string]int64
	minuteDocs            map[string]int64
	minuteFirst           map[string]int64 // per page, (host, minute doc) pairs written inside the window
	tailPages             int64
	pagesPerMinute        []int
	appliedEntry          float64 // mean bytes of one writer's applied entry, numbered 1 to hosts
	appliedEntryByID      float64 // the same by buffer id, before writer numbers
}

func merge(p params, rs []*hostResult) *totals {
	t := &totals{p: p, pageHits: map[string]int64{}, minuteDocs: map[string]int64{}, minuteFirst: map[string]int64{}}
	for i := range t.pageBatches {
		t.pageBatches[i] = map[string]int64{}
		t.coarsePB[i] = map[string]int64{}
	}
	t.appliedEntry = meanNumberedEntry(p.hosts)
	for _, r := range rs {
		t.flushes += r.flushes
		t.coarseN += r.coarseFlushes
		t.appliedEntryByID = float64(r.appliedEntryByID)
		t.tailPages += r.tailPages
		for c := range 2 {
			t.genHits[c] += r.genHits[c]
		}
		for pi := range 3 {
			addStats(&t.passes[pi], &r.passes[pi])
			addStats(&t.coarse[pi], &r.coarsePasses[pi])
			for k, v := range r.pageBatches[pi] {
				t.pageBatches[pi][k] += v
			}
			for k, v := range r.coarsePageBatches[pi] {
				t.coarsePB[pi][k] += v
			}
		}
		for k, v := range r.pageHits {
			t.pageHits[k] += v
		}
		for k, v := range r.minuteDocs {
			t.minuteDocs[k] += v
		}
		for k, v := range r.minuteFirst {
			t.minuteFirst[k] += v
		}
		for _, n := range r.pagesPerMinute {
			t.pagesPerMinute = append(t.pagesPerMinute, n)
		}
	}
	return t
}

func addStats(a, b *passStats) {
	for c := range 2 {
		a.updates[c] += b.updates[c]
		a.filterBytes[c] += b.filterBytes[c]
		a.updateBytes[c] += b.updateBytes[c]
		a.zeroBytes[c] += b.zeroBytes[c]
		a.wholeBytes[c] += b.wholeBytes[c]
	}
	a.chunks += b.chunks
	a.tailChunks += b.tailChunks
	a.tailFindBytes += b.tailFindBytes
	a.headFindBytes += b.headFindBytes
}

// sampleSecs is the host-seconds simulated: per-host rates are sums over
// the sample divided by it, and cluster rates those times hosts.
func (t *totals) sampleSecs() float64 { return float64(t.flushes) * t.p.interval.Seconds() }

// scale turns a sum over the sampled hosts into a cluster-wide rate per
// second: hosts are independent and alike, so the cluster does hosts
// times a sampled host's average.
func (t *totals) scale(sum float64) float64 { return float64(t.p.hosts) * sum / t.sampleSecs() }

// rate is a head page's hits per second on one host.
func (t *totals) rate(page string) float64 { return float64(t.pageHits[page]) / t.sampleSecs() }

// tailRate is tail pages per second on one host (each hit once).
func (t *totals) tailRate() float64 { return float64(t.tailPages) / t.sampleSecs() }

// touched is the probability that at least one of n hosts, each hitting
// a page at lambda per second (Poisson), hits it within secs.
func touched(n int, lambda, secs float64) float64 {
	return -math.Expm1(-float64(n) * lambda * secs)
}

// atLeast is P(X >= k) for X Poisson with mean mu.
func atLeast(k int, mu float64) float64 {
	if k <= 0 {
		return 1
	}
	if float64(k) > mu+40*math.Sqrt(mu)+40 {
		return 0 // 40 standard deviations above the mean, and more
	}
	// 1 - P(X <= k-1), summing the terms in log space for large mu.
	var cdf float64
	for i := range k {
		cdf += math.Exp(float64(i)*math.Log(mu) - mu - lgamma(float64(i)+1))
	}
	if mu == 0 {
		cdf = 1
	}
	return math.Max(0, 1-cdf)
}

func lgamma(x float64) float64 { v, _ := math.Lgamma(x); return v }

// level is a bucket level: its pass, the span of one bucket and the
// period whose activity preallocates the next period's buckets.
type level struct {
	pass           int
	bucketSecs     float64 // 60, a day, a month
	periodSecs     float64 // an hour (minute buckets), a day, a month
	bucketsPerPage float64 // buckets of one page per period
}

var levels = [3]level{
	{0, minuteSecs, hourSecs, hourSecs / minuteSecs},
	{1, daySecs, daySecs, 1},
	{2, monthSecs, monthSecs, 1},
}

// avgZero is the mean zero-filled document size of pass pi, class c.
func (t *totals) avgZero(pi, c int) float64 {
	st := &t.passes[pi]
	if st.updates[c] == 0 {
		return 0
	}
	return float64(st.zeroBytes[c]) / float64(st.updates[c])
}

// avgUpdate is the mean step-1 update (filter + update) of pass pi, class c.
func (t *totals) avgUpdate(pi, c int) float64 {
	st := &t.passes[pi]
	if st.updates[c] == 0 {
		return 0
	}
	return float64(st.filterBytes[c]+st.updateBytes[c]) / float64(st.updates[c])
}

// creations returns new buckets per second, cluster-wide, of level l by
// class: a head page's bucket is created when the first host hits it; each
// tail hit creates one bucket per level.
func (t *totals) creations(l level) (headRate, tailRate float64) {
	for page := range t.pageHits {
		headRate += touched(t.p.hosts, t.rate(page), l.bucketSecs) / l.bucketSecs
	}
	return headRate, float64(t.p.hosts) * t.tailRate()
}

// prealloc is the effect of preallocating level l's buckets for pages with
// at least k hits in a period on a host.
type prealloc struct {
	attempts  float64 // buckets sent per second, cluster-wide (duplicates included)
	perHost   float64 // buckets per second one host sends
	created   float64 // distinct buckets created per second
	used      float64 // of those, buckets that get a hit
	flushPath float64 // inserts left on the flush path (three-step), per second
}

func (t *totals) preallocate(l level, k int) prealloc {
	n := t.p.hosts
	var r prealloc
	for page := range t.pageHits {
		lam := t.rate(page)
		pk := atLeast(k, lam*l.periodSecs) // one host preallocates it
		anyHost := -math.Expm1(float64(n) * math.Log1p(-math.Min(pk, 1-1e-15)))
		if pk >= 1-1e-15 {
			anyHost = 1
		}
		hit := touched(n, lam, l.bucketSecs)
		r.attempts += float64(n) * pk * l.bucketsPerPage / l.periodSecs
		r.created += anyHost * l.bucketsPerPage / l.periodSecs
		r.used += anyHost * hit * l.bucketsPerPage / l.periodSecs
		r.flushPath += (1 - anyHost) * hit / l.bucketSecs
	}
	tr := t.tailRate()
	if k <= 1 {
		// Every tail page preallocates its next period's buckets, which
		// are never hit: the page is seen once.
		r.attempts += float64(n) * tr * l.bucketsPerPage
		r.created += float64(n) * tr * l.bucketsPerPage
	}
	r.flushPath += float64(n) * tr
	r.perHost = r.attempts / float64(n)
	return r
}

// stored is bytes (and documents) added per day by level l, by class:
// each document its zero-filled size plus one applied entry of entry
// bytes per host that wrote it. Monthly documents are spread over the
// month's days.
func (t *totals) stored(l level, entry float64) (docs, bytes [2]float64) {
	n := t.p.hosts
	perDay := daySecs / l.bucketSecs
	a := entry
	for page := range t.pageHits {
		lam := t.rate(page)
		exists := touched(n, lam, l.bucketSecs)
		writers := float64(n) * touched(1, lam, l.bucketSecs)
		docs[head] += exists * perDay
		bytes[head] += (exists*t.avgZero(l.pass, head) + writers*a) * perDay
	}
	tails := float64(n) * t.tailRate() * daySecs
	docs[tail] = tails
	bytes[tail] = tails * (t.avgZero(l.pass, tail) + a)
	return docs, bytes
}

// busiest returns the busiest document's updates per second of pass pi,
// written every interval (coarse false) or every coarse interval.
func (t *totals) busiest(pi int, coarse bool) (page string, perSec float64) {
	s := float64(t.p.sample)
	if pi == 0 {
		for id, n := range t.minuteDocs {
			if v := float64(n) / s * float64(t.p.hosts) / minuteSecs; v > perSec {
				page, perSec = id, v
			}
		}
		return page, perSec
	}
	m, span := t.pageBatches[pi], t.sampleSecs()/s
	if coarse {
		m, span = t.coarsePB[pi], float64(t.coarseN)*t.p.coarse.Seconds()/s
	}
	for pg, n := range m {
		if v := float64(n) / s * float64(t.p.hosts) / span; v > perSec {
			page, perSec = pg, v
		}
	}
	return page, perSec
}

// coarseScale is scale for the coarse stream's sums.
func (t *totals) coarseScale(sum float64) float64 {
	return float64(t.p.hosts) * sum / (float64(t.coarseN) * t.p.coarse.Seconds())
}

// The flusher's known set (flusher/known.go, unexported there): a host
// remembers at most knownMax buckets per level, each until knownKeep
// seconds of log time after its bucket's end.
const knownMax = 1 << 17

var knownKeep = [3]float64{600, 6 * hourSecs, 2 * daySecs}

// Write-path classes of pages, per level: head pages that reach
// preallocate_min_hits on a host in a period (preallocated), head pages
// below it (the mid tail), pages seen once (the tail).
const (
	preClass = iota
	midClass
	tailClass
)

var writeClassNames = [3]string{"head (preallocated)", "mid-tail (below min hits)", "tail (seen once)"}

// pathOps is one level's and class's writes, cluster-wide per second, on
// the write path (a bucket the host has not written or preallocated is
// inserted whole; the others take the guarded update) and on the
// three-step path before it (a guarded update for every bucket; for one
// missing, a find, an insert zero-filled and the update again).
type pathOps struct {
	writes  float64 // bucket writes: one per bucket, batch and host
	first   float64 // of them, a host's first write of the bucket
	created float64 // buckets created by a flush (whole inserts that succeed; three-step inserts)
	dups    float64 // whole inserts meeting a duplicate key, then a guarded update
	finds   float64 // three-step path: finds
	// bytes and bytesOld are the BSON sent per second on each path.
	bytes, bytesOld float64
	// entries is the known-set entries one host needs for this class
	// (buckets written or preallocated, ending within knownKeep of the
	// latest), about.
	entries float64
}

func (o *pathOps) add(b pathOps) {
	o.writes += b.writes
	o.first += b.first
	o.created += b.created
	o.dups += b.dups
	o.finds += b.finds
	o.bytes += b.bytes
	o.bytesOld += b.bytesOld
	o.entries += b.entries
}

// ops is the write path's operations: one per bucket write, plus the
// duplicate insert before an update.
func (o pathOps) ops() float64 { return o.writes + o.dups }

// updates is the write path's guarded updates.
func (o pathOps) updates() float64 { return o.writes - o.created }

// opsOld is the three-step path's: one update per bucket write, and for a
// bucket created by a flush its insert and second update, and the finds.
func (o pathOps) opsOld() float64 { return o.writes + 2*o.created + o.finds }

// opsForgetful is the write path's operations if hosts remembered no
// bucket (a full known set): every write tries the insert first, and all
// but the creating ones meet a duplicate.
func (o pathOps) opsForgetful() float64 { return 2*o.writes - o.created }

// avgWhole is the mean whole document size of pass pi, class c.
func (t *totals) avgWhole(pi, c int) float64 {
	st := &t.passes[pi]
	if st.updates[c] == 0 {
		return 0
	}
	return float64(st.wholeBytes[c]) / float64(st.updates[c])
}

// preShare is the share of the buckets a host's preallocator is asked
// for (all levels at preallocate_min_hits) that it creates at
// preallocate_rate: it sends at the rate and drops the buckets whose
// period has begun, so past the rate only rate/demand of them are made
// (the dropped ones taken evenly from all pages, an approximation).
func (t *totals) preShare() float64 {
	var demand float64
	for _, l := range levels {
		demand += t.preallocate(l, t.p.preMinHits).perHost
	}
	if demand <= t.p.preRate {
		return 1
	}
	return t.p.preRate / demand
}

// windowMinutes is the whole minutes inside every sampled host's run
// (the window of minuteDocs and minuteFirst).
func (t *totals) windowMinutes() float64 {
	return float64((t.p.period - t.p.interval) / time.Minute)
}

// writeShare is the probability that one host writes a given bucket of
// page at level l: for minute buckets measured (the minute docs inside the
// window each host wrote, which the limiter shapes), else Poisson at the
// page's measured rate.
func (t *totals) writeShare(l level, page string) float64 {
	if l.pass == 0 && t.windowMinutes() > 0 && t.minuteFirst != nil {
		return math.Min(1, float64(t.minuteFirst[page])/(float64(t.p.sample)*t.windowMinutes()))
	}
	return touched(1, t.rate(page), l.bucketSecs)
}

// writePath models level l's writes by class. Each host writes a bucket
// in every batch holding its page's hits (measured); its first write of
// the bucket is a whole insert unless it preallocated it (then the
// bucket is known: an update). A host writes a given bucket with
// probability writeShare, independently of the other hosts. The insert creates the bucket when no
// host preallocated it and no other host wrote it before (one creation
// per bucket any host writes, the first writer); otherwise it meets a
// duplicate and the update follows. Later writes are updates. Hosts
// preallocate a page's bucket independently with probability pk (at
// least preallocate_min_hits hits in the period before, Poisson) times
// preShare; hits are Poisson at each page's measured per-host rate. The
// known set is assumed to hold every bucket (see entries); the
// three-step fallback (a bucket missing after an update: expired, or a
// hash collision) is not modelled.
func (t *totals) writePath(l level) [3]pathOps {
	var out [3]pathOps
	n := float64(t.p.hosts)
	span := l.bucketSecs
	share := t.preShare()
	pb := t.pageBatches[l.pass]
	for page := range t.pageHits {
		lam := t.rate(page)
		pk := atLeast(t.p.preMinHits, lam*l.periodSecs)
		c := preClass
		if pk < 0.5 {
			c = midClass
		}
		pe := pk * share
		q := t.writeShare(l, page)
		none := math.Exp(n * math.Log1p(-math.Min(pe, 1-1e-15)))
		if pe >= 1-1e-15 {
			none = 0
		}
		anyHost := 1.0 // some host writes the bucket
		if q < 1 {
			anyHost = -math.Expm1(n * math.Log1p(-q))
		}
		o := &out[c]
		o.writes += t.scale(float64(pb[page]))
		o.first += n * q / span
		created := none * anyHost / span
		o.created += created
		o.dups += math.Max(0, n*(1-pe)*q/span-created)
		o.entries += (1 - (1-pe)*(1-q)) / span * (knownKeep[l.pass] + span)
	}
	st := &t.passes[l.pass]
	tr := t.tailRate()
	out[tailClass] = pathOps{
		writes: t.scale(float64(st.updates[tail])), first: n * tr, created: n * tr,
		entries: tr * (knownKeep[l.pass] + span),
	}
	// The three-step path's finds: one per chunk holding a missing
	// bucket. A chunk with a tail bucket always has one; head chunks at
	// most one each, shared by the head classes in proportion.
	out[tailClass].finds = t.scale(float64(st.tailChunks))
	tailFindBytes := t.scale(float64(st.tailFindBytes))
	var headFinds, headFindBytes float64
	headCreated := out[preClass].created + out[midClass].created
	if headChunks := st.chunks - st.tailChunks; headChunks > 0 {
		headFinds = min(headCreated, t.scale(float64(headChunks)))
		headFindBytes = headFinds * float64(st.headFindBytes) / float64(headChunks)
	}
	for c := range out {
		o := &out[c]
		sc, findBytes := head, 0.0
		switch {
		case c == tailClass:
			sc, findBytes = tail, tailFindBytes
		case headCreated > 0:
			o.finds = headFinds * o.created / headCreated
			findBytes = headFindBytes * o.created / headCreated
		}
		upd, whole, zero := t.avgUpdate(l.pass, sc), t.avgWhole(l.pass, sc), t.avgZero(l.pass, sc)
		o.bytes = o.updates()*upd + (o.created+o.dups)*whole
		o.bytesOld = o.writes*upd + findBytes + o.created*(zero+upd)
	}
	return out
}

// meanNumberedEntry is the mean size of the applied entries of writers 1
// to hosts (bucket.NumberedGuard): the number's digits vary.
func meanNumberedEntry(hosts int) float64 {
	sum := 0
	for n := 1; n <= hosts; n++ {
		sum += bucket.NumberedGuard(int64(n), 1).EntryBytes()
	}
	return float64(sum) / float64(max(hosts, 1))
}
