// Command replay measures `logtally replay` writing archived logs into a
// MongoDB-wire server running in another process (the embedded FerretDB of
// internal/cmd/demo, or the MongoDB in MONGODB_URI), against the baselines
// it must be compared with, all measured in the same run:
//
//   - one log (1,000,000 lines, 10 pages over 10 minutes by default, so the
//     embedded server's work stays small) as plain, gzip and zstd files.
//     For each: the replay's wall time, its own CPU seconds (user+sys, from
//     the child's rusage) and peak RSS; `replay -dry-run` on the same file
//     (CPU); `zcat` / `zstd -dc` alone on the compressed ones (wall and CPU);
//     the database operations the replay issued (from its summary line
//     "database: ops=N updates=U inserts=I finds=F bucket_writes=B") next to one
//     upsert per hit (a daily and a monthly one: 2 per hit); and the hits
//     found in the monthly buckets afterwards.
//   - eight gzip files (different days, same size) replayed together
//     (-jobs left at its default, the number of cores) against zcat over
//     them one after another.
//
// Then it prints each ratio against issue 9's targets and whether it is
// met: CPU within 1.5x of the dry run; a compressed replay's wall time
// within 1.1x of its decompressor's; the eight files in at most 0.6x of
// the sequential decompressor's wall time; at least 1,000x fewer database
// operations than one upsert per hit.
//
// Every replay runs with a fresh state dir and a fresh database, so that
// no replay finds the file already counted by an earlier one (the plain,
// gzip and zstd files hold the same lines). Each measurement is taken
// -runs times and the medians are printed (peak RSS: the largest).
//
//	go run ./bench/replay                 # from the repository root
//	go run ./bench/replay -runs 1 -lines 200000
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// site and format are the generated logs' source settings, passed to every
// replay as -site and -format.
const (
	site   = "bench.example.com"
	format = "combined"
)

// Issue 9's targets.
const (
	targetCPUVsDryRun    = 1.5  // replay CPU / dry-run CPU, at most
	targetWallVsDecomp   = 1.1  // compressed replay wall / decompressor wall, at most
	targetParallelVsSeq  = 0.6  // eight files' replay wall / sequential decompressor wall, at most
	targetFewerOps       = 1000 // upsert-per-hit ops / replay ops, at least
	opsPerHitOneByOne    = 2    // a daily and a monthly upsert per hit
	monthlyCollection    = "monthly"
	defaultReplayTimeout = 30 * time.Minute
)

type settings struct {
	lines, pages, minutes, files, multiLines, runs, replayRuns, maxOps, jobs int
	timeout                                                                  time.Duration
	keep, verbose                                                            bool
	bin                                                                      string
}

func main() {
	var o settings
	flag.IntVar(&o.lines, "lines", 1_000_000, "lines in the log replayed as plain, gz and zst")
	flag.IntVar(&o.pages, "pages", 10, "distinct pages")
	flag.IntVar(&o.minutes, "minutes", 10, "minutes of log time each log spans")
	flag.IntVar(&o.files, "files", 8, "compressed (gz) files replayed together")
	flag.IntVar(&o.multiLines, "files-lines", 0, "lines in each of those files (default: -lines)")
	flag.IntVar(&o.runs, "runs", 3, "runs of each measurement; the medians are printed")
	flag.IntVar(&o.replayRuns, "replay-runs", 1, "runs of each replay into MongoDB (slow: the embedded server takes most of their time)")
	flag.IntVar(&o.maxOps, "max-ops", 32, "flush.max_ops (keep at 32 or less against FerretDB)")
	flag.IntVar(&o.jobs, "jobs", 0, "replay -jobs for the files replayed together (0: replay's default)")
	flag.DurationVar(&o.timeout, "timeout", defaultReplayTimeout, "kill a replay running longer than this")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (logs, configs, binary)")
	flag.BoolVar(&o.verbose, "v", false, "print each replay's summary (the last run's)")
	flag.StringVar(&o.bin, "bin", "", "the logtally `binary` to measure (default: build ./cmd/logtally)")
	flag.Parse()
	if o.multiLines == 0 {
		o.multiLines = o.lines
	}
	o.runs, o.replayRuns = max(o.runs, 1), max(o.replayRuns, 1)
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "replay bench: %v\n", err)
		os.Exit(1)
	}
}

