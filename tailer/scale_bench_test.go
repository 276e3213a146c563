package tailer

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/stream"
)

// Issue 29: one source whose glob matches many one-line files (a hosting
// server's per-site logs).
//
//	go test -run '^$' -bench ManyFiles -benchtime 1x ./tailer -args -scale.files=100,10000,50000
//
// For each number of files (-scale.files, default 100 and 10,000; the
// first is the baseline) it prints the time from Run to every line
// handed on, the live heap and the peak RSS of the process (VmHWM, reset
// before each size), the descriptors open once every line is read, the
// CPU one rescan takes (its goroutine's thread time, averaged over a second of rescans)
// and the CPU the process spends per second while every file is quiet
// (the polls), and the time a restart with every file's checkpoint takes
// to start, each beside its ratio to the baseline. A size that has not
// handed on every line within -scale.cap says so and is cut short.
var (
	scaleFiles = flag.String("scale.files", "100,10000", "numbers of files for BenchmarkManyFiles; the first is the baseline")
	scaleCap   = flag.Duration("scale.cap", 3*time.Minute, "BenchmarkManyFiles gives a size up when its lines are not all read by then")
)

// scaleResult is what BenchmarkManyFiles measured for one number of files.
type scaleResult struct {
	files     int
	read      int64         // lines handed on
	start     time.Duration // Run to every line handed on (or to the cap)
	heap      uint64        // live heap once every line is read, after a GC
	hwm       int64         // peak RSS, KiB
	fds       int           // descriptors open once every line is read
	rescan    time.Duration // thread CPU of one rescan (median)
	idleCPU   time.Duration // process CPU per second, every file quiet
	restart   time.Duration // a restart with every file's checkpoint, to its start done (-1: gave up)
	completed bool
}

func BenchmarkManyFiles(b *testing.B) {
	var sizes []int
	for _, s := range strings.Split(*scaleFiles, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			b.Fatalf("-scale.files: bad number %q", s)
		}
		sizes = append(sizes, n)
	}
	var results []scaleResult
	for _, n := range sizes {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			writeManyFiles(b, dir, n)
			var r scaleResult
			for range b.N {
				r = measureManyFiles(b, dir, n)
			}
			b.ReportMetric(r.start.Seconds(), "s-to-all-lines")
			b.ReportMetric(float64(r.hwm)/1024, "MB-peak-RSS")
			b.ReportMetric(float64(r.rescan.Microseconds())/1000, "ms-CPU/rescan")
			results = append(results, r)
		})
	}
	if len(results) == 0 {
		return
	}
	base := results[0]
	ratio := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("x%.1f", a/b)
	}
	fmt.Printf("\nBenchmarkManyFiles: one source, one one-line file per site (%d cores); ratios against %d files\n", runtime.NumCPU(), base.files)
	fmt.Printf("%8s %14s %18s %16s %16s %10s %20s %18s %16s\n", "files", "lines read", "start to all lines", "live heap", "peak RSS", "fds", "CPU per rescan", "idle CPU per s", "restart")
	for _, r := range results {
		note := ""
		if !r.completed {
			note = fmt.Sprintf("  GAVE UP after %v", r.start.Round(time.Second))
		}
		fmt.Printf("%8d %14d %10.2fs %7s %9.1fMB %6s %9.1fMB %6s %4d %5s %12.2fms %7s %10.1fms %7s %8.2fs %7s%s\n",
			r.files, r.read,
			r.start.Seconds(), ratio(float64(r.start), float64(base.start)),
			float64(r.heap)/1e6, ratio(float64(r.heap), float64(base.heap)),
			float64(r.hwm)/1024, ratio(float64(r.hwm), float64(base.hwm)),
			r.fds, ratio(float64(r.fds), float64(base.fds)),
			float64(r.rescan.Microseconds())/1000, ratio(float64(r.rescan), float64(base.rescan)),
			float64(r.idleCPU.Microseconds())/1000, ratio(float64(r.idleCPU), float64(base.idleCPU)),
			r.restart.Seconds(), ratio(float64(r.restart), float64(base.restart)),
			note)
	}
	for _, r := range results[1:] {
		fmt.Printf("per file over the baseline at %d files: live heap %.0f B, peak RSS %.0f B\n", r.files,
			float64(int64(r.heap)-int64(base.heap))/float64(r.files-base.files),
			float64(r.hwm-base.hwm)*1024/float64(r.files-base.files))
	}
}

