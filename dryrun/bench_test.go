package dryrun

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/logtally/logtally/archive"
	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
)

// cpuSelf is this process's CPU time (user and system).
func cpuSelf() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReadZstd reads a zstd log (1,000,000 realistic lines) as the
// dry run's and a replay's readers do (Open's decompressor, the cutter,
// the chunks), delivering the chunks nowhere, against `zstd -dc` on the
// same file in the same run: the reading side's cost next to the
// decompressor's alone (reading ≤ 1.1× zstd -dc, issue 21). It reports
// the CPU and wall ratios.
//
//	go test -run '^$' -bench ReadZstd -benchtime 3x ./dryrun/
func BenchmarkReadZstd(b *testing.B) {
	if _, err := exec.LookPath("zstd"); err != nil {
		b.Skip("no zstd command")
	}
	_, name := writeZstdLog(b, 1_000_000, false)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()

	var readCPU, readWall, toolCPU, toolWall time.Duration
	b.ResetTimer()
	for range b.N {
		c0, w0 := cpuSelf(), time.Now()
		_, err := archive.Read(context.Background(), name, dryRunSource, nil, 0, false, 1<<20, func(c stream.Chunk) error {
			c.Release()
			return nil
		}, nil)
		if err != nil {
			b.Fatal(err)
		}
		readWall += time.Since(w0)
		readCPU += cpuSelf() - c0

		cmd := exec.Command("zstd", "-dc", name)
		cmd.Stdout = devnull
		w0 = time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		toolWall += time.Since(w0)
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		toolCPU += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ReportMetric(readCPU.Seconds()/toolCPU.Seconds(), "read-CPU/zstd-dc-CPU")
	b.ReportMetric(readWall.Seconds()/toolWall.Seconds(), "read-wall/zstd-dc-wall")
	b.ReportMetric(readCPU.Seconds()/float64(b.N), "read-CPU-s/op")
	b.ReportMetric(toolCPU.Seconds()/float64(b.N), "zstd-dc-CPU-s/op")
}

// writeZstdLog writes n realistic lines (loggen, seed 1) zstd-compressed
// to access.log.zst in a temporary directory, and the same lines plain to
// access.log when plain, and returns their names.
func writeZstdLog(b *testing.B, n int, plain bool) (plainName, zstName string) {
	dir := b.TempDir()
	zstName = filepath.Join(dir, "access.log.zst")
	f, err := os.Create(zstName)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zw, _ := zstd.NewWriter(f)
	var out io.Writer = zw
	if plain {
		plainName = filepath.Join(dir, "access.log")
		pf, err := os.Create(plainName)
		if err != nil {
			b.Fatal(err)
		}
		defer pf.Close()
		out = io.MultiWriter(zw, pf)
	}
	w := bufio.NewWriterSize(out, 1<<20)
	g := loggen.New(1)
	var line []byte
	for range n {
		line = append(g.Append(line[:0], false), '\n')
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	return plainName, zstName
}

// BenchmarkDryRunZstd measures the parallel dry run (every core) of a
// zstd log (1,000,000 realistic lines) against its parts, in the same run:
// decoding alone (readStream delivering nowhere), the dry run of the same
// lines plain (parsing and summing, with a plain file's reads), and
// `zstd -dc` on the file. It reports:
//
//   - zst-CPU/(decode+plain-CPU): the CPU lost between the decoder and the
//     parse workers (hand-offs, copies, caches): 1 when nothing is; a
//     little under 1 as the plain run's reads are counted twice;
//   - zst-wall/zstd-dc-wall: issue 21's figure (target ≤ 1.1);
//   - floor-wall/zstd-dc-wall: (decode + plain CPU) / cores against
//     zstd -dc's wall, the least the cores allow with these costs.
//
// The process's start (the bot lists compiled once) is left out.
//
//	go test -run '^$' -bench DryRunZstd -benchtime 3x ./dryrun/
func BenchmarkDryRunZstd(b *testing.B) {
	if _, err := exec.LookPath("zstd"); err != nil {
		b.Skip("no zstd command")
	}
	plain, zst := writeZstdLog(b, 1_000_000, true)
	cfg := parser.Config{Format: "combined", Site: "bench.example.com"}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	dry := func(name string) {
		d, err := NewParallel(cfg, 1<<20, 0, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.ReadFiles([]string{name}); err != nil {
			b.Fatal(err)
		}
	}
	dry(plain) // the bot lists compiled, the page cache warm
	type cost struct{ cpu, wall time.Duration }
	var decode, parse, both, tool cost
	self := func(c *cost, fn func()) {
		c0, w0 := cpuSelf(), time.Now()
		fn()
		c.wall += time.Since(w0)
		c.cpu += cpuSelf() - c0
	}
	b.ResetTimer()
	for range b.N {
		self(&decode, func() {
			_, err := archive.Read(context.Background(), zst, dryRunSource, nil, 0, false, 1<<20, func(c stream.Chunk) error {
				c.Release()
				return nil
			}, nil)
			if err != nil {
				b.Fatal(err)
			}
		})
		self(&parse, func() { dry(plain) })
		self(&both, func() { dry(zst) })
		cmd := exec.Command("zstd", "-dc", zst)
		cmd.Stdout = devnull
		w0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		tool.wall += time.Since(w0)
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		tool.cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	n := float64(b.N)
	parts := decode.cpu + parse.cpu
	b.ReportMetric(both.cpu.Seconds()/parts.Seconds(), "zst-CPU/(decode+plain-CPU)")
	b.ReportMetric(both.wall.Seconds()/tool.wall.Seconds(), "zst-wall/zstd-dc-wall")
	b.ReportMetric(parts.Seconds()/float64(runtime.GOMAXPROCS(0))/tool.wall.Seconds(), "floor-wall/zstd-dc-wall")
	b.ReportMetric(decode.cpu.Seconds()/n, "decode-CPU-s/op")
	b.ReportMetric(parse.cpu.Seconds()/n, "plain-CPU-s/op")
	b.ReportMetric(both.cpu.Seconds()/n, "zst-CPU-s/op")
}
