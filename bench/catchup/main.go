// Command catchup measures `logtally run` catching up on a large combined
// log: it writes the log (10 pages over 10 minutes by default, so the
// embedded server's collection scans stay small), starts a MongoDB-wire
// server in another process (the embedded FerretDB of internal/cmd/demo, or
// the MongoDB in MONGODB_URI), runs the real logtally binary until every hit
// is in the monthly buckets, stops it with SIGTERM and prints wall time,
// logtally's own CPU seconds and peak RSS (from its rusage), and the
// database operations it issued per 1,000 hits (from its final stats line).
// It does so -runs times, each with a new state dir and database, and
// prints the median CPU. Then it runs `logtally replay -dry-run` with the
// same config (the same source settings) on the same log dryRuns times and
// prints the median of their CPU seconds and the ratio of the catch-up's
// median CPU to it: the cost of following, buffering and committing over
// parsing and counting alone.
//
//	go run ./bench/catchup -lines 1000000
//
// To profile the daemon against the dry run, build the binary and record
// the whole run; both are processes named logtally, the daemon first:
//
//	go build -o /tmp/logtally ./cmd/logtally
//	perf record -g -- go run ./bench/catchup -bin /tmp/logtally
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/logtally/logtally/internal/benchutil"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// site and format are the generated log's source settings, for the daemon's
// config and the dry run alike.
const (
	site   = "bench.example.com"
	format = "combined"
)

// dryRuns is how many times the dry run is repeated; the median is printed.
const dryRuns = 5

func main() {
	lines := flag.Int("lines", 1_000_000, "lines in the generated log")
	pages := flag.Int("pages", 10, "distinct pages")
	minutes := flag.Int("minutes", 10, "minutes of log time the lines span")
	maxOps := flag.Int("max-ops", 32, "flush.max_ops (keep under 50 against FerretDB)")
	runs := flag.Int("runs", 5, "catch-ups measured (the median CPU is compared)")
	bin := flag.String("bin", "", "a logtally binary to measure instead of building ./cmd/logtally (kept after the run: a profiler such as perf can resolve its symbols)")
	flag.Parse()
	if *runs < 1 {
		fmt.Fprintln(os.Stderr, "catchup: -runs must be at least 1")
		os.Exit(2)
	}
	if err := run(*lines, *pages, *minutes, *maxOps, *runs, *bin); err != nil {
		fmt.Fprintf(os.Stderr, "catchup: %v\n", err)
		os.Exit(1)
	}
}

func run(lines, pages, minutes, maxOps, runs int, prebuilt string) error {
	tmp, err := os.MkdirTemp("", "logtally-catchup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	logPath := filepath.Join(tmp, "access.log")
	size, err := generate(logPath, lines, pages, minutes)
	if err != nil {
		return err
	}
	fmt.Printf("log: %d lines, %.1f MB, %d pages over %d minutes\n", lines, float64(size)/1e6, pages, minutes)

	bin := prebuilt
	if bin == "" {
		bin = filepath.Join(tmp, "logtally")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/logtally").CombinedOutput(); err != nil {
			return fmt.Errorf("build logtally: %v\n%s", err, out)
		}
	}
	uri := os.Getenv("MONGODB_URI")
	server := "MONGODB_URI"
	if uri == "" {
		demo := filepath.Join(tmp, "demo")
		if out, err := exec.Command("go", "build", "-o", demo, "./internal/cmd/demo").CombinedOutput(); err != nil {
			return fmt.Errorf("build server: %v\n%s", err, out)
		}
		srv := exec.Command(demo, "-serve")
		out, _ := srv.StdoutPipe()
		srv.Stderr = os.Stderr
		if err := srv.Start(); err != nil {
			return err
		}
		defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			return fmt.Errorf("server did not print its URI: %w", err)
		}
		uri = strings.TrimSpace(line)
		server = "embedded FerretDB v1.24.0 (SQLite) in another process"
	}
	fmt.Printf("server: %s\n", server)
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	cpus := make([]time.Duration, 0, runs)
	var conf string
	for i := range runs {
		c, cpu, err := catchUp(bin, client, uri, tmp, logPath, lines, maxOps, i)
		if err != nil {
			return err
		}
		conf, cpus = c, append(cpus, cpu)
	}
	slices.Sort(cpus)
	mid := cpus[len(cpus)/2]
	fmt.Printf("logtally CPU over %d catch-ups: median %.3fs (%.3f-%.3fs)\n", runs, mid.Seconds(), cpus[0].Seconds(), cpus[len(cpus)-1].Seconds())

	dry, err := dryRun(bin, conf, logPath, dryRuns)
	if err != nil {
		return err
	}
	fmt.Printf("replay -dry-run CPU: %.3fs (median of %d runs)\n", dry.Seconds(), dryRuns)
	fmt.Printf("catch-up CPU / dry-run CPU: %.2f\n", mid.Seconds()/dry.Seconds())
	return nil
}

