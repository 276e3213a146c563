package main

import (
	"math"
	"testing"
	"time"

	"github.com/logtally/logtally/bucket"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestAtLeast(t *testing.T) {
	for _, c := range []struct {
		k    int
		mu   float64
		want float64
	}{
		{0, 3, 1},
		{1, 0, 0},
		{1, 2, 1 - math.Exp(-2)},
		{2, 2, 1 - 3*math.Exp(-2)},         // 1 - P(0) - P(1)
		{3, 1.5, 1 - 3.625*math.Exp(-1.5)}, // 1 - (1 + 1.5 + 1.125)e^-1.5
	} {
		if got := atLeast(c.k, c.mu); !near(got, c.want) {
			t.Errorf("atLeast(%d, %g) = %g, want %g", c.k, c.mu, got, c.want)
		}
	}
	if got := atLeast(2, 1e6); got != 1 {
		t.Errorf("atLeast(2, 1e6) = %g, want 1", got)
	}
}

// TestScale checks the scaling of sampled sums to the fleet, the union of
// hosts for created buckets, and the busiest document.
func TestScale(t *testing.T) {
	tot := merge(params{hosts: 1000, sample: 2, interval: 10 * time.Second, coarse: time.Minute}, []*hostResult{
		{flushes: 6, coarseFlushes: 1, pageHits: map[string]int64{"/p/1": 600, "/p/2": 6},
			pageBatches:       [3]map[string]int64{{}, {"/p/1": 6, "/p/2": 3}, {}},
			coarsePageBatches: [3]map[string]int64{{}, {"/p/1": 1}, {}},
			minuteDocs:        map[string]int64{"x": 6}},
		{flushes: 6, coarseFlushes: 1, pageHits: map[string]int64{"/p/1": 600, "/p/2": 6},
			pageBatches:       [3]map[string]int64{{}, {"/p/1": 6, "/p/2": 3}, {}},
			coarsePageBatches: [3]map[string]int64{{}, {"/p/1": 1}, {}},
			minuteDocs:        map[string]int64{"x": 6}, tailPages: 120},
	})
	// 2 hosts x 60 s sampled: a sum of 120 is 1 per host-second.
	if got := tot.scale(120); got != 1000 {
		t.Errorf("scale(120) = %g, want 1000", got)
	}
	if got := tot.rate("/p/1"); got != 10 {
		t.Errorf("rate = %g, want 10 hits/s per host", got)
	}
	if got := tot.tailRate(); got != 1 {
		t.Errorf("tail rate = %g, want 1 per host-second", got)
	}
	// /p/1 is in every batch of every host: hosts/interval updates/s.
	if page, got := tot.busiest(1, false); page != "/p/1" || got != 100 {
		t.Errorf("busiest daily = %s %g, want /p/1 100", page, got)
	}
	if _, got := tot.busiest(1, true); got != 1000.0/60 {
		t.Errorf("busiest daily every minute = %g, want %g", got, 1000.0/60)
	}
	// The minute doc got 6 batches per host: 6000 updates in its minute.
	if _, got := tot.busiest(0, false); got != 100 {
		t.Errorf("busiest minute = %g, want 100", got)
	}
	// /p/2: 0.1 hits/s per host; a minute bucket exists with probability
	// 1-exp(-1000*0.1*60); the tail creates 1000 buckets/s per level.
	h, tl := tot.creations(levels[0])
	want := (1 + touched(1000, 0.1, 60)) / 60
	if !near(h, want) || tl != 1000 {
		t.Errorf("creations = %g, %g; want %g, 1000", h, tl, want)
	}
}

func TestSI(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 1.234: "1.23", 12.34: "12.3", 999: "999", 1234: "1.23k", 849_000: "849k", 5.02e11: "502G"} {
		if got := si(v); got != want {
			t.Errorf("si(%g) = %q, want %q", v, got, want)
		}
	}
}

