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
//
//   - eight gzip files (different days, same size) replayed together
//     (-jobs left at its default, the number of cores) against zcat over
//     them one after another.
//
//   - both cores (issue 21; bench/replay/dry.go): `replay -dry-run` with
//     -jobs 1 and -jobs N (default every core) over a realistic log
//     (-dry-lines lines of internal/loggen, as bench/gen writes them),
//     plain against cat into a pipe and its zstd copy against zstd -dc,
//     and over the eight gzip files against zcat: lines/s by wall time and
//     by CPU time on every core (lines / (CPU / cores): what the cores
//     give when nothing else runs), and the CPU a line. -dry-only measures
//     these alone, without a server.
//
// Then it prints each ratio against issue 9's targets and whether it is
// met (and issue 21's: a replay reads at least 8 M lines/s, from its
// start until its files are closed, the embedded server sharing the
// cores once the first batch is flushed): CPU within 1.5x of the dry run; a compressed replay's wall time
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
//	go run ./bench/replay -dry-only       # the dry run on every core
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/logtally/logtally/digits"
	"github.com/logtally/logtally/internal/benchutil"
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
	dryLines                                                                 int
	timeout                                                                  time.Duration
	keep, verbose, dryOnly                                                   bool
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
	flag.IntVar(&o.dryLines, "dry-lines", 2_000_000, "realistic lines (internal/loggen) of the log the dry run reads on every core")
	flag.BoolVar(&o.dryOnly, "dry-only", false, "measure only the dry run on every core (no server, no replay into MongoDB)")
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
	fmt.Printf("log: %s lines, %d pages over %d minutes: plain %s, gz %s, zst %s\n", digits.Group(o.lines), o.pages, o.minutes,
		mb(sizes[single]), mb(sizes[single+".gz"]), mb(sizes[single+".zst"]))
	fmt.Printf("replayed together: %d gz files of %s lines each (one day each), %s in all\n", o.files, digits.Group(o.multiLines), mb(multiSize))

	if o.bin != "" {
		b.bin = o.bin
	} else if out, err := exec.Command("go", "build", "-o", b.bin, "./cmd/logtally").CombinedOutput(); err != nil {
		return fmt.Errorf("build logtally (run from the repository root): %v\n%s", err, out)
	}
	dryChecks, err := b.dryCores(logs, multi, o.multiLines)
	if err != nil {
		return err
	}
	if o.dryOnly {
		fmt.Printf("\n== targets (issue 21, the dry run on every core)\n")
		met := true
		for _, c := range dryChecks {
			fmt.Println(c.line)
			met = met && c.met
		}
		if !met {
			fmt.Println("some targets are not met")
		}
		return nil
	}
	b.uri = os.Getenv("MONGODB_URI")
	server := "MONGODB_URI"
	if b.uri == "" {
		stop, uri, err := benchutil.StartServer(tmp)
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

	fmt.Printf("load average before: %s\n", benchutil.Loadavg())

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
		if rep.ok() && rep.read > 0 {
			checks = append(checks, atLeast(kind+": replay reading (from its start), M lines/s", float64(o.lines)/rep.read.Seconds()/1e6, targetLinesPerSec/1e6))
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
		if rep.read > 0 {
			checks = append(checks, atLeast(fmt.Sprintf("%d gz files: replay reading (from its start), M lines/s", o.files),
				float64(o.files*o.multiLines)/rep.read.Seconds()/1e6, targetLinesPerSec/1e6))
		}
	}
	fmt.Printf("\nload average after: %s\n", benchutil.Loadavg())

	fmt.Printf("\n== targets (issue 9; issue 21's dry run on every core)\n")
	checks = append(checks, dryChecks...)
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
		db.ops, db.updates, db.inserts, db.finds, db.buckets, digits.Group(opsPerHitOneByOne*db.hits))
	fmt.Printf("%-28s %s hits in the monthly buckets, %s in the summary\n", "check:", digits.Group(db.inDB), digits.Group(db.hits))
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
		val = digits.Group(int64(v)) + "x"
	}
	return check{line: fmt.Sprintf("  %-56s %8s  (target %s %g: %s)", name, val, cmp, target, verdict), met: met}
}