// catchUp runs the daemon (run i, with its own state dir and database)
// until every hit of the log is in the monthly buckets, stops it, prints
// what it cost and returns its config and CPU time.
func catchUp(bin string, client *mongo.Client, uri, tmp, logPath string, lines, maxOps, i int) (conf string, cpu time.Duration, err error) {
	db := fmt.Sprintf("catchup_%d", time.Now().UnixNano())
	conf = filepath.Join(tmp, fmt.Sprintf("logtally-%d.toml", i))
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`state_dir = %q
shutdown_timeout = "5m"
[mongo]
uri = %q
database = %q
timeout = "60s"
[flush]
interval = "1s"
max_ops = %d
[buckets]
minute_retention = "0" # the test lines are older than the default 48h
[[source]]
site = %q
paths = [%q]
format = %q
`, filepath.Join(tmp, fmt.Sprintf("state-%d", i)), uri, db, maxOps, site, logPath, format)), 0o600); err != nil {
		return "", 0, err
	}
	defer client.Database(db).Drop(context.Background())

	var stderr bytes.Buffer
	daemon := exec.Command(bin, "run", "-config", conf)
	daemon.Stderr = &stderr
	start := time.Now()
	if err := daemon.Start(); err != nil {
		return "", 0, err
	}
	monthly := client.Database(db).Collection("monthly")
	var got int64
	for got < int64(lines) {
		if time.Since(start) > 30*time.Minute {
			daemon.Process.Kill()
			return "", 0, fmt.Errorf("only %d of %d hits after 30 minutes", got, lines)
		}
		time.Sleep(100 * time.Millisecond)
		got, _ = benchutil.MonthlyTotal(monthly)
	}
	caughtUp := time.Since(start)
	daemon.Process.Signal(syscall.SIGTERM)
	if err := daemon.Wait(); err != nil {
		return "", 0, fmt.Errorf("logtally: %v\n%s", err, stderr.String())
	}
	wall := time.Since(start)
	ru := daemon.ProcessState.SysUsage().(*syscall.Rusage)
	cpu = cpuTime(daemon.ProcessState)
	stats := lastStats(stderr.String())
	ops := stats["bulk_writes"] + stats["finds"] + stats["insert_calls"]
	fmt.Printf("caught up: all %d hits in MongoDB after %.2fs (wall until exit %.2fs)\n", got, caughtUp.Seconds(), wall.Seconds())
	fmt.Printf("logtally CPU: %.3fs (user %.3fs, sys %.3fs), %.0f%% of one core over the catch-up\n",
		cpu.Seconds(), time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds(), 100*cpu.Seconds()/wall.Seconds())
	fmt.Printf("logtally peak RSS: %.1f MiB\n", float64(ru.Maxrss)/1024)
	fmt.Printf("database: %d batches, %d bulk writes, %d updates, %d finds, %d inserted buckets (%d insert calls)\n",
		stats["batches"], stats["bulk_writes"], stats["updates"], stats["finds"], stats["inserts"], stats["insert_calls"])
	fmt.Printf("per 1,000 hits: %.4f database round trips, %.4f bucket updates\n",
		1000*float64(ops)/float64(got), 1000*float64(stats["updates"])/float64(got))

	return conf, cpu, nil
}

// dryRun runs `logtally replay -dry-run` on the log n times, with the
// daemon's config so that it parses and counts with the same source
// settings (max_pages_per_minute's limiter among them), on one goroutine
// as the daemon's aggregator does (-jobs 1: the parallel dry run spends a
// little more CPU for its speed), and returns the median of its user+sys
// CPU time.
func dryRun(bin, conf, logPath string, n int) (time.Duration, error) {
	cpus := make([]time.Duration, 0, n)
	for range n {
		cmd := exec.Command(bin, "replay", "-dry-run", "-jobs", "1", "-config", conf, logPath)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("logtally replay -dry-run: %v\n%s", err, stderr.String())
		}
		cpus = append(cpus, cpuTime(cmd.ProcessState))
	}
	slices.Sort(cpus)
	return cpus[n/2], nil
}

// cpuTime is a finished process's user+sys CPU time.
func cpuTime(ps *os.ProcessState) time.Duration {
	ru := ps.SysUsage().(*syscall.Rusage)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// generate writes lines combined-format lines spread evenly over the given
// minutes, returning the file size.
func generate(path string, lines, pages, minutes int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(7, 7))
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	span := minutes * 60
	var b []byte
	for i := 0; i < lines; i++ {
		ts := base.Add(time.Duration(i*span/lines) * time.Second)
		b = b[:0]
		b = fmt.Appendf(b, "2001:db8:%x::%x - - [%s] \"GET /page/%d?ref=%d HTTP/1.1\" 200 %d \"https://example.com/\" \"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36\"\n",
			rng.IntN(65536), rng.IntN(65536), ts.Format("02/Jan/2006:15:04:05 -0700"), rng.IntN(pages), rng.IntN(1000), 200+rng.IntN(50000))
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), f.Close()
}

var kvRe = regexp.MustCompile(`(\w+)=(\d+)`)

// lastStats reads the counters of logtally's last "stats" log line.
func lastStats(log string) map[string]int64 {
	out := map[string]int64{}
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "msg=stats") {
			for _, m := range kvRe.FindAllStringSubmatch(lines[i], -1) {
				out[m[1]], _ = strconv.ParseInt(m[2], 10, 64)
			}
			break
		}
	}
	return out
}