// writeManyFiles writes n one-line files dir/many/fNNNNN.log.
func writeManyFiles(b *testing.B, dir string, n int) {
	b.Helper()
	many := filepath.Join(dir, "many")
	if err := os.Mkdir(many, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		line := fmt.Sprintf("10.1.%d.%d - - [01/Jan/2024:10:00:00 +0000] \"GET /site/%d HTTP/1.1\" 200 512 \"-\" \"Mozilla/5.0\"\n", i%250, i%200, i)
		if err := os.WriteFile(filepath.Join(many, fmt.Sprintf("f%05d.log", i)), []byte(line), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// measureManyFiles follows the n files of dir/many with the daemon's
// settings (1 MiB reads, a channel of 4, idle files polled every second)
// and measures it. The consumer counts the lines and releases the chunks,
// and stops for commitPause once a second.
func measureManyFiles(b *testing.B, dir string, n int) scaleResult {
	b.Helper()
	runtime.GC()
	resetPeakRSS(b)
	r := scaleResult{files: n}
	out := make(chan stream.Chunk, 4)
	tl, err := New(Config{
		Source: "bench", Paths: []string{filepath.Join(dir, "many", "*.log")},
		ReadSize: 1 << 20, IdlePollInterval: time.Second,
		RescanInterval: time.Hour, // rescans are measured below, one at a time
	}, out)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var lines atomic.Int64
	all := make(chan struct{})
	var cpMu sync.Mutex
	cps := make(map[string]stream.Checkpoint) // the last checkpoint of each file, for the restart
	go func() {
		// The daemon's aggregator commits about once a second; the
		// tailers' sends wait meanwhile.
		lastPause := time.Now()
		for {
			select {
			case c := <-out:
				cpMu.Lock()
				if c.Done {
					delete(cps, c.Checkpoint.Key())
				} else {
					cps[c.Checkpoint.Key()] = c.Checkpoint
				}
				cpMu.Unlock()
				if lines.Add(int64(bytes.Count(c.Data, []byte{'\n'}))) == int64(n) {
					close(all)
				}
				c.Release()
				if time.Since(lastPause) >= time.Second {
					time.Sleep(commitPause) // a consumer's commit, paced: time is the point
					lastPause = time.Now()
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	began := time.Now()
	ran := make(chan error, 1)
	go func() { ran <- tl.Run(ctx) }()
	select {
	case <-all:
		r.completed = true
	case <-time.After(*scaleCap):
	}
	r.start = time.Since(began)
	r.read = lines.Load()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.heap = ms.HeapAlloc
	r.fds = openFDs(b)
	if r.completed {
		// Rescans, on this goroutine's own thread (Run rescans only
		// every hour, so none runs concurrently), for a second at
		// least: a thread's CPU time is counted in scheduler ticks.
		runtime.LockOSThread()
		before, began, k := threadCPU(b), time.Now(), 0
		for ; k < 5 || time.Since(began) < time.Second; k++ {
			tl.rescan(ctx)
		}
		r.rescan = (threadCPU(b) - before) / time.Duration(k)
		runtime.UnlockOSThread()
		// Every file quiet: the polls.
		before = processCPU(b)
		time.Sleep(3 * time.Second) // the CPU of 3 s of idle polls: time is the point
		r.idleCPU = (processCPU(b) - before) / 3
	}
	r.hwm = peakRSS(b)
	cancel()
	if !r.completed {
		return r // Run may be stuck in its start: left running
	}
	select {
	case err := <-ran:
		if err != nil {
			b.Fatal(err)
		}
	case <-time.After(*scaleCap):
		b.Fatal("Run did not return")
	}
	// A restart with every file's checkpoint: until its start is done.
	cpMu.Lock()
	restored := slices.Collect(maps.Values(cps))
	cpMu.Unlock()
	out2 := make(chan stream.Chunk, 4)
	tl2, err := New(Config{
		Source: "bench", Paths: []string{filepath.Join(dir, "many", "*.log")}, Checkpoints: restored,
		ReadSize: 1 << 20, IdlePollInterval: time.Second, RescanInterval: time.Hour,
		Since: time.Now(), // every file's checkpoint is committed: nothing to recover
	}, out2)
	if err != nil {
		b.Fatal(err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() {
		for {
			select {
			case c := <-out2:
				c.Release()
			case <-ctx2.Done():
				return
			}
		}
	}()
	began = time.Now()
	ran2 := make(chan error, 1)
	go func() { ran2 <- tl2.Run(ctx2) }()
	select {
	case <-tl2.Started():
		r.restart = time.Since(began)
	case <-time.After(*scaleCap):
		r.restart = -1
	}
	cancel2()
	if r.restart >= 0 {
		<-ran2
	}
	return r
}

// commitPause is how long BenchmarkManyFiles's consumer stops taking
// chunks once a second, as the daemon's aggregator does while it commits.
const commitPause = 100 * time.Millisecond

// resetPeakRSS resets the process's VmHWM (Linux: clear_refs 5).
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("cannot reset the peak RSS: %v", err)
	}
}

// peakRSS returns VmHWM in KiB.
func peakRSS(b *testing.B) int64 {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func openFDs(b *testing.B) int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		b.Fatal(err)
	}
	return len(es)
}

// threadCPU returns the CPU time of the calling thread (RUSAGE_THREAD).
func threadCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
