package aggregate_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/internal/benchutil"
	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/visitor"
)

// apacheChunk returns the real Apache log of the test data as one chunk of
// source "src".
func apacheChunk(tb testing.TB) stream.Chunk {
	data, err := os.ReadFile("../testdata/apache_combined_real.log")
	if err != nil {
		tb.Fatal(err)
	}
	return stream.Chunk{
		Checkpoint: stream.Checkpoint{Source: "src", Path: "/logs/access.log", File: stream.FileID{Dev: 1, Ino: 1}, Offset: int64(len(data))},
		Data:       data,
	}
}

func newParser(tb testing.TB, format string) *parser.Parser {
	p, err := parser.New(parser.Config{Format: format, Site: "example.com"})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkMeasuresCost parses and aggregates the real Apache log of the
// test data with every measure (the user agent read and classified, the
// status and bot classes, bytes: a measure vector per key), and, in the
// same run, the hits-only path it replaced: the same lines parsed without
// the user agent (format common stops after the size) by an aggregator
// counting views alone. It reports ns per line of each, their ratio
// (x_hits_only: the target is at most 1.25) and the classifier cache's hit
// rate over one pass of the log from cold (ua_cache_hit%_1pass). Both aggregators start each round empty, as after a commit.
func BenchmarkMeasuresCost(b *testing.B) {
	c := apacheChunk(b)
	lines := bytes.Count(c.Data, []byte("\n"))
	full := newParser(b, "combined")
	sum := aggregate.NewSummer(map[string]*parser.Parser{"src": full}, nil, nil)
	base := aggregate.NewSummer(map[string]*parser.Parser{"src": newParser(b, "common")}, nil, nil)
	base.SetHitsOnly()
	var tFull, tBase time.Duration
	for i := 0; b.Loop(); i++ {
		// Alternate which runs first: the second finds the chunk in
		// the CPU's caches.
		if i%2 == 0 {
			tFull += timeAdd(b, sum, &c)
			tBase += timeAdd(b, base, &c)
		} else {
			tBase += timeAdd(b, base, &c)
			tFull += timeAdd(b, sum, &c)
		}
		sum.Drain(nil)
		base.Drain(nil)
	}
	n := float64(b.N) * float64(lines)
	b.ReportMetric(float64(tFull.Nanoseconds())/n, "ns/line")
	b.ReportMetric(float64(tBase.Nanoseconds())/n, "ns/line_hits_only")
	b.ReportMetric(float64(tFull)/float64(tBase), "x_hits_only")
	// The classifier cache's hit rate over one pass of the log, from cold.
	cold := newParser(b, "combined")
	if err := aggregate.NewSummer(map[string]*parser.Parser{"src": cold}, nil, nil).Add(&c); err != nil {
		b.Fatal(err)
	}
	hits, misses := cold.BotCacheStats()
	b.ReportMetric(100*float64(hits)/float64(max(hits+misses, 1)), "ua_cache_hit%_1pass")
}

// Adding a chunk whose keys are all held allocates nothing per line: the
// hot path (parse, classify from the cache, add to a held vector) is free
// of allocations, with the dimensions on too (issue 33: 0 allocations per
// line after the caches; the real log, a Tor country database); what a
// chunk allocates is its checkpoint's (a few, per chunk).
func TestAddAllocatesNothingOnHeldKeys(t *testing.T) {
	for name, p := range map[string]*parser.Parser{"measures": newParser(t, "combined"), "dimensions": dimsParser(t)} {
		c := apacheChunk(t)
		sum := aggregate.NewSummer(map[string]*parser.Parser{"src": p}, nil, nil)
		if err := sum.Add(&c); err != nil { // holds every key (and value), warms the caches
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(5, func() {
			if err := sum.Add(&c); err != nil {
				t.Fatal(err)
			}
		}); n > 8 {
			t.Errorf("%s: Add of %d held lines: %.1f allocations, want the chunk's few, none per line", name, bytes.Count(c.Data, []byte("\n")), n)
		}
		if st := sum.Stats(); st.Hits == 0 {
			t.Fatalf("%s: nothing counted", name)
		}
	}
}

// fixedSalt gives one salt for every period.
type fixedSalt struct{ s visitor.Salt }

func (f *fixedSalt) For(int64) (*visitor.Salt, bool) { return &f.s, true }

// BenchmarkVisitorsCost parses and aggregates the real Apache log with
// every measure, with the visitors on (a keyed hash of site, address and
// user agent per person's line, skipped when the line's visitor is the
// line before's, and a register update) and, in the same run, off. It
// reports ns per line of each and their ratio (x_visitors_off: the target
// is at most 1.15).
func BenchmarkVisitorsCost(b *testing.B) {
	for _, pages := range []bool{true, false} {
		name := map[bool]string{true: "/sites+pages", false: "/sites"}[pages]
		b.Run("apache"+name, func(b *testing.B) { benchmarkVisitorsCost(b, apacheChunk(b), pages) })
	}
	// The generated lines: mostly browsers (people), random addresses.
	g := loggen.New(1)
	var data []byte
	for range 10000 {
		data = append(g.Append(data, false), '\n')
	}
	for _, pages := range []bool{true, false} {
		name := map[bool]string{true: "/sites+pages", false: "/sites"}[pages]
		b.Run("generated"+name, func(b *testing.B) {
			benchmarkVisitorsCost(b, stream.Chunk{Checkpoint: stream.Checkpoint{Source: "src", Path: "/logs/gen.log",
				File: stream.FileID{Dev: 1, Ino: 2}, Offset: int64(len(data))}, Data: data}, pages)
		})
	}
}

func benchmarkVisitorsCost(b *testing.B, c stream.Chunk, pages bool) {
	lines := bytes.Count(c.Data, []byte("\n"))
	on := aggregate.NewSummer(map[string]*parser.Parser{"src": newParser(b, "combined")}, nil, nil)
	on.SetVisitors(&aggregate.Visitors{Salts: &fixedSalt{}, Period: visitor.Day, Pages: pages})
	off := aggregate.NewSummer(map[string]*parser.Parser{"src": newParser(b, "combined")}, nil, nil)
	var tOn, tOff time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 { // alternate which runs first, as above
			tOn += timeAdd(b, on, &c)
			tOff += timeAdd(b, off, &c)
		} else {
			tOff += timeAdd(b, off, &c)
			tOn += timeAdd(b, on, &c)
		}
		// A round is a commit: the sums go, the sketches stay (clean).
		on.CommittedWithoutBuffer()
		off.CommittedWithoutBuffer()
	}
	n := float64(b.N) * float64(lines)
	b.ReportMetric(float64(tOn.Nanoseconds())/n, "ns/line")
	b.ReportMetric(float64(tOff.Nanoseconds())/n, "ns/line_visitors_off")
	b.ReportMetric(float64(tOn)/float64(tOff), "x_visitors_off")
	if st := on.Stats(); st.Hits > 0 {
		b.ReportMetric(100*float64(st.Measures[measure.Views]-bots(&st.Measures))/float64(st.Measures[measure.Views]), "people%")
	}
}

func bots(m *measure.Vector) (n uint64) {
	for i := measure.BotSearch; i <= measure.BotSuspect; i++ {
		n += m[i]
	}
	return n
}

// timeAdd adds c to a and returns how long it took.
// cpuAdd is timeAdd in the CPU time of the calling thread
// (benchutil.ThreadCPU): lock the goroutine to its thread first.
func cpuAdd(b *testing.B, a *aggregate.Summer, c *stream.Chunk) time.Duration {
	t0 := benchutil.ThreadCPU()
	if err := a.Add(c); err != nil {
		b.Fatal(err)
	}
	return benchutil.ThreadCPU() - t0
}

func timeAdd(b *testing.B, a *aggregate.Summer, c *stream.Chunk) time.Duration {
	t0 := time.Now()
	if err := a.Add(c); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// BenchmarkDryRunPath times the dry run's (and the daemon's) per-line
// path over 200,000 realistic combined lines (internal/loggen, as
// bench/gen writes them; most (site, page, second) keys new) cut into
// chunks of whole lines of up to 256 KiB, as replay reads them: Add of
// each chunk to a Summer (parse, classify, key, sum), and a Drain after
// it when 4,096 keys are held, as the dry run's (replay's maxKeys); and,
// in the same run, the same lines parsed alone
// (Parser.Parse) and only cut at their '\n' (bytes.IndexByte: the floor,
// as BenchmarkBaselineScanLines in parser). It reports ns per line of
// each, the ratio of the path to the scan (x_scan) and the parse's share
// of the path (parse_share).
//
//	go test -run '^$' -bench DryRunPath -count 3 ./aggregate
func BenchmarkDryRunPath(b *testing.B) {
	const lines = 200_000
	data, chunks := loggen.Chunks(1, lines, 256<<10, "src")
	sum := aggregate.NewSummer(map[string]*parser.Parser{"src": newParser(b, "combined")}, nil, nil)
	alone := newParser(b, "combined")
	var h parser.Hit
	parse := func() {
		for off := 0; off < len(data); {
			j := bytes.IndexByte(data[off:], '\n')
			if alone.Parse(data[off:off+j], &h) != parser.OK {
				b.Fatalf("line at %d: not a hit", off)
			}
			off += j + 1
		}
	}
	n := 0
	scan := func() {
		for off := 0; off < len(data); {
			j := bytes.IndexByte(data[off:], '\n')
			n += j
			off += j + 1
		}
	}
	add := func() {
		for i := range chunks {
			if err := sum.Add(&chunks[i]); err != nil {
				b.Fatal(err)
			}
			if sum.Held() >= 1<<12 {
				sum.Drain(nil)
			}
		}
		sum.Drain(nil)
	}
	var tAdd, tParse, tScan time.Duration
	timed := func(d *time.Duration, f func()) {
		t0 := time.Now()
		f()
		*d += time.Since(t0)
	}
	add() // warm the tables and the classifier caches
	parse()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 { // alternate the order, as above
			timed(&tAdd, add)
			timed(&tParse, parse)
			timed(&tScan, scan)
		} else {
			timed(&tScan, scan)
			timed(&tParse, parse)
			timed(&tAdd, add)
		}
	}
	l := float64(b.N) * lines
	b.ReportMetric(float64(tAdd.Nanoseconds())/l, "ns/line")
	b.ReportMetric(float64(tParse.Nanoseconds())/l, "ns/line_parse")
	b.ReportMetric(float64(tScan.Nanoseconds())/l, "ns/line_scan")
	b.ReportMetric(float64(tAdd)/float64(tScan), "x_scan")
	b.ReportMetric(float64(tParse)/float64(tAdd), "parse_share")
	if n < 0 {
		b.Fatal("impossible")
	}
}

// BenchmarkBarrierBehindQueue times a barrier (Barrier: the pipeline's,
// before each seal) from its send to its answer: sent behind a full input
// (a catch-up: one chunk of 1 MiB being added and the pipeline's four
// queued, so the send waits for a place) and, in the same run, behind one
// chunk (about what a commit request outside the input, CommitNow before
// the barrier, waited for: the chunk being added, then the commit). Both
// include their commit, of what the chunks before them hold: the
// difference is the queue's parsing and committing, which the seal now
// waits for and the batch then holds (CommitNow left it to the next).
//
//	go test -run '^$' -bench BarrierBehindQueue -count 3 ./aggregate
func BenchmarkBarrierBehindQueue(b *testing.B) {
	const queue = 4 // pipeline's chunkQueue
	_, chunks := loggen.Chunks(1, 40_000, 1<<20, "src")
	if len(chunks) < queue+1 {
		b.Fatalf("%d chunks: want %d", len(chunks), queue+1)
	}
	chunks = chunks[:queue+1]
	buf, err := buffer.Open(filepath.Join(b.TempDir(), "buffer.db"), buffer.Options{MaxSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Close()
	in := make(chan stream.Chunk, queue)
	agg, err := aggregate.New(aggregate.Config{
		Buffer: buf, Parsers: map[string]*parser.Parser{"src": newParser(b, "combined")}, CommitInterval: time.Hour,
	}, in)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); <-agg.Stopped() }()
	go agg.Run(ctx)
	// behind sends chunks, then times a barrier behind them.
	behind := func(chunks []stream.Chunk) time.Duration {
		for _, c := range chunks {
			in <- c
		}
		c, done := aggregate.Barrier()
		t0 := time.Now()
		in <- c
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var queued, one time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			queued += behind(chunks)
			one += behind(chunks[:1])
		} else {
			one += behind(chunks[:1])
			queued += behind(chunks)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(queued)/1e6/n, "ms/seal_wait_queued")
	b.ReportMetric(float64(one)/1e6/n, "ms/seal_wait_one_chunk")
	b.ReportMetric(float64(queued)/float64(one), "x_one_chunk")
}

// BenchmarkDimensionsCost parses and aggregates the real Apache log with
// the counts by where traffic comes from ([dimensions]: the referrer
// classified, the client address looked up in the Tor country file of
// geo's test data, or in LOGTALLY_GEO_BENCH_COUNTRY when set, the agent's
// families and crawler, dims.Counter) and, in the same run, without them
// (each in the CPU time of the benchmark's thread: the ratio holds on a
// busy machine):
// both with every measure and the visitors (sites and pages), the
// baseline issue 33 sets (x_dims_off: the target is at most 1.2). Both
// start each round as after a commit.
func BenchmarkDimensionsCost(b *testing.B) {
	c := apacheChunk(b)
	lines := bytes.Count(c.Data, []byte("\n"))
	on := aggregate.NewSummer(map[string]*parser.Parser{"src": dimsParser(b)}, nil, nil)
	off := aggregate.NewSummer(map[string]*parser.Parser{"src": newParser(b, "combined")}, nil, nil)
	for _, s := range []*aggregate.Summer{on, off} {
		s.SetVisitors(&aggregate.Visitors{Salts: &fixedSalt{}, Period: visitor.Day, Pages: true})
	}
	runtime.LockOSThread() // cpuAdd: this thread's CPU, robust to a busy machine
	defer runtime.UnlockOSThread()
	var tOn, tOff time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			tOn += cpuAdd(b, on, &c)
			tOff += cpuAdd(b, off, &c)
		} else {
			tOff += cpuAdd(b, off, &c)
			tOn += cpuAdd(b, on, &c)
		}
		on.CommittedWithoutBuffer()
		off.CommittedWithoutBuffer()
	}
	n := float64(b.N) * float64(lines)
	b.ReportMetric(float64(tOn.Nanoseconds())/n, "ns/line")
	b.ReportMetric(float64(tOff.Nanoseconds())/n, "ns/line_dims_off")
	b.ReportMetric(float64(tOn)/float64(tOff), "x_dims_off")
}

// dimsParser returns a parser of the real log with the dimensions on:
// combined, its site semicomplete.com (its own pages are half its
// referrers), the Tor country file of geo's test data or the databases
// LOGTALLY_GEO_BENCH_COUNTRY and LOGTALLY_GEO_BENCH_ASN name.
func dimsParser(tb testing.TB) *parser.Parser {
	country := cmpOr(os.Getenv("LOGTALLY_GEO_BENCH_COUNTRY"), filepath.Join("..", "geo", "testdata", "tor", "geoip"))
	h, err := geo.OpenHolder(country, os.Getenv("LOGTALLY_GEO_BENCH_ASN"))
	if err != nil {
		tb.Fatal(err)
	}
	p, err := parser.New(parser.Config{Format: "combined", Site: "semicomplete.com", Dims: &parser.DimsConfig{Geo: h}})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
