// Command fleet estimates what a fleet of logtally hosts asks of a
// (sharded) MongoDB, without a database. Each sampled host draws Zipf
// traffic over -pages pages at -rate hits/s (plus, with -tail, a share of
// hits on pages seen once), writes it as combined log lines through the
// real aggregator (aggregate.New, with the parser and the
// max_pages_per_minute limiter) into a real buffer, seals a batch every
// -interval and turns it into exactly the bucket updates the flusher
// would send (PlanBatch, plan.go: the builders the flusher writes with, package bucket).
//
// Simulating every host is too much CPU, so -sample hosts are simulated
// for -period of log time, each with its own random seed and flush phase,
// and the per-host figures are scaled to -hosts: hosts are assumed
// independent and alike (same traffic distribution, one site behind a load
// balancer). Figures that depend on the union of hosts (buckets created,
// the busiest document, bytes stored) use each page's per-host hit rate
// measured in the sample, with Poisson arrivals: a bucket spanning S
// seconds of a page with per-host rate r exists with probability
// 1-exp(-hosts*r*S) and holds hosts*(1-exp(-r*S)) applied entries.
//
// Which bucket writes are whole inserts (a bucket the host has not
// written or preallocated), duplicates (another host or preallocation
// created it first) or guarded updates is modelled per page (writePath,
// model.go) at -prealloc-min-hits and -prealloc-rate, beside the
// three-step path it replaced: operations per bucket written, by class.
//
// Last, the tails layout (cold pages' counts in per-site tail documents,
// docs/buckets.md) is modelled from the same sample beside the pages
// layout measured (tails.go, with its approximations): bytes and
// documents stored per day, writes per second and the busiest document,
// with the ratio tails/pages; -hot-min-hits sets the hot threshold (0:
// each level's break-even).
//
//	go run ./bench/fleet -hosts 1000 -pages 10000 -rate 1000 -interval 10s
//	go run ./bench/fleet -interval 60s -tail 0.3
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/flusher"
)

func main() {
	var p params
	flag.IntVar(&p.hosts, "hosts", 1000, "hosts in the fleet")
	flag.IntVar(&p.pages, "pages", 10_000, "distinct pages of Zipf popularity")
	flag.IntVar(&p.rate, "rate", 1000, "hits per second per host")
	flag.IntVar(&p.sample, "sample", 4, "hosts simulated through the real code (at most 64)")
	flag.DurationVar(&p.interval, "interval", 10*time.Second, "flush.interval")
	flag.DurationVar(&p.coarse, "coarse", 5*time.Minute, "interval of the daily and monthly passes in the proposed knob (a multiple of -interval)")
	flag.DurationVar(&p.period, "period", 10*time.Minute, "log time simulated per sampled host")
	flag.Float64Var(&p.zipf, "zipf", 1.0, "Zipf exponent of page popularity")
	flag.Float64Var(&p.tail, "tail", 0, "share of hits on pages seen once (0.3: 30%)")
	flag.IntVar(&p.maxPages, "max-pages", 0, "max_pages_per_minute (0: no bound)")
	flag.IntVar(&p.maxOps, "max-ops", 1000, "flush.max_ops")
	flag.Uint64Var(&p.seed, "seed", 1, "random seed")
	flag.IntVar(&p.preMinHits, "prealloc-min-hits", 60, "preallocate_min_hits of the write-path tables (60: the default before tails)")
	flag.Float64Var(&p.preRate, "prealloc-rate", flusher.DefaultPreallocateRate, "preallocate_rate (buckets per second per host) of the write-path tables")
	flag.IntVar(&p.hotMinHits, "hot-min-hits", 0, "hits a page needs on a host in a plan period to be hot in the tails layout (0: each level's break-even, as preallocate_min_hits unset)")
	minHits := flag.String("min-hits", "1,2,3,10,100", "preallocate_min_hits values to compare")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to `file`")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "fleet:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	ks, err := parseInts(*minHits)
	if err == nil {
		err = check(p)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(2)
	}
	t, took, err := simulate(p)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
	report(os.Stdout, t, ks, took)
	var sz [3]tailSizes
	for pi := range sz {
		if sz[pi], err = measureTails(bucket.Level(pi), t.pageHits, p.hosts); err != nil {
			fmt.Fprintln(os.Stderr, "fleet:", err)
			os.Exit(1)
		}
	}
	reportTails(os.Stdout, t, sz)
}

