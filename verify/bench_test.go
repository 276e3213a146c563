package verify

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/dryrun"
	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/parser"
)

// BenchmarkVerify times logtally verify's reading and judging against
// replay's dry run, in the same run, over the same 1,000,000 realistic
// lines (internal/loggen: a day of one site, thousands of pages) on every
// core: the dry run's read, parse and sum with its summary; verify's the
// same with its sinks keeping the sums, their sort, the buckets grouped
// (minute, daily, monthly, site days) and every counter judged, against an
// empty database (every bucket is found missing, so nothing is read back:
// reading the buckets costs what the server takes to send them). It
// reports the CPU time (the process's, user and system: the machine may
// be shared) and the wall time per line of each, and their ratios.
//
//	go test -run '^$' -bench Verify -benchtime 3x ./verify
func BenchmarkVerify(b *testing.B) {
	benchVerify(b, parser.Config{Format: "combined", Site: "bench.example.com"})
}

// BenchmarkVerifyDims is BenchmarkVerify with [dimensions] on (no geo
// database): the dry run parses each hit's dimensions too, and verify
// also keeps the files' counts by dimension and judges them (every site
// day is missing: nothing is read back).
func BenchmarkVerifyDims(b *testing.B) {
	benchVerify(b, parser.Config{Format: "combined", Site: "bench.example.com", Dims: &parser.DimsConfig{}})
}

func benchVerify(b *testing.B, cfg parser.Config) {
	const lines = 1_000_000
	path := filepath.Join(b.TempDir(), "access.log")
	g := loggen.New(1)
	var buf []byte
	for range lines {
		buf = append(g.Append(buf, false), '\n')
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		b.Fatal(err)
	}
	buf = nil
	db := mongotest.Start(b).Database(b)
	var tDryWall, tVerifyWall time.Duration
	dry := func() time.Duration {
		t0 := time.Now()
		defer func() { tDryWall += time.Since(t0) }()
		d, err := dryrun.NewParallel(cfg, 1<<20, 0, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.ReadFiles([]string{path}); err != nil {
			b.Fatal(err)
		}
		if err := d.Summary(io.Discard, time.Since(t0)); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	verify := func() time.Duration {
		t0 := time.Now()
		defer func() { tVerifyWall += time.Since(t0) }()
		rep, err := Verify(context.Background(), []string{path}, Options{Parser: cfg, MaxLine: 1 << 20, DB: db, MaxSums: 2 * lines})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Hits != lines || rep.Passes != 1 || rep.Lost == 0 {
			b.Fatalf("verify: %d hits, %d passes, %d lost", rep.Hits, rep.Passes, rep.Lost)
		}
		return time.Since(t0)
	}
	var tDry, tVerify time.Duration
	cpu := func(f func() time.Duration) time.Duration {
		runtime.GC() // the other's garbage is not this one's
		c0 := cpuTime(b)
		f()
		return cpuTime(b) - c0
	}
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 { // alternate which runs first
			tDry += cpu(dry)
			tVerify += cpu(verify)
		} else {
			tVerify += cpu(verify)
			tDry += cpu(dry)
		}
	}
	n := float64(b.N) * lines
	b.ReportMetric(float64(tDry.Nanoseconds())/n, "dry_cpu_ns/line")
	b.ReportMetric(float64(tVerify.Nanoseconds())/n, "verify_cpu_ns/line")
	b.ReportMetric(float64(tVerify)/float64(tDry), "cpu_ratio")
	b.ReportMetric(float64(tVerifyWall)/float64(tDryWall), "wall_ratio")
}

// cpuTime returns the CPU time the process used so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
