package main

import (
	"math"
	"testing"
	"time"
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