// bench holds one run's binary, server and counters.
type bench struct {
	o      settings
	tmp    string
	bin    string
	uri    string
	client *mongo.Client
	devnul *os.File
	n      int // replays run, for unique state dirs and databases
}

func run(o settings) error {
	tmp, err := os.MkdirTemp("", "logtally-replay-bench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Printf("temporary directory (kept): %s\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	b := &bench{o: o, tmp: tmp, bin: filepath.Join(tmp, "logtally")}
	if b.devnul, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0); err != nil {
		return err
	}
	defer b.devnul.Close()

	// The logs.
	logs := filepath.Join(tmp, "logs")
	if err := os.Mkdir(logs, 0o755); err != nil {
		return err
	}
	single := filepath.Join(logs, "access.log")
	if err := writeLogs(single, o.lines, o.pages, o.minutes, 1, 0, true); err != nil {
		return err
	}
	multi := make([]string, o.files)
	var wg sync.WaitGroup
	errs := make([]error, o.files)
	sem := make(chan struct{}, runtime.NumCPU())
	for i := range multi {
		multi[i] = filepath.Join(logs, fmt.Sprintf("access-day%d.log.gz", i+1))
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = writeLogs(strings.TrimSuffix(multi[i], ".gz"), o.multiLines, o.pages, o.minutes, uint64(100+i), i+1, false)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	sizes := map[string]int64{}
	var multiSize int64
	for _, f := range append([]string{single, single + ".gz", single + ".zst"}, multi...) {
		fi, err := os.Stat(f)
		if err != nil {
			return err
		}
		sizes[f] = fi.Size()
		if strings.HasPrefix(filepath.Base(f), "access-day") {
			multiSize += fi.Size()
		}
	}
	fmt.Printf("log: %s lines, %d pages over %d minutes: plain %s, gz %s, zst %s\n", group(int64(o.lines)), o.pages, o.minutes,
		mb(sizes[single]), mb(sizes[single+".gz"]), mb(sizes[single+".zst"]))
	fmt.Printf("replayed together: %d gz files of %s lines each (one day each), %s in all\n", o.files, group(int64(o.multiLines)), mb(multiSize))

	if o.bin != "" {
		b.bin = o.bin
	} else if out, err := exec.Command("go", "build", "-o", b.bin, "./cmd/logtally").CombinedOutput(); err != nil {
		return fmt.Errorf("build logtally (run from the repository root): %v\n%s", err, out)
	}
	b.uri = os.Getenv("MONGODB_URI")
	server := "MONGODB_URI"
	if b.uri == "" {
		stop, uri, err := startServer(tmp)
		if err != nil {
			return err
		}
		defer stop()
		b.uri = uri
		server = "embedded FerretDB v1.24.0 (SQLite) in another process"
	}
	if b.client, err = mongo.Connect(options.Client().ApplyURI(b.uri)); err != nil {
		return err
	}
	defer b.client.Disconnect(context.Background())
	fmt.Printf("server: %s\n", server)
	fmt.Printf("machine: %s, %d cores, %s/%s; %d runs of each (replays: %d): best wall time, median CPU, largest peak RSS (VmHWM)\n",
		runtime.Version(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, o.runs, o.replayRuns)

	// Warm the page cache.
	for f := range sizes {
		if err := b.measure(b.devnul, "cat", f).err; err != nil {
			return fmt.Errorf("cat %s: %v", f, err)
		}
	}

	fmt.Printf("load average before: %s\n", loadavg())

	var checks []check
	replayFailed := false
	decomps := map[string][]string{"gz": {"zcat"}, "zst": {"zstd", "-dc"}}
	for _, kind := range []string{"plain", "gz", "zst"} {
		file := single
		if kind != "plain" {
			file += "." + kind
		}
		fmt.Printf("\n== %s: %s, %s\n", kind, filepath.Base(file), mb(sizes[file]))
		var db dbFigures
		tasks := []task{
			{name: "replay into MongoDB", run: func() sample {
				s, f := b.replayOnce([]string{file}, int64(o.lines))
				db = f
				return s
			}, skip: replayFailed, runs: o.replayRuns, watched: true},
			{name: "replay -dry-run", run: func() sample {
				return b.measure(nil, b.bin, "replay", "-dry-run", "-site", site, "-format", format, file)
			}},
		}
		decomp := decomps[kind]
		if decomp != nil {
			tasks = append(tasks, b.tool(strings.Join(decomp, " ")+" alone", decomp, file))
		}
		st := b.interleave(tasks)
		rep, dry := st[0], st[1]
		replayFailed = replayFailed || rep.err != nil
		if rep.ok() {
			b.summary(rep.last)
		}
		if rep.ok() && dry.ok() {
			checks = append(checks, ratio(kind+": replay CPU / dry-run CPU", rep.cpu.Seconds()/dry.cpu.Seconds(), targetCPUVsDryRun, false))
		}
		if decomp != nil && rep.ok() && st[2].ok() {
			checks = append(checks, ratio(kind+": replay wall, until acknowledged / "+decomp[0]+" wall", rep.wall.Seconds()/st[2].wall.Seconds(), targetWallVsDecomp, false))
			if rep.read > 0 {
				checks = append(checks, ratio(kind+": replay wall, reading / "+decomp[0]+" wall", rep.read.Seconds()/st[2].wall.Seconds(), targetWallVsDecomp, false))
			}
		}
		if rep.ok() {
			printDB(db)
			if db.ops > 0 {
				checks = append(checks, ratio(kind+": upsert-per-hit ops / replay ops", float64(opsPerHitOneByOne*db.hits)/float64(db.ops), targetFewerOps, true))
			}
		}
	}

	// Eight files together.
	fmt.Printf("\n== %d gz files together (-jobs %s) vs zcat over them one after another\n", o.files, jobsName(o.jobs))
	var db dbFigures
	st := b.interleave([]task{
		{name: "replay into MongoDB", run: func() sample {
			s, f := b.replayOnce(multi, int64(o.files*o.multiLines))
			db = f
			return s
		}, skip: replayFailed, runs: o.replayRuns, watched: true},
		{name: "replay -dry-run", run: func() sample {
			return b.measure(nil, b.bin, append([]string{"replay", "-dry-run", "-site", site, "-format", format}, multi...)...)
		}},
		b.tool("zcat, one after another", []string{"zcat"}, multi...),
	})
	rep, dry, seq := st[0], st[1], st[2]
	replayFailed = replayFailed || rep.err != nil
	if rep.ok() {
		b.summary(rep.last)
		printDB(db)
		if seq.ok() {
			checks = append(checks, ratio(fmt.Sprintf("%d gz files: replay wall, until acknowledged / zcat", o.files),
				rep.wall.Seconds()/seq.wall.Seconds(), targetParallelVsSeq, false))
			if rep.read > 0 {
				checks = append(checks, ratio(fmt.Sprintf("%d gz files: replay wall, reading / zcat", o.files),
					rep.read.Seconds()/seq.wall.Seconds(), targetParallelVsSeq, false))
			}
		}
		if dry.ok() {
			checks = append(checks, ratio(fmt.Sprintf("%d gz files: replay CPU / dry-run CPU", o.files), rep.cpu.Seconds()/dry.cpu.Seconds(), targetCPUVsDryRun, false))
		}
	}
	fmt.Printf("\nload average after: %s\n", loadavg())

	fmt.Printf("\n== targets (issue 9)\n")
	met := true
	for _, c := range checks {
		fmt.Println(c.line)
		met = met && c.met
	}
	switch {
	case replayFailed:
		fmt.Println("replay into MongoDB failed: its figures and targets are missing")
		return errors.New("replay into MongoDB failed")
	case !met:
		fmt.Println("some targets are not met")
	default:
		fmt.Println("all targets met")
	}
	return nil
}

// printDB prints a replay's database figures.
func printDB(db dbFigures) {
	fmt.Printf("%-28s ops=%d updates=%d inserts=%d finds=%d bucket_writes=%d; one upsert per hit: %s ops\n", "database:",
		db.ops, db.updates, db.inserts, db.finds, db.buckets, group(opsPerHitOneByOne*db.hits))
	fmt.Printf("%-28s %s hits in the monthly buckets, %s in the summary\n", "check:", group(db.inDB), group(db.hits))
}

// loadavg is /proc/loadavg's first three fields: other work on the
// machine slows the wall times down.
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

// summary prints a replay's output, indented, with -v.
func (b *bench) summary(s sample) {
	if !b.o.verbose {
		return
	}
	for _, l := range strings.Split(strings.TrimRight(s.stderr+s.stdout, "\n"), "\n") {
		fmt.Printf("    | %s\n", l)
	}
}

// check is one ratio against its target.
type check struct {
	line string
	met  bool
}

// ratio formats a ratio against its target: at most target, or at least
// target when atLeast.
func ratio(name string, v, target float64, atLeast bool) check {
	met, cmp := v <= target, "<="
	if atLeast {
		met, cmp = v >= target, ">="
	}
	verdict := "met"
	if !met {
		verdict = "NOT met"
	}
	val := fmt.Sprintf("%.2f", v)
	if atLeast {
		val = group(int64(v)) + "x"
	}
	return check{line: fmt.Sprintf("  %-56s %8s  (target %s %g: %s)", name, val, cmp, target, verdict), met: met}
}

// sample is one child process's figures.
type sample struct {
	wall, user, sys time.Duration
	read            time.Duration // reading the watched files, 0 if not watched
	maxRSS          int64         // KiB
	stdout, stderr  string
	err             error
}

// task is one measurement, taken -runs times.
type task struct {
	name    string
	run     func() sample
	runs    int    // times to run (0: -runs)
	watched bool   // a replay: its reading time is known
	skip    bool   // not run (an earlier replay failed)
	why     string // printed instead of figures when skipped
}

// tool is a task running cmd (its stdout to /dev/null) on files, or one
// skipped when cmd is not installed.
func (b *bench) tool(name string, cmd []string, files ...string) task {
	if _, err := exec.LookPath(cmd[0]); err != nil {
		return task{name: name, skip: true, why: cmd[0] + " not installed"}
	}
	return task{name: name, run: func() sample { return b.measure(b.devnul, cmd[0], append(cmd[1:], files...)...) }}
}

// stats are a task's figures over its runs: the best (shortest) wall
// time, since other work on the machine only slows a run down; the median
// CPU times; the largest peak RSS. err is the first error.
type stats struct {
	wall, cpu, user, sys time.Duration
	read                 time.Duration // best reading wall time (replays), 0 if unknown
	maxRSS               int64
	last                 sample
	err                  error
	skipped              bool
}

func (s stats) ok() bool { return !s.skipped && s.err == nil }

// interleave runs the tasks -runs times, one of each in turn (so that
// other work on the machine weighs on each alike), stops running a task
// after its first error, prints each task's figures and returns them in
// the tasks' order.
func (b *bench) interleave(tasks []task) []stats {
	samples := make([][]sample, len(tasks))
	out := make([]stats, len(tasks))
	for r := range max(b.o.runs, b.o.replayRuns) {
		for i, t := range tasks {
			if t.skip || out[i].err != nil || r >= cmp.Or(t.runs, b.o.runs) {
				continue
			}
			s := t.run()
			if s.err != nil {
				out[i].err = s.err
				continue
			}
			samples[i] = append(samples[i], s)
		}
	}
	for i, t := range tasks {
		st := &out[i]
		switch {
		case t.skip:
			st.skipped = true
			why := t.why
			if why == "" {
				why = "skipped (failed above)"
			}
			fmt.Printf("%-28s %s\n", t.name+":", why)
			continue
		case st.err != nil:
			fmt.Printf("%-28s FAILED: %v\n", t.name+":", st.err)
			continue
		}
		ss := samples[i]
		med := func(get func(sample) time.Duration) time.Duration {
			ds := make([]time.Duration, len(ss))
			for i, s := range ss {
				ds[i] = get(s)
			}
			slices.Sort(ds)
			return ds[len(ds)/2]
		}
		st.cpu = med(func(s sample) time.Duration { return s.user + s.sys })
		st.user = med(func(s sample) time.Duration { return s.user })
		st.sys = med(func(s sample) time.Duration { return s.sys })
		st.wall, st.read = ss[0].wall, ss[0].read
		for _, s := range ss {
			st.wall = min(st.wall, s.wall)
			st.maxRSS = max(st.maxRSS, s.maxRSS)
			if s.read == 0 || st.read == 0 {
				st.read = 0 // unknown in one run
			} else {
				st.read = min(st.read, s.read)
			}
		}
		st.last = ss[len(ss)-1]
		fmt.Printf("%-28s wall %s  CPU %s (user %s, sys %s)  peak RSS %.1f MiB\n", t.name+":",
			secs(st.wall), secs(st.cpu), secs(st.user), secs(st.sys), float64(st.maxRSS)/1024)
		if t.watched {
			read := "unknown (the files were never seen open)"
			if st.read > 0 {
				read = secs(st.read) + ", then waiting for MongoDB's acknowledgement " + secs(st.wall-st.read)
			}
			fmt.Printf("%-28s %s\n", "  of which reading:", read)
		}
	}
	return out
}

// measure runs name with args, its stdout to out (captured when nil), and
// returns its wall time and rusage.
func (b *bench) measure(out io.Writer, name string, args ...string) sample {
	return b.measureWatching(nil, out, name, args...)
}

// measureWatching is measure that also times the reading of files: from
// the start until the child last had one of them open (see watch).
func (b *bench) measureWatching(files []string, out io.Writer, name string, args ...string) sample {
	ctx, cancel := context.WithTimeout(context.Background(), b.o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	if out == nil {
		cmd.Stdout = &stdout
	}
	start := time.Now()
	err := cmd.Start()
	var w watched
	if err == nil {
		done := make(chan struct{})
		polled := make(chan watched)
		go func() { polled <- watch(cmd.Process.Pid, files, done) }()
		err = cmd.Wait()
		close(done)
		w = <-polled
	}
	hwm := w.hwm
	s := sample{wall: time.Since(start), stdout: stdout.String(), stderr: stderr.String()}
	if !w.closed.IsZero() {
		s.read = w.closed.Sub(start)
	}
	if cmd.ProcessState != nil {
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		s.user, s.sys, s.maxRSS = time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), ru.Maxrss
		if hwm > 0 {
			s.maxRSS = hwm
		}
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("killed after %v", b.o.timeout)
	}
	if err != nil {
		s.err = fmt.Errorf("%s: %v\n%s", filepath.Base(name), err, tail(s.stderr, 10))
	}
	return s
}

// watched is what watch saw of a child process.
type watched struct {
	hwm     int64     // VmHWM, KiB
	sawOpen bool      // one of the files was seen open
	closed  time.Time // when the files were first seen all closed after the last time one was open
}

// watch polls a child every 10 ms until done is closed: its peak RSS
// (VmHWM) from /proc/PID/status, and, when files are given, whether it
// has one of them open (/proc/PID/fd).
//
// The rusage's Maxrss is no use for the peak RSS: Linux starts a child's
// with the peak RSS of the memory it ran in before exec, which after Go's
// vfork is this (larger) bench process's; VmHWM is the child's own
// memory's. It misses at most the last 10 ms of growth.
//
// The time the files were last seen open is when the replay finished
// reading them (each is closed once read), to within 10 ms: the wall time
// of the reading, apart from the wait for MongoDB's acknowledgement.
func watch(pid int, files []string, done <-chan struct{}) watched {
	status := fmt.Sprintf("/proc/%d/status", pid)
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	want := map[string]bool{}
	for _, f := range files {
		if abs, err := filepath.Abs(f); err == nil {
			want[abs] = true
		}
	}
	var w watched
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(status); err == nil {
			for l := range strings.SplitSeq(string(b), "\n") {
				if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
					if n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64); err == nil {
						w.hwm = max(w.hwm, n)
					}
				}
			}
		}
		if len(want) > 0 {
			now := time.Now()
			if fds, err := os.ReadDir(fdDir); err == nil {
				open := false
				for _, fd := range fds {
					if target, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && want[target] {
						open = true
						break
					}
				}
				switch {
				case open:
					w.sawOpen, w.closed = true, time.Time{}
				case w.sawOpen && w.closed.IsZero():
					w.closed = now
				}
			}
		}
		select {
		case <-done:
			return w
		case <-t.C:
		}
	}
}

