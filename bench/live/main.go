// Command live measures `logtally run` following a log that grows at a
// fixed rate, as a sidecar on a web host would: it builds the real binary,
// starts a MongoDB-wire server in another process (the embedded FerretDB of
// internal/cmd/demo, or the MongoDB in MONGODB_URI), starts the daemon with
// the default poll, commit and flush intervals on an empty log, and then,
// -runs times:
//
//   - at rest: the log does not grow for -idle; logtally's CPU over that
//     time, as a share of one core;
//   - -rate lines/s (20,000 by default) for -duration, then -slow-rate
//     (5,000) for -duration: logtally's CPU seconds per million lines from
//     the first line written until every hit is in the monthly buckets,
//     beside `tail -F` following the same file over the same lines (its
//     CPU per million lines: the baseline of the same run) and their ratio;
//   - -lag-rate lines/s (50,000) for -lag-duration: the lag, for each second
//     of writing, from its last line written to the moment the monthly
//     buckets' total first holds it (polled every 100 ms); the largest
//     and the median, against the flush interval + 2 s.
//
// It prints each figure's median over the runs with its spread, logtally's
// peak RSS (VmHWM) and the load average. The log has -pages pages (few, so
// that the embedded server is not the bottleneck), each line stamped with
// the time it is written. CPU times are the processes' own (user+sys, from
// /proc/PID/stat for the daemon, which runs through every phase, and from
// the rusage for tail), not wall times: the machine may be shared.
//
// With -perf DIR, each phase of the first run is recorded with `perf
// record -g` on the daemon into DIR (read it with `perf report -i`).
//
//	go run ./bench/live
//	go run ./bench/live -runs 1 -idle 20s -duration 10s
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/benchutil"
	"github.com/logtally/logtally/internal/testenv/testconfig"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// site is the source's site name.
const site = "bench.example.com"

// Issue 21's targets.
const (
	targetCPUPerMillion = 0.6   // CPU seconds per million lines at -rate, at most
	targetIdleShare     = 0.001 // share of one core at rest, at most
	lagSlack            = 2 * time.Second
	flushInterval       = 10 * time.Second // flush.interval's default, left as is
	clockTick           = 10 * time.Millisecond
)

type settings struct {
	rate, slowRate, lagRate, pages, runs, maxOps int
	dur, lagFor, idle, settle                    time.Duration
	perfDir, bin                                 string
	perfFreq                                     int
	daemonLog                                    string
}

func main() {
	var o settings
	flag.IntVar(&o.rate, "rate", 20_000, "lines per second of the main run")
	flag.IntVar(&o.slowRate, "slow-rate", 5_000, "lines per second of the slow run (0: none)")
	flag.IntVar(&o.lagRate, "lag-rate", 50_000, "lines per second of the lag run (0: none)")
	flag.DurationVar(&o.dur, "duration", 30*time.Second, "how long the main and slow runs write")
	flag.DurationVar(&o.lagFor, "lag-duration", 30*time.Second, "how long the lag run writes")
	flag.DurationVar(&o.idle, "idle", time.Minute, "how long the log rests while the CPU at rest is measured (0: not measured)")
	flag.DurationVar(&o.settle, "settle", 15*time.Second, "wait after the daemon starts, and after each flush, before measuring at rest")
	flag.IntVar(&o.pages, "pages", 10, "distinct pages")
	flag.IntVar(&o.runs, "runs", 3, "runs of each measurement; medians are printed")
	flag.IntVar(&o.maxOps, "max-ops", 32, "flush.max_ops (keep under 50 against FerretDB)")
	flag.StringVar(&o.perfDir, "perf", "", "record each phase of the first run with perf into this `dir`")
	flag.IntVar(&o.perfFreq, "perf-freq", 4999, "perf record's sampling frequency (Hz)")
	flag.StringVar(&o.daemonLog, "daemon-log", "", "run logtally at log level debug and copy its log to this `file` (costs CPU: for diagnosis)")
	flag.StringVar(&o.bin, "bin", "", "the logtally `binary` to measure (default: build ./cmd/logtally)")
	flag.Parse()
	o.runs = max(o.runs, 1)
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "live bench: %v\n", err)
		os.Exit(1)
	}
}