// TestWritePath checks the write path's model on one sampled host of a
// 1000-host fleet: a page every host hits often (preallocated: known, 1
// operation per write), a rare page (mid-tail: created once by the first
// writer, a duplicate and an update for every other host's first write),
// and tail pages (1 operation each, against 3 or more on the three-step
// path).
func TestWritePath(t *testing.T) {
	p := params{hosts: 1000, sample: 1, interval: 10 * time.Second, coarse: time.Minute, period: 10 * time.Minute,
		preMinHits: 60, preRate: 1e12}
	// The window holds 9 whole minutes: the host wrote /p/1's 9 minute
	// buckets and 1 of /p/2's.
	r := &hostResult{flushes: 100, pageHits: map[string]int64{"/p/1": 10_000, "/p/2": 1}, tailPages: 100,
		minuteDocs: map[string]int64{}, minuteFirst: map[string]int64{"/p/1": 9, "/p/2": 1}}
	for i := range r.pageBatches {
		r.pageBatches[i] = map[string]int64{"/p/1": 100, "/p/2": 2}
		r.coarsePageBatches[i] = map[string]int64{}
		st := &r.passes[i]
		st.updates = [2]int64{102, 100}
		st.filterBytes = [2]int64{102 * 100, 100 * 100}
		st.updateBytes = [2]int64{102 * 200, 100 * 200}
		st.zeroBytes = [2]int64{102 * 1000, 100 * 1000}
		st.wholeBytes = [2]int64{102 * 1047, 100 * 1047}
		st.chunks, st.tailChunks, st.tailFindBytes, st.headFindBytes = 100, 100, 100*500, 0
	}
	tot := merge(p, []*hostResult{r})
	// 1000 s sampled: /p/1 10 hits/s per host, /p/2 0.001, 0.1 tail
	// pages/s; a sum of 1 over the sample is 1 per second in the fleet.
	o := tot.writePath(levels[0])
	pre, mid, tl := o[preClass], o[midClass], o[tailClass]
	if !near(pre.writes, 100) || pre.created != 0 || pre.dups != 0 || !near(pre.ops(), pre.writes) {
		t.Errorf("preallocated page: %+v, want 100 writes/s, 1 operation each", pre)
	}
	// /p/2: every host writes a given minute bucket with q = 1/9
	// (measured); the fleet creates one per minute (nearly surely), the
	// other first writes meet it.
	q := 1.0 / 9
	created := -math.Expm1(1000*math.Log1p(-q)) / 60
	if !near(mid.writes, 2) || !near(mid.first, 1000*q/60) || !near(mid.created, created) || !near(mid.dups, 1000*q/60-created) {
		t.Errorf("mid-tail page: %+v; want 2 writes, %g first, %g created, %g duplicates", mid, 1000*q/60, created, 1000*q/60-created)
	}
	if got := mid.ops(); !near(got, 2+mid.dups) || got/mid.writes < 1.9 {
		t.Errorf("mid-tail operations %g, want %g (nearly 2 per write)", got, 2+mid.dups)
	}
	// Daily buckets: the host's share is Poisson at the page's rate (86
	// hits a day: /p/2 is preallocated too).
	d := tot.writePath(levels[1])
	if want := 1000 * (1 + touched(1, 0.001, daySecs)) / daySecs; d[midClass].writes != 0 || !near(d[preClass].first, want) {
		t.Errorf("daily first writes %g (mid-tail writes %g), want %g", d[preClass].first, d[midClass].writes, want)
	}
	// Tail: 100 buckets/s created, 1 operation each; the three-step path
	// updates, finds, inserts and updates again.
	if !near(tl.writes, 100) || !near(tl.created, 100) || tl.dups != 0 || !near(tl.ops(), tl.writes) {
		t.Errorf("tail: %+v", tl)
	}
	if !near(tl.finds, 100) || !near(tl.opsOld()/tl.writes, 4) {
		t.Errorf("tail, three-step: %g finds, %g operations per write; want 100, 4", tl.finds, tl.opsOld()/tl.writes)
	}
	// Bytes: the tail's whole documents (1047 B) against the three-step
	// path's update, find, zero document and update again.
	if !near(tl.bytes, 100*1047) || !near(tl.bytesOld, 100*(300+500+1000+300)) {
		t.Errorf("tail bytes %g (three-step %g)", tl.bytes, tl.bytesOld)
	}
	// A rate too low for the buckets asked for: each host creates that
	// share of them, and the rest of its first writes meet duplicates.
	tot.p.preRate = tot.preallocate(levels[0], 60).perHost / 2
	if s := tot.preShare(); s > 0.5 || s <= 0 {
		t.Errorf("preShare = %g, want at most 1/2", s)
	}
	if o := tot.writePath(levels[0])[preClass]; o.dups <= 0 {
		t.Errorf("preallocated page with half the rate: no duplicates: %+v", o)
	}
}