// dbFigures are a replay's database figures: its summary's database line
// and hits, and the hits found in the monthly buckets.
type dbFigures struct {
	ops, updates, inserts, finds, buckets int64
	hits, inDB                            int64
}

var (
	dbLineRe = regexp.MustCompile(`(?m)database: ops=(\d+) updates=(\d+) inserts=(\d+) finds=(\d+) bucket_writes=(\d+)`)
	// hits: "lines: N, hits: H, in ..." (the replay's summary) or a
	// "hits  1,234" row (the dry run's).
	hitsRe = regexp.MustCompile(`(?m)(?:\bhits: |^\s*hits\s+)([\d,]+)`)
)

// replayOnce runs one `logtally replay` of files into a new database with
// a new state dir, reads its figures and the monthly buckets' total, and
// drops the database. A replay whose summary lacks the figures, or whose
// summary or buckets do not hold the want hits the files have (every line
// is a hit), fails (the sample's err).
func (b *bench) replayOnce(files []string, want int64) (sample, dbFigures) {
	s, f, err := b.replayFigures(files, want)
	if err != nil && s.err == nil {
		s.err = err
	}
	return s, f
}

// replayFigures is replayOnce returning its error apart.
func (b *bench) replayFigures(files []string, want int64) (sample, dbFigures, error) {
	b.n++
	dir := filepath.Join(b.tmp, fmt.Sprintf("replay-%d", b.n))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return sample{}, dbFigures{}, err
	}
	defer os.RemoveAll(dir)
	dbName := fmt.Sprintf("replaybench_%d_%d", time.Now().UnixNano(), b.n)
	conf := filepath.Join(dir, "logtally.toml")
	// The source's paths match none of the replayed files: they are
	// replayed with -site and -format.
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`state_dir = %q
instance = "bench"
shutdown_timeout = "5m"
[mongo]
uri = %q
database = %q
timeout = "60s"
[flush]
interval = "1s"
max_ops = %d
[buckets]
minute_retention = "0" # the generated lines are older than the default 48h
[http]
listen = ""
[[source]]
site = %q
paths = [%q]
format = %q
`, filepath.Join(dir, "state"), b.uri, dbName, b.o.maxOps, site, filepath.Join(dir, "live", "live.log"), format)), 0o600); err != nil {
		return sample{}, dbFigures{}, err
	}
	defer b.client.Database(dbName).Drop(context.Background())
	args := []string{"replay", "-config", conf, "-site", site, "-format", format}
	if b.o.jobs > 0 && len(files) > 1 {
		args = append(args, "-jobs", strconv.Itoa(b.o.jobs))
	}
	s := b.measureWatching(files, nil, b.bin, append(args, files...)...)
	if s.err != nil {
		return s, dbFigures{}, s.err
	}
	var f dbFigures
	m := dbLineRe.FindStringSubmatch(s.stdout)
	if m == nil {
		return s, f, fmt.Errorf("no line \"database: ops=N updates=U inserts=I finds=F buckets=B\" in the summary:\n%s", s.stdout)
	}
	for i, p := range []*int64{&f.ops, &f.updates, &f.inserts, &f.finds, &f.buckets} {
		*p, _ = strconv.ParseInt(m[i+1], 10, 64)
	}
	if h := hitsRe.FindStringSubmatch(s.stdout); h != nil {
		f.hits, _ = strconv.ParseInt(strings.ReplaceAll(h[1], ",", ""), 10, 64)
	} else {
		return s, f, fmt.Errorf("no hits row in the summary:\n%s", s.stdout)
	}
	var err error
	if f.inDB, err = total(b.client.Database(dbName).Collection(monthlyCollection)); err != nil {
		return s, f, fmt.Errorf("reading the monthly buckets: %v", err)
	}
	if f.inDB != want || f.hits != want {
		return s, f, fmt.Errorf("%d hits in the monthly buckets, the summary says %d, the files have %d", f.inDB, f.hits, want)
	}
	return s, f, nil
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