// bench is one run's daemon, log and database.
type bench struct {
	o       settings
	logPath string
	log     *os.File
	pid     int
	monthly *mongo.Collection
	written int64 // lines written so far
	w       *lineWriter
}

func run(o settings) error {
	tmp, err := os.MkdirTemp("", "logtally-live-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := o.bin
	if bin == "" {
		bin = filepath.Join(tmp, "logtally")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/logtally").CombinedOutput(); err != nil {
			return fmt.Errorf("build logtally: %v\n%s", err, out)
		}
	}
	uri, server := os.Getenv("MONGODB_URI"), "MONGODB_URI"
	if uri == "" {
		stop, u, err := benchutil.StartServer(tmp)
		if err != nil {
			return err
		}
		defer stop()
		uri, server = u, "embedded FerretDB (SQLite) in another process"
	}
	fmt.Printf("server: %s\n", server)
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	db := fmt.Sprintf("live_%d", time.Now().UnixNano())
	defer client.Database(db).Drop(context.Background())

	port, err := freePort()
	if err != nil {
		return err
	}
	b := &bench{o: o, logPath: filepath.Join(tmp, "logs", "access.log"), monthly: client.Database(db).Collection("monthly")}
	if err := os.Mkdir(filepath.Dir(b.logPath), 0o755); err != nil {
		return err
	}
	if b.log, err = os.OpenFile(b.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		return err
	}
	defer b.log.Close()
	b.w = newLineWriter(b.log, o.pages)
	conf := filepath.Join(tmp, "logtally.toml")
	c := config.Default()
	c.StateDir, c.Instance = filepath.Join(tmp, "state"), "livebench"
	c.Mongo.URI, c.Mongo.Database, c.Mongo.Timeout = uri, db, config.Duration(time.Minute)
	c.Flush.MaxOps = o.maxOps
	c.HTTP.Listen = fmt.Sprintf("127.0.0.1:%d", port)
	c.Sources = []config.Source{{Site: site, Paths: []string{b.logPath}, Format: "combined"}}
	if err := testconfig.WriteFile(conf, c); err != nil {
		return err
	}
	var stderr bytes.Buffer
	daemon := exec.Command(bin, "run", "-config", conf)
	daemon.Stderr = &stderr
	if o.daemonLog != "" {
		f, err := os.Create(o.daemonLog)
		if err != nil {
			return err
		}
		defer f.Close()
		daemon.Args = append(daemon.Args, "-log-level", "debug")
		daemon.Stderr = io.MultiWriter(&stderr, f)
	}
	if err := daemon.Start(); err != nil {
		return err
	}
	b.pid = daemon.Process.Pid
	defer func() {
		daemon.Process.Signal(syscall.SIGTERM)
		daemon.Wait()
	}()
	fmt.Printf("logtally: default poll (250ms), commit (1s) and flush (%v) intervals; %d pages; load average at start %s\n", flushInterval, o.pages, benchutil.Loadavg())
	time.Sleep(o.settle)

	var idle, fast, fastTail, slow, slowTail, lagMax, lagMed []float64
	var loads []string
	for r := range o.runs {
		perf := func(name string) func() {
			if o.perfDir == "" || r > 0 {
				return func() {}
			}
			return startPerf(filepath.Join(o.perfDir, name+".data"), b.pid, o.perfFreq)
		}
		if o.idle > 0 {
			stop := perf("idle")
			cpu, err := b.rest(o.idle)
			stop()
			if err != nil {
				return err
			}
			idle = append(idle, cpu)
			fmt.Printf("run %d: at rest %v: %.3f%% of a core\n", r+1, o.idle, 100*cpu)
		}
		for _, p := range []struct {
			rate      int
			cpu, tail *[]float64
			name      string
		}{{o.rate, &fast, &fastTail, "fast"}, {o.slowRate, &slow, &slowTail, "slow"}} {
			if p.rate == 0 {
				continue
			}
			stop := perf(p.name)
			res, err := b.steady(p.rate, o.dur)
			stop()
			if err != nil {
				return fmt.Errorf("%v\nlogtally's log:\n%s", err, tail(stderr.String(), 20))
			}
			*p.cpu, *p.tail = append(*p.cpu, res.cpuPerM), append(*p.tail, res.tailPerM)
			fmt.Printf("run %d: %d lines/s for %v: logtally %.3f CPU s per million lines, tail -F %.3f (%.1fx); all in MongoDB %.1fs after the last line\n",
				r+1, p.rate, o.dur, res.cpuPerM, res.tailPerM, res.cpuPerM/res.tailPerM, res.drain.Seconds())
		}
		if o.lagRate > 0 {
			stop := perf("lag")
			mx, med, err := b.lag(o.lagRate, o.lagFor)
			stop()
			if err != nil {
				return fmt.Errorf("%v\nlogtally's log:\n%s", err, tail(stderr.String(), 20))
			}
			lagMax, lagMed = append(lagMax, mx.Seconds()), append(lagMed, med.Seconds())
			fmt.Printf("run %d: %d lines/s for %v: lag from a second's last line to its hits in MongoDB: largest %.2fs, median %.2fs\n",
				r+1, o.lagRate, o.lagFor, mx.Seconds(), med.Seconds())
		}
		loads = append(loads, benchutil.Loadavg())
	}
	hwm, _ := vmHWM(b.pid)

	fmt.Printf("\n== medians of %d runs (spread: min..max); load average after each run: %s\n", o.runs, strings.Join(loads, " | "))
	if len(idle) > 0 {
		fmt.Printf("at rest:                     %.3f%% of a core (%s)  [/proc/PID/stat, %v ticks]\n", 100*median(idle), spread(idle, 100, "%"), clockTick)
	}
	if len(fast) > 0 {
		fmt.Printf("%6d lines/s, logtally:     %.3f CPU s per million lines (%s)\n", o.rate, median(fast), spread(fast, 1, ""))
		fmt.Printf("%6d lines/s, tail -F:      %.3f CPU s per million lines (%s)\n", o.rate, median(fastTail), spread(fastTail, 1, ""))
	}
	if len(slow) > 0 {
		fmt.Printf("%6d lines/s, logtally:     %.3f CPU s per million lines (%s)\n", o.slowRate, median(slow), spread(slow, 1, ""))
		fmt.Printf("%6d lines/s, tail -F:      %.3f CPU s per million lines (%s)\n", o.slowRate, median(slowTail), spread(slowTail, 1, ""))
	}
	if len(lagMax) > 0 {
		fmt.Printf("%6d lines/s, lag:          largest %.2fs (%s), median %.2fs\n", o.lagRate, median(lagMax), spread(lagMax, 1, "s"), median(lagMed))
	}
	fmt.Printf("logtally peak RSS:           %.1f MiB\n", float64(hwm)/1024)

	fmt.Printf("\n== targets (issue 21)\n")
	met := true
	check := func(name string, v, target float64, unit string) {
		ok := v <= target
		met = met && ok
		verdict := "met"
		if !ok {
			verdict = "NOT met"
		}
		fmt.Printf("  %-52s %8.3f%s  (target <= %g%s: %s)\n", name, v, unit, target, unit, verdict)
	}
	if len(fast) > 0 {
		check(fmt.Sprintf("CPU s per million lines at %d lines/s", o.rate), median(fast), targetCPUPerMillion, "")
		fmt.Printf("  %-52s %8.2fx\n", "  its ratio to tail -F on the same file", median(fast)/median(fastTail))
	}
	if len(idle) > 0 {
		check("% of a core at rest", 100*median(idle), 100*targetIdleShare, "%")
	}
	if len(lagMax) > 0 {
		check(fmt.Sprintf("largest lag at %d lines/s (s)", o.lagRate), median(lagMax), (flushInterval + lagSlack).Seconds(), "")
	}
	if !met {
		fmt.Println("some targets are not met")
	} else {
		fmt.Println("all targets met")
	}
	return nil
}
