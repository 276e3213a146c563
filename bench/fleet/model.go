package main

import "math"

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
	tailPages             int64
	pagesPerMinute        []int
	appliedEntry          int
}

func merge(p params, rs []*hostResult) *totals {
	t := &totals{p: p, pageHits: map[string]int64{}, minuteDocs: map[string]int64{}}
	for i := range t.pageBatches {
		t.pageBatches[i] = map[string]int64{}
		t.coarsePB[i] = map[string]int64{}
	}
	for _, r := range rs {
		t.flushes += r.flushes
		t.coarseN += r.coarseFlushes
		t.appliedEntry = r.appliedEntry
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
// each document its zero-filled size plus one applied entry per host that
// wrote it. Monthly documents are spread over the month's days.
func (t *totals) stored(l level) (docs, bytes [2]float64) {
	n := t.p.hosts
	perDay := daySecs / l.bucketSecs
	a := float64(t.appliedEntry)
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