func TestMinutePieces(t *testing.T) {
	// A 10 s batch spans two minutes one time in six; every piece holds a
	// hit at a high rate.
	if got := minutePieces(10, 1e9); !near(got, 7.0/6) {
		t.Errorf("minutePieces(10, dense) = %g, want 7/6", got)
	}
	// At a low rate, about one hit's chance per batch.
	if got := minutePieces(10, 1e-6); math.Abs(got-1e-5) > 1e-9 {
		t.Errorf("minutePieces(10, 1e-6) = %g, want 1e-5", got)
	}
}

// TestTailsLayout checks the tails model against the pages layout: with
// every page hot it is the pages layout; with every page cold its writes
// are one per tail, batch and host, and the busiest document is a
// minute's tail of one writer shard.
func TestTailsLayout(t *testing.T) {
	p := params{hosts: 1000, sample: 1, interval: 10 * time.Second, coarse: time.Minute, period: 10 * time.Minute}
	r := &hostResult{flushes: 100, pageHits: map[string]int64{"/p/1": 10_000},
		minuteDocs: map[string]int64{"202603101000/www.example.com/p/1": 6}, minuteFirst: map[string]int64{"/p/1": 9}}
	for i := range r.pageBatches {
		r.pageBatches[i] = map[string]int64{"/p/1": 100}
		r.coarsePageBatches[i] = map[string]int64{}
		st := &r.passes[i]
		st.updates = [2]int64{100, 0}
		st.zeroBytes = [2]int64{100 * 1000, 0}
	}
	var sz [3]tailSizes
	for pi := range sz {
		var err error
		if sz[pi], err = measureTails(bucket.Level(pi), r.pageHits, p.hosts); err != nil {
			t.Fatal(err)
		}
		if sz[pi].entry["/p/1"] <= 0 || sz[pi].zero <= 0 || (pi > 0 && sz[pi].cell <= 0) {
			t.Fatalf("level %d sizes %+v", pi, sz[pi])
		}
	}
	p.hotMinHits = 1
	tot := merge(p, []*hostResult{r})
	pg, hot := tot.pagesLayout(), tot.tailsLayout(sz)
	for pi := range 3 {
		if !near(hot.bytesDay[pi], pg.bytesDay[pi]) || !near(hot.docsDay[pi], pg.docsDay[pi]) || !near(hot.writes[pi], pg.writes[pi]) ||
			!near(hot.busiest[pi], pg.busiest[pi]) || hot.busyTail[pi] {
			t.Errorf("level %d, every page hot: tails %+v, pages %+v", pi, hot, pg)
		}
	}
	tot.p.hotMinHits = 1 << 40
	cold := tot.tailsLayout(sz)
	// /p/1: 10 hits/s per host, in every batch: each host writes the
	// minute's tail in about 7/6 pieces a batch (a piece of a fraction of
	// a second may hold no hit) and its daily and monthly tails (one
	// shard) once.
	want := [3]float64{1000 * minutePieces(10, 10) / 10, 100, 100}
	if want[0] < 116 || want[0] > 1000*7.0/6/10 {
		t.Errorf("minute tail writes %g, want about %g", want[0], 1000*7.0/6/10)
	}
	// The busiest: a minute's tail takes its writer shard's hosts, a
	// quarter (bucket.MinuteTailShards); the daily and monthly tails
	// every host's.
	const ws = bucket.MinuteTailShards
	busiest := [3]float64{want[0] / ws, want[1], want[2]}
	for pi := range 3 {
		if math.Abs(cold.writes[pi]-want[pi]) > 1e-6 || !cold.busyTail[pi] || math.Abs(cold.busiest[pi]-busiest[pi]) > 1e-6 {
			t.Errorf("level %d, every page cold: writes %g, busiest %g (tail %v); want %g, %g", pi, cold.writes[pi], cold.busiest[pi], cold.busyTail[pi], want[pi], busiest[pi])
		}
	}
	// A minute's tails: one per writer shard, each the page's entry, an
	// empty tail and its 250 hosts' applied entries; 1440 minutes a day.
	if w := 1440 * ws * (sz[0].entry["/p/1"] + sz[0].zero + 1000/ws*tot.appliedEntry); !near(cold.bytesDay[0], w) || !near(cold.docsDay[0], 1440*ws) {
		t.Errorf("minute tails: %g bytes, %g documents a day; want %g, %d", cold.bytesDay[0], cold.docsDay[0], w, 1440*ws)
	}
}