func parseInts(s string) ([]int, error) {
	var ks []int
	for f := range strings.SplitSeq(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("-min-hits: %q is not a positive integer", f)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

func check(p params) error {
	switch {
	case p.hosts < 1 || p.pages < 1 || p.rate < 1:
		return fmt.Errorf("-hosts, -pages and -rate must be positive")
	case p.sample < 1 || p.sample > 64 || p.sample > p.hosts:
		return fmt.Errorf("-sample must be 1 to 64 and at most -hosts")
	case p.interval < time.Second || p.interval%time.Second != 0:
		return fmt.Errorf("-interval must be whole seconds")
	case p.coarse < p.interval || p.coarse%p.interval != 0:
		return fmt.Errorf("-coarse must be a multiple of -interval")
	case p.period < 2*p.coarse || p.period%p.coarse != 0 || p.period < p.interval+2*time.Minute:
		return fmt.Errorf("-period must be a multiple of -coarse, at least twice it, and hold two whole minutes after one interval")
	case p.tail < 0 || p.tail >= 1:
		return fmt.Errorf("-tail must be in [0, 1)")
	case p.zipf <= 0:
		return fmt.Errorf("-zipf must be positive")
	case p.hotMinHits < 0:
		return fmt.Errorf("-hot-min-hits must not be negative")
	case p.preMinHits < 1 || p.preRate <= 0:
		return fmt.Errorf("-prealloc-min-hits and -prealloc-rate must be positive")
	}
	return nil
}

// simulate runs the sampled hosts in parallel and merges their results.
func simulate(p params) (*totals, time.Duration, error) {
	dir, err := os.MkdirTemp("", "logtally-fleet-")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(dir)
	cdf := zipfCDF(p.pages, p.zipf)
	// 10:00 UTC: the run stays within one day and one month.
	base := time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)
	began := time.Now()
	results := make([]*hostResult, p.sample)
	errs := make([]error, p.sample)
	var wg sync.WaitGroup
	for h := range p.sample {
		wg.Go(func() {
			results[h], errs[h] = simulateHost(context.Background(), p, h, dir, cdf, base)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, 0, err
		}
	}
	return merge(p, results), time.Since(began), nil
}

var passNames = [3]string{"minute", "daily", "monthly"}

// report prints the tables (GitHub markdown).
func report(w io.Writer, t *totals, ks []int, took time.Duration) {
	p := t.p
	fmt.Fprintf(w, "## %d hosts × %d pages (Zipf %.2g) × %d hits/s per host, flush every %s", p.hosts, p.pages, p.zipf, p.rate, p.interval)
	if p.tail > 0 {
		fmt.Fprintf(w, ", %.0f%% of hits on pages seen once", 100*p.tail)
	}
	if p.maxPages > 0 {
		fmt.Fprintf(w, ", max_pages_per_minute %d", p.maxPages)
	}
	fmt.Fprintf(w, "\n\nMethod: %d hosts simulated for %s of log time each (%d batches, %.1f M lines) through the real parser, aggregator, buffer and PlanBatch (the flusher's builders, package bucket; %.0f s); per-host figures × %d hosts (hosts independent, same distribution, one site). Buckets created, applied entries and the busiest document use each page's per-host rate measured in the sample (Poisson).\n\n",
		p.sample, p.period, t.flushes, float64(t.genHits[0]+t.genHits[1])/1e6, took.Seconds(), p.hosts)

	// Per host.
	fmt.Fprintf(w, "Per host and batch (measured): %s hits", si(float64(t.genHits[0]+t.genHits[1])/float64(t.flushes)))
	for pi := range 3 {
		st := &t.passes[pi]
		u := float64(st.updates[0]+st.updates[1]) / float64(t.flushes)
		fmt.Fprintf(w, "; %s %s bucket writes in %.1f chunks", passNames[pi], si(u), float64(st.chunks)/float64(t.flushes))
	}
	fmt.Fprintf(w, ". Mean update (filter + update BSON): minute %.0f B, daily %.0f B, monthly %.0f B. Zero-filled document: minute %.0f B, daily %.0f B, monthly %.0f B; whole document (bucket.Doc.Whole): minute %.0f B, daily %.0f B, monthly %.0f B; applied entry %.1f B per host (numbered).\n\n",
		t.avgUpdate(0, head), t.avgUpdate(1, head), t.avgUpdate(2, head), t.avgZero(0, head), t.avgZero(1, head), t.avgZero(2, head),
		t.avgWhole(0, head), t.avgWhole(1, head), t.avgWhole(2, head), t.appliedEntry)

	// Write rates.
	pre := make([]prealloc, 3)
	paths := make([][3]pathOps, 3)
	for pi, l := range levels {
		pre[pi] = t.preallocate(l, p.preMinHits)
		paths[pi] = t.writePath(l)
	}
	classes := []int{head}
	if p.tail > 0 || t.tailPages > 0 {
		classes = []int{head, tail}
	}
	share := t.preShare()
	fmt.Fprintf(w, "Cluster-wide writes, daily and monthly passes in every batch (as today); preallocate_min_hits %d, preallocate_rate %g (each host creates %.0f%% of the buckets it is asked for):\n\n", p.preMinHits, p.preRate, 100*share)
	fmt.Fprintf(w, "| pass | pages | bucket writes/s | operations/s | whole inserts/s: created (duplicate) | guarded updates/s | bytes sent/s | preallocation inserts/s sent (distinct) | busiest document, updates/s |\n")
	fmt.Fprintf(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	var sum [2]pathOps
	var sumPre [2]struct{ sent, made float64 }
	for pi := range levels {
		for _, c := range classes {
			var o pathOps
			preSent, preMade := pre[pi].attempts*share, pre[pi].created*share
			if c == tail {
				o = paths[pi][tailClass]
				preSent, preMade = 0, 0
			} else {
				o = paths[pi][preClass]
				o.add(paths[pi][midClass])
			}
			busy := "–"
			if c == head {
				_, b := t.busiest(pi, false)
				busy = si(b)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s (%s) | %s | %sB | %s (%s) | %s |\n", passNames[pi], className(c),
				si(o.writes), si(o.ops()), si(o.created), si(o.dups), si(o.updates()), si(o.bytes), si(preSent), si(preMade), busy)
			sum[c].add(o)
			sumPre[c].sent += preSent
			sumPre[c].made += preMade
		}
	}
	for _, c := range classes {
		s := sum[c]
		fmt.Fprintf(w, "| **all** | %s | **%s** | **%s** | %s (%s) | %s | **%sB** | %s (%s) | |\n", className(c),
			si(s.writes), si(s.ops()), si(s.created), si(s.dups), si(s.updates()), si(s.bytes), si(sumPre[c].sent), si(sumPre[c].made))
	}
	fmt.Fprintf(w, "\nA bucket write is one bucket of one batch on one host (measured). The model: a host inserts a bucket whole on its first write of it unless it preallocated it; the insert creates the bucket if no host preallocated it and no other host wrote it before, else it meets a duplicate key and the guarded update follows; later writes are guarded updates (Poisson arrivals at each page's measured per-host rate; hosts preallocate independently). bytes sent/s: BSON of the updates' filters and updates and of the whole documents inserted, duplicates included (not wire framing). Preallocation columns: a page's next hour of minute buckets, next day's and next month's bucket, after at least %d hits on the host in the current one, scaled by the share above; every host sends its own insertMany, duplicates included.\n\n", p.preMinHits)

	// Operations per bucket written, by class, against the three-step path.
	fmt.Fprintf(w, "Operations per bucket written, by class: the write path (whole inserts) against the three-step path before it (guarded update; for a missing bucket a find per chunk, an insert zero-filled, the update again), same traffic and preallocation:\n\n")
	fmt.Fprintf(w, "| pass | class | bucket writes/s | first writes on a host/s | created by a flush/s | duplicate inserts/s | operations/s | per bucket write | three-step: operations/s | per bucket write | bytes sent/s (three-step) | per bucket write if no bucket is remembered |\n")
	fmt.Fprintf(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	var all [3]pathOps
	var grand pathOps
	for pi := range levels {
		for c := range 3 {
			o := paths[pi][c]
			all[c].add(o)
			grand.add(o)
			if o.writes == 0 {
				continue
			}
			writeOpsRow(w, passNames[pi], writeClassNames[c], o)
		}
	}
	for c := range 3 {
		if all[c].writes > 0 {
			writeOpsRow(w, "**all**", writeClassNames[c], all[c])
		}
	}
	writeOpsRow(w, "**all**", "all", grand)
	fmt.Fprintf(w, "\nhead (preallocated): pages a host has at least %d hits of in the period before (hour, day, month) with probability at least 1/2; mid-tail: the other Zipf pages. A known bucket costs 1 operation per write; a bucket new to the fleet 1 (the whole insert that creates it); a host's first write of a bucket another host created first, or preallocated, 2 (the duplicate, the update).\n\n", p.preMinHits)
	fmt.Fprintf(w, "Known-set entries one host needs (buckets written or preallocated, kept an hour, two days, two months after their end; about): minute %s, daily %s, monthly %s; the flusher keeps at most %s per level. The model assumes every bucket is remembered; where a level needs more, buckets past the bound are not remembered and each of their writes costs 2 operations (the last column is that worst case, every bucket forgotten).\n\n",
		si(sumEntries(paths[0])), si(sumEntries(paths[1])), si(sumEntries(paths[2])), si(knownMax))

	// The knob: daily and monthly passes every coarse interval.
	fmt.Fprintf(w, "Daily and monthly passes written every %s instead (minute pass unchanged, every %s):\n\n", p.coarse, p.interval)
	fmt.Fprintf(w, "| pass | bucket writes/s | bytes of their updates/s | busiest document, updates/s | vs every batch |\n| --- | ---: | ---: | ---: | ---: |\n")
	for pi := 1; pi < 3; pi++ {
		st := &t.coarse[pi]
		upd := t.coarseScale(float64(st.updates[0] + st.updates[1]))
		bytes := t.coarseScale(float64(st.filterBytes[0] + st.filterBytes[1] + st.updateBytes[0] + st.updateBytes[1]))
		_, b := t.busiest(pi, true)
		_, b0 := t.busiest(pi, false)
		u0 := t.scale(float64(t.passes[pi].updates[0] + t.passes[pi].updates[1]))
		fmt.Fprintf(w, "| %s | %s | %sB | %s | updates ÷%.1f, busiest ÷%.1f |\n", passNames[pi], si(upd), si(bytes), si(b), u0/upd, b0/b)
	}

	var base float64
	for pi := range 3 {
		base += t.scale(float64(t.passes[pi].updates[0] + t.passes[pi].updates[1]))
	}
	knob := t.scale(float64(t.passes[0].updates[0]+t.passes[0].updates[1])) + t.coarseScale(float64(
		t.coarse[1].updates[0]+t.coarse[1].updates[1]+t.coarse[2].updates[0]+t.coarse[2].updates[1]))
	fmt.Fprintf(w, "\nBucket writes/s, all passes: %s as today, %s with daily and monthly every %s (÷%.1f).\n", si(base), si(knob), p.coarse, base/knob)

	// Storage.
	fmt.Fprintf(w, "\nBytes stored per day (BSON data size, before compression and indexes; a document is its zero-filled size plus one applied entry per host that wrote it: %.1f bytes numbered (writers 1 to %d), as written now, against %.0f bytes by buffer id, as before writer numbers; monthly documents spread over 30 days):\n\n", t.appliedEntry, p.hosts, t.appliedEntryByID)
	fmt.Fprintf(w, "| level | pages | documents/day | mean document | bytes/day | bytes/day before (guard by id) | applied entries' share now (before) |\n| --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
	var total, totalOld, zeroOnly [2]float64
	for pi, l := range levels {
		docs, bytes := t.stored(l, t.appliedEntry)
		_, old := t.stored(l, t.appliedEntryByID)
		_, zero := t.stored(l, 0)
		for _, c := range classes {
			mean := 0.0
			if docs[c] > 0 {
				mean = bytes[c] / docs[c]
			}
			fmt.Fprintf(w, "| %s | %s | %s | %sB | %sB | %sB | %s (%s) |\n", passNames[pi], className(c), si(docs[c]), si(mean), si(bytes[c]), si(old[c]),
				entryShare(zero[c], bytes[c]), entryShare(zero[c], old[c]))
			total[c] += bytes[c]
			totalOld[c] += old[c]
			zeroOnly[c] += zero[c]
		}
	}
	for _, c := range classes {
		fmt.Fprintf(w, "| **all** | %s | | | **%sB** | %sB (×%.2f) | %s (%s) |\n", className(c), si(total[c]), si(totalOld[c]), totalOld[c]/total[c],
			entryShare(zeroOnly[c], total[c]), entryShare(zeroOnly[c], totalOld[c]))
	}

	// Preallocation thresholds.
	fmt.Fprintf(w, "\npreallocate_min_hits (hits a page needs on a host in the current hour, day, month):\n\n")
	fmt.Fprintf(w, "| min hits | level | buckets sent/s (per host) | distinct created/s | of them hit | zero buckets wasted/day | whole inserts/s creating buckets on the flush path |\n| ---: | --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, k := range ks {
		for pi, l := range levels {
			r := t.preallocate(l, k)
			hitPct := 0.0
			if r.created > 0 {
				hitPct = 100 * r.used / r.created
			}
			waste := (r.created - r.used) * daySecs * t.avgZero(pi, head)
			fmt.Fprintf(w, "| %d | %s | %s (%s) | %s | %.1f%% | %sB | %s |\n", k, passNames[pi], si(r.attempts), si(r.perHost),
				si(r.created), hitPct, si(waste), si(r.flushPath))
		}
	}

	// Pages and the limiter.
	ppm := append([]int(nil), t.pagesPerMinute...)
	sort.Ints(ppm)
	other := t.pageHits["(other)"]
	var headCounted int64
	for pg, n := range t.pageHits {
		if pg != "(other)" {
			headCounted += n
		}
	}
	fmt.Fprintf(w, "\nDistinct pages per host and minute (before the limiter): median %d, max %d. Hits counted as (other): %.2f%% of all; head-page hits lost to (other): %.2f%%; tail hits lost to (other): %.1f%%.\n",
		ppm[len(ppm)/2], ppm[len(ppm)-1], pct(other, t.genHits[0]+t.genHits[1]),
		pct(t.genHits[head]-headCounted, t.genHits[head]), pct(t.genHits[tail]-t.tailPages, t.genHits[tail]))
}

// writeOpsRow prints one row of the operations table.
func writeOpsRow(w io.Writer, pass, class string, o pathOps) {
	per := func(v float64) string {
		if o.writes == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f", v/o.writes)
	}
	fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %sB (%sB) | %s |\n", pass, class,
		si(o.writes), si(o.first), si(o.created), si(o.dups), si(o.ops()), per(o.ops()), si(o.opsOld()), per(o.opsOld()),
		si(o.bytes), si(o.bytesOld), per(o.opsForgetful()))
}

func sumEntries(os [3]pathOps) float64 { return os[0].entries + os[1].entries + os[2].entries }

func className(c int) string {
	if c == tail {
		return "tail"
	}
	return "head"
}

// entryShare formats the part of all bytes that is not zero-filled document
// (the applied entries) as a percentage.
func entryShare(zero, all float64) string {
	if all == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", 100*(1-zero/all))
}

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// si formats v with a k, M, G, T suffix and three significant digits.
func si(v float64) string {
	units := []string{"", "k", "M", "G", "T", "P"}
	i := 0
	for v >= 999.5 && i < len(units)-1 {
		v /= 1000
		i++
	}
	switch {
	case v == 0:
		return "0"
	case v >= 99.5:
		return fmt.Sprintf("%.0f%s", v, units[i])
	case v >= 9.95:
		return fmt.Sprintf("%.1f%s", v, units[i])
	}
	return fmt.Sprintf("%.2f%s", v, units[i])
}
