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
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/logtally/logtally/internal/benchutil"

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
		stop, u, err := startServer(tmp)
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
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`state_dir = %q
instance = "livebench"
[mongo]
uri = %q
database = %q
timeout = "60s"
[flush]
max_ops = %d
[http]
listen = "127.0.0.1:%d"
[[source]]
site = %q
paths = [%q]
format = "combined"
`, filepath.Join(tmp, "state"), uri, db, o.maxOps, port, site, b.logPath)), 0o600); err != nil {
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
	fmt.Printf("logtally: default poll (250ms), commit (1s) and flush (%v) intervals; %d pages; load average at start %s\n", flushInterval, o.pages, loadavg())
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
		loads = append(loads, loadavg())
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

// rest measures the daemon's CPU while the log does not grow for d, as a
// share of one core. It first waits until what was written is in MongoDB
// and one more flush interval has passed.
func (b *bench) rest(d time.Duration) (float64, error) {
	if _, err := b.waitTotal(b.written, 5*time.Minute); err != nil {
		return 0, err
	}
	time.Sleep(b.o.settle)
	c0, err := procCPU(b.pid)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	time.Sleep(d)
	c1, err := procCPU(b.pid)
	if err != nil {
		return 0, err
	}
	return (c1 - c0).Seconds() / time.Since(t0).Seconds(), nil
}

// steadyResult is one steady run's figures.
type steadyResult struct {
	cpuPerM, tailPerM float64       // CPU seconds per million lines
	drain             time.Duration // from the last line written to all hits in MongoDB
}

// steady writes rate lines/s for d while `tail -F` follows the file too,
// waits until every hit is in MongoDB, and returns logtally's CPU (from
// the first line written until then) and tail's (until its last line was
// written and a second more) per million lines.
func (b *bench) steady(rate int, d time.Duration) (steadyResult, error) {
	if _, err := b.waitTotal(b.written, 5*time.Minute); err != nil {
		return steadyResult{}, err
	}
	tl := exec.Command("tail", "-F", "-n", "0", b.logPath)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return steadyResult{}, err
	}
	defer devnull.Close()
	tl.Stdout = devnull
	if err := tl.Start(); err != nil {
		return steadyResult{}, err
	}
	time.Sleep(500 * time.Millisecond) // tail has opened the file
	c0, err := procCPU(b.pid)
	if err != nil {
		tl.Process.Kill()
		tl.Wait()
		return steadyResult{}, err
	}
	n, _, err := b.write(rate, d)
	if err != nil {
		tl.Process.Kill()
		tl.Wait()
		return steadyResult{}, err
	}
	end := time.Now()
	time.Sleep(time.Second)
	tl.Process.Signal(syscall.SIGTERM)
	tl.Wait()
	at, err := b.waitTotal(b.written, 5*time.Minute)
	if err != nil {
		return steadyResult{}, err
	}
	c1, err := procCPU(b.pid)
	if err != nil {
		return steadyResult{}, err
	}
	m := float64(n) / 1e6
	return steadyResult{cpuPerM: (c1 - c0).Seconds() / m, tailPerM: cpuTime(tl.ProcessState).Seconds() / m, drain: at.Sub(end)}, nil
}

// lag writes rate lines/s for d, polling the monthly total every 100 ms,
// and returns the largest and the median lag of a second of writing: from
// its last line written to the first poll that found the total holding it.
func (b *bench) lag(rate int, d time.Duration) (largest, med time.Duration, err error) {
	if _, err := b.waitTotal(b.written, 5*time.Minute); err != nil {
		return 0, 0, err
	}
	type seen struct {
		at    time.Time
		total int64
	}
	polls := make(chan []seen)
	stop := make(chan struct{})
	go func() {
		var s []seen
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if n, err := benchutil.MonthlyTotal(b.monthly); err == nil {
				s = append(s, seen{time.Now(), n})
			}
			select {
			case <-stop:
				polls <- s
				return
			case <-t.C:
			}
		}
	}()
	_, marks, err := b.write(rate, d)
	if err == nil {
		_, err = b.waitTotal(b.written, 5*time.Minute)
		time.Sleep(200 * time.Millisecond)
	}
	close(stop)
	s := <-polls
	if err != nil {
		return 0, 0, err
	}
	var lags []time.Duration
	for _, m := range marks {
		i := slices.IndexFunc(s, func(p seen) bool { return p.total >= m.total && !p.at.Before(m.at) })
		if i < 0 {
			return 0, 0, fmt.Errorf("a second's %d lines never seen in MongoDB", m.total)
		}
		lags = append(lags, s[i].at.Sub(m.at))
	}
	slices.Sort(lags)
	return lags[len(lags)-1], lags[len(lags)/2], nil
}

