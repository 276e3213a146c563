// Command files measures `logtally run` following many one-line files,
// one per site, as a hosting server keeps them (issue 29): for each number
// of files (-files, the first the baseline) it writes them, starts the
// real logtally binary against a MongoDB-wire server in another process
// (the embedded FerretDB of internal/cmd/demo, or the MongoDB in
// MONGODB_URI), and prints the time from the start until every hit is in
// the monthly buckets, the daemon's peak RSS (VmHWM) and the descriptors
// it holds then, its CPU over the run, and each against the baseline's.
// The lines fall in one minute and three pages, so the server's
// collections stay small: what grows is the number of files.
//
//	go run ./bench/files -files 100,10000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/logtally/logtally/internal/benchutil"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func main() {
	sizes := flag.String("files", "100,10000", "numbers of files, the first the baseline")
	limit := flag.Duration("limit", 5*time.Minute, "give a size up when its hits are not all in MongoDB by then")
	flag.Parse()
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "files: bad -files %q\n", *sizes)
			os.Exit(2)
		}
		ns = append(ns, n)
	}
	if err := run(ns, *limit); err != nil {
		fmt.Fprintf(os.Stderr, "files: %v\n", err)
		os.Exit(1)
	}
}

// result is one run's figures.
type result struct {
	files    int
	hits     int64
	toAll    time.Duration // start to every hit in MongoDB (or the limit)
	hwm      int64         // KiB
	fds      int
	cpu      time.Duration
	complete bool
}

func run(ns []int, limit time.Duration) error {
	tmp, err := os.MkdirTemp("", "logtally-files-")
	if err != nil {
		return err
	}
	if os.Getenv("FILES_KEEP") == "" {
		defer os.RemoveAll(tmp)
	} else {
		fmt.Println("keeping", tmp)
	}
	bin := filepath.Join(tmp, "logtally")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/logtally").CombinedOutput(); err != nil {
		return fmt.Errorf("build logtally: %v\n%s", err, out)
	}
	uri := os.Getenv("MONGODB_URI")
	if uri == "" {
		stop, u, err := benchutil.StartServer(tmp)
		if err != nil {
			return err
		}
		defer stop()
		uri = u
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	var rs []result
	for _, n := range ns {
		r, err := measure(bin, client, uri, tmp, n, limit)
		if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	base := rs[0]
	x := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("x%.1f", a/b)
	}
	fmt.Printf("\nlogtally run over one-line files, one per site (load average %s); ratios against %d files\n", benchutil.Loadavg(), base.files)
	fmt.Printf("%8s %10s %22s %18s %12s %16s\n", "files", "hits", "start to every hit", "peak RSS", "fds", "CPU")
	for _, r := range rs {
		note := ""
		if !r.complete {
			note = "  GAVE UP"
		}
		fmt.Printf("%8d %10d %14.2fs %7s %9.1fMiB %7s %5d %6s %9.2fs %6s%s\n", r.files, r.hits,
			r.toAll.Seconds(), x(float64(r.toAll), float64(base.toAll)),
			float64(r.hwm)/1024, x(float64(r.hwm), float64(base.hwm)),
			r.fds, x(float64(r.fds), float64(base.fds)),
			r.cpu.Seconds(), x(float64(r.cpu), float64(base.cpu)), note)
	}
	return nil
}

// measure writes n files, runs the daemon until their hits are in MongoDB
// and stops it.
func measure(bin string, client *mongo.Client, uri, tmp string, n int, limit time.Duration) (result, error) {
	r := result{files: n}
	dir := filepath.Join(tmp, fmt.Sprintf("sites-%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for i := range n {
		// Each line differs (a file beginning like another is taken for
		// its copy), within one minute and three pages.
		line := fmt.Sprintf("10.1.%d.%d - - [%s] \"GET /page/%d?site=%d HTTP/1.1\" 200 512 \"-\" \"Mozilla/5.0\"\n",
			i/250%250, i%250, base.Add(time.Duration(i%60)*time.Second).Format("02/Jan/2006:15:04:05 -0700"), i%3, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("site%05d.log", i)), []byte(line), 0o644); err != nil {
			return r, err
		}
	}
	db := fmt.Sprintf("files_%d_%d", n, time.Now().UnixNano())
	defer client.Database(db).Drop(context.Background())
	conf := filepath.Join(tmp, fmt.Sprintf("logtally-%d.toml", n))
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`state_dir = %q
shutdown_timeout = "5m"
[http]
listen = ""
[mongo]
uri = %q
database = %q
timeout = "60s"
[flush]
interval = "1s"
max_ops = 32
[buckets]
minute_retention = "0"
[[source]]
site = "files.test"
paths = [%q]
format = "combined"
`, filepath.Join(tmp, fmt.Sprintf("state-%d", n)), uri, db, filepath.Join(dir, "*.log"))), 0o600); err != nil {
		return r, err
	}
	logf, err := os.Create(filepath.Join(tmp, fmt.Sprintf("daemon-%d.log", n)))
	if err != nil {
		return r, err
	}
	defer logf.Close()
	daemon := exec.Command(bin, "run", "-config", conf)
	daemon.Stdout, daemon.Stderr = logf, logf
	start := time.Now()
	if err := daemon.Start(); err != nil {
		return r, err
	}
	monthly := client.Database(db).Collection("monthly")
	for time.Since(start) < limit {
		time.Sleep(100 * time.Millisecond)
		if r.hits, _ = benchutil.MonthlyTotal(monthly); r.hits >= int64(n) {
			r.complete = true
			break
		}
	}
	r.toAll = time.Since(start)
	r.hwm = vmHWM(daemon.Process.Pid)
	if es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", daemon.Process.Pid)); err == nil {
		r.fds = len(es)
	}
	daemon.Process.Signal(syscall.SIGTERM)
	if err := daemon.Wait(); err != nil && r.complete {
		return r, fmt.Errorf("logtally (%d files): %v; see %s", n, err, logf.Name())
	}
	ru := daemon.ProcessState.SysUsage().(*syscall.Rusage)
	r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return r, nil
}

// vmHWM returns a process's peak RSS in KiB, 0 if unknown.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