// writeLogs writes a combined log of lines lines, spread evenly over the
// given minutes of day 1 + dayOffset of November 2026 over pages pages,
// from seed: to path+".gz", and, when all, also to path (plain) and
// path+".zst" with the same lines.
func writeLogs(path string, lines, pages, minutes int, seed uint64, dayOffset int, all bool) error {
	var files []*os.File
	var closers []io.Closer
	var ws []io.Writer
	open := func(name string) (*os.File, error) {
		f, err := os.Create(name)
		if err == nil {
			files = append(files, f)
		}
		return f, err
	}
	gzf, err := open(path + ".gz")
	if err != nil {
		return err
	}
	gz := gzip.NewWriter(gzf)
	closers = append(closers, gz)
	ws = append(ws, gz)
	if all {
		plain, err := open(path)
		if err != nil {
			return err
		}
		zf, err := open(path + ".zst")
		if err != nil {
			return err
		}
		zw, err := zstd.NewWriter(zf)
		if err != nil {
			return err
		}
		closers = append(closers, zw)
		ws = append(ws, plain, zw)
	}
	w := bufio.NewWriterSize(io.MultiWriter(ws...), 1<<20)
	rng := rand.New(rand.NewPCG(seed, 7))
	base := time.Date(2026, 11, 1+dayOffset, 12, 0, 0, 0, time.UTC)
	span := minutes * 60
	var b []byte
	for i := range lines {
		ts := base.Add(time.Duration(i*span/lines) * time.Second)
		b = b[:0]
		b = fmt.Appendf(b, "2001:db8:%x::%x - - [%s] \"GET /page/%d?ref=%d HTTP/1.1\" 200 %d \"https://example.com/\" \"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36\"\n",
			rng.IntN(65536), rng.IntN(65536), ts.Format("02/Jan/2006:15:04:05 -0700"), rng.IntN(pages), rng.IntN(1000), 200+rng.IntN(50000))
		w.Write(b)
	}
	errs := []error{w.Flush()}
	for _, c := range closers {
		errs = append(errs, c.Close())
	}
	for _, f := range files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// total sums the monthly buckets' totals.
func total(c *mongo.Collection) (int64, error) {
	cur, err := c.Find(context.Background(), bson.D{}, options.Find().SetProjection(bson.D{{Key: "total", Value: 1}}))
	if err != nil {
		return 0, err
	}
	var docs []struct {
		Total int64 `bson:"total"`
	}
	if err := cur.All(context.Background(), &docs); err != nil {
		return 0, err
	}
	var n int64
	for _, d := range docs {
		n += d.Total
	}
	return n, nil
}

// tail is s's last n lines.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func jobsName(j int) string {
	if j == 0 {
		return "default"
	}
	return strconv.Itoa(j)
}

// group formats n with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b)
}