// mark is the total written by the end of one second of writing.
type mark struct {
	at    time.Time
	total int64
}

// write appends rate lines/s to the log for d, in a write every 10 ms,
// and returns the lines written and a mark at the end of each second.
func (b *bench) write(rate int, d time.Duration) (int64, []mark, error) {
	start := time.Now()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	var n int64
	var marks []mark
	next := start.Add(time.Second)
	want := int64(float64(rate) * d.Seconds())
	for n < want {
		now := <-t.C
		due := min(int64(float64(rate)*now.Sub(start).Seconds()), want)
		if due > n {
			if err := b.w.write(int(due-n), now); err != nil {
				return n, marks, err
			}
			b.written += due - n
			n = due
		}
		if !now.Before(next) || n == want {
			marks = append(marks, mark{time.Now(), b.written})
			next = next.Add(time.Second)
		}
	}
	return n, marks, nil
}

// waitTotal waits until the monthly buckets hold want hits and returns
// when it saw them.
func (b *bench) waitTotal(want int64, limit time.Duration) (time.Time, error) {
	deadline := time.Now().Add(limit)
	for {
		got, err := benchutil.MonthlyTotal(b.monthly)
		if err == nil && got >= want {
			if got > want {
				return time.Time{}, fmt.Errorf("%d hits in MongoDB, %d lines written", got, want)
			}
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("only %d of %d hits in MongoDB after %v (err %v)", got, want, limit, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lineWriter writes combined-format lines stamped with the time of the
// write.
type lineWriter struct {
	f     *os.File
	pages int
	buf   []byte
	i     int
}

func newLineWriter(f *os.File, pages int) *lineWriter { return &lineWriter{f: f, pages: pages} }

// write appends n lines in one write.
func (w *lineWriter) write(n int, now time.Time) error {
	ts := now.Format("02/Jan/2006:15:04:05 -0700")
	b := w.buf[:0]
	for range n {
		w.i++
		b = fmt.Appendf(b, "2001:db8:%x::%x - - [%s] \"GET /page/%d?ref=%d HTTP/1.1\" 200 %d \"https://example.com/\" \"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36\"\n",
			w.i%65536, w.i%7919, ts, w.i%w.pages, w.i%1000, 200+w.i%50000)
	}
	w.buf = b
	_, err := w.f.Write(b)
	return err
}

// procCPU is a running process's user+sys CPU time from /proc/PID/stat
// (all its threads, the exited ones too), in clock ticks of 10 ms.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc/PID/stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("unexpected /proc/PID/stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// vmHWM is a running process's peak RSS in KiB.
func vmHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, errors.New("no VmHWM")
}

// cpuTime is a finished process's user+sys CPU time.
func cpuTime(ps *os.ProcessState) time.Duration {
	ru := ps.SysUsage().(*syscall.Rusage)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startPerf records the process with perf until the returned func is
// called; a missing perf is reported once and ignored.
func startPerf(out string, pid, freq int) func() {
	os.MkdirAll(filepath.Dir(out), 0o755)
	cmd := exec.Command("perf", "record", "-q", "-g", "-F", strconv.Itoa(freq), "-p", strconv.Itoa(pid), "-o", out)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "perf: %v\n", err)
		return func() {}
	}
	return func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
	}
}

// startServer builds internal/cmd/demo and runs it with -serve in another
// process; it returns a stop func and the URI it prints.
func startServer(tmp string) (stop func(), uri string, err error) {
	demo := filepath.Join(tmp, "demo")
	if out, err := exec.Command("go", "build", "-o", demo, "./internal/cmd/demo").CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("build server: %v\n%s", err, out)
	}
	srv := exec.Command(demo, "-serve")
	out, err := srv.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		return nil, "", err
	}
	stop = func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return nil, "", fmt.Errorf("server did not print its URI: %w", err)
	}
	return stop, strings.TrimSpace(line), nil
}

// freePort is a loopback TCP port free at the moment, for /metrics.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// loadavg is /proc/loadavg's first three fields.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func spread(v []float64, scale float64, unit string) string {
	return fmt.Sprintf("%.3f..%.3f%s", scale*slices.Min(v), scale*slices.Max(v), unit)
}

// tail is s's last n lines.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
