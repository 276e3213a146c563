package main

// Both cores: the dry run over one large realistic log (internal/loggen,
// as bench/gen writes it), plain and zstd, and over several gzip files, on
// one job and on -jobs (default: every core), against cat and zstd -dc on
// the same files in the same run.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/klauspost/compress/zstd"
	"github.com/logtally/logtally/digits"
	"github.com/logtally/logtally/internal/benchutil"
	"github.com/logtally/logtally/internal/loggen"
)

// Issue 21's targets for the dry run.
const (
	targetLinesPerSec  = 8_000_000 // dry-run lines/s on every core, at least
	targetZstdVsDecomp = 1.1       // zstd dry run wall / zstd -dc wall, at most
)

// writeRealistic writes n loggen lines (seed 1, as bench/gen) to path and
// a zstd copy to path+".zst".
func writeRealistic(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zf, err := os.Create(path + ".zst")
	if err != nil {
		return err
	}
	defer zf.Close()
	zw, err := zstd.NewWriter(zf)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(io.MultiWriter(f, zw), 1<<20)
	g := loggen.New(1)
	var b []byte
	for range n {
		b = append(g.Append(b[:0], false), '\n')
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// dryCores measures the dry run on one job and on every core, and the
// tools beside it, and returns the checks against issue 21's targets.
func (b *bench) dryCores(logs string, multi []string, multiLines int) ([]check, error) {
	o := b.o
	big := filepath.Join(logs, "realistic.log")
	if err := writeRealistic(big, o.dryLines); err != nil {
		return nil, err
	}
	for _, f := range []string{big, big + ".zst"} {
		if err := b.measure(b.devnul, "cat", f).err; err != nil { // warm the page cache
			return nil, err
		}
	}
	jobs := cmpOr(o.jobs, runtime.GOMAXPROCS(0))
	dry := func(j int, files ...string) func() sample {
		return func() sample {
			return b.measure(nil, b.bin, append([]string{"replay", "-dry-run", "-jobs", strconv.Itoa(j), "-site", site, "-format", format}, files...)...)
		}
	}
	var checks []check
	rate := func(name string, lines int, st stats) {
		if !st.ok() {
			return
		}
		fmt.Printf("%-28s %s lines/s by wall; %s lines/s by CPU on %d cores (lines / (CPU / cores)); %.0f ns CPU a line\n", "  "+name+":",
			digits.Group(int64(float64(lines)/st.wall.Seconds())), digits.Group(int64(float64(lines)/(st.cpu.Seconds()/float64(runtime.NumCPU())))),
			runtime.NumCPU(), st.cpu.Seconds()*1e9/float64(lines))
	}

	fmt.Printf("\n== both cores: the dry run of %s realistic lines (internal/loggen), -jobs 1 and -jobs %d, vs cat (into a pipe)\n", digits.Group(o.dryLines), jobs)
	fmt.Printf("load average before: %s\n", benchutil.Loadavg())
	st := b.interleave([]task{
		{name: "replay -dry-run -jobs 1", run: dry(1, big)},
		{name: fmt.Sprintf("replay -dry-run -jobs %d", jobs), run: dry(jobs, big)},
		{name: "cat", run: func() sample { return b.measure(io.Discard, "cat", big) }},
	})
	rate("-jobs 1", o.dryLines, st[0])
	rate(fmt.Sprintf("-jobs %d", jobs), o.dryLines, st[1])
	if st[0].ok() && st[1].ok() {
		checks = append(checks,
			atLeast(fmt.Sprintf("plain: dry run -jobs %d, M lines/s by wall", jobs), float64(o.dryLines)/st[1].wall.Seconds()/1e6, targetLinesPerSec/1e6),
			atLeast(fmt.Sprintf("plain: dry run -jobs %d, M lines/s by CPU on %d cores", jobs, runtime.NumCPU()), float64(o.dryLines)/(st[1].cpu.Seconds()/float64(runtime.NumCPU()))/1e6, targetLinesPerSec/1e6))
		fmt.Printf("%-28s %.2f (jobs %d CPU / jobs 1 CPU), wall %.2f\n", "  parallel cost:", st[1].cpu.Seconds()/st[0].cpu.Seconds(), jobs, st[1].wall.Seconds()/st[0].wall.Seconds())
	}
	if st[1].ok() && st[2].ok() {
		fmt.Printf("%-28s %.2f\n", "  dry run wall / cat wall:", st[1].wall.Seconds()/st[2].wall.Seconds())
	}

	fmt.Printf("\n== both cores: the dry run of the zstd copy vs zstd -dc\n")
	tasks := []task{
		{name: "replay -dry-run -jobs 1", run: dry(1, big+".zst")},
		{name: fmt.Sprintf("replay -dry-run -jobs %d", jobs), run: dry(jobs, big+".zst")},
		b.tool("zstd -dc", []string{"zstd", "-dc"}, big+".zst"),
	}
	st = b.interleave(tasks)
	rate("-jobs 1", o.dryLines, st[0])
	rate(fmt.Sprintf("-jobs %d", jobs), o.dryLines, st[1])
	if st[1].ok() && st[2].ok() {
		checks = append(checks, ratio(fmt.Sprintf("zst: dry run -jobs %d wall / zstd -dc wall", jobs), st[1].wall.Seconds()/st[2].wall.Seconds(), targetZstdVsDecomp, false))
		fmt.Printf("%-28s %.2f (CPU: %.2f)\n", "  dry run / zstd -dc:", st[1].wall.Seconds()/st[2].wall.Seconds(), st[1].cpu.Seconds()/st[2].cpu.Seconds())
	}

	if len(multi) > 0 {
		total := len(multi) * multiLines
		fmt.Printf("\n== both cores: the dry run of %d gz files (%s lines) vs zcat over them\n", len(multi), digits.Group(total))
		st = b.interleave([]task{
			{name: "replay -dry-run -jobs 1", run: dry(1, multi...)},
			{name: fmt.Sprintf("replay -dry-run -jobs %d", jobs), run: dry(jobs, multi...)},
			b.tool("zcat, one after another", []string{"zcat"}, multi...),
		})
		rate("-jobs 1", total, st[0])
		rate(fmt.Sprintf("-jobs %d", jobs), total, st[1])
		if st[1].ok() {
			checks = append(checks,
				atLeast(fmt.Sprintf("%d gz files: dry run -jobs %d, M lines/s by wall", len(multi), jobs), float64(total)/st[1].wall.Seconds()/1e6, targetLinesPerSec/1e6),
				atLeast(fmt.Sprintf("%d gz files: dry run -jobs %d, M lines/s by CPU", len(multi), jobs), float64(total)/(st[1].cpu.Seconds()/float64(runtime.NumCPU()))/1e6, targetLinesPerSec/1e6))
		}
	}
	fmt.Printf("load average after: %s\n", benchutil.Loadavg())
	return checks, nil
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// atLeast is a check of a rate in millions of lines a second against its
// target.
func atLeast(name string, mPerSec, target float64) check {
	verdict := "met"
	if mPerSec < target {
		verdict = "NOT met"
	}
	return check{line: fmt.Sprintf("  %-56s %8.2f  (target >= %g: %s)", name, mPerSec, target, verdict), met: mPerSec >= target}
}
