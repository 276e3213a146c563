package replay

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/tailer"
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
//	go test -run '^$' -bench ReadZstd -benchtime 3x ./replay/
func BenchmarkReadZstd(b *testing.B) {
	if _, err := exec.LookPath("zstd"); err != nil {
		b.Skip("no zstd command")
	}
	name := filepath.Join(b.TempDir(), "access.log.zst")
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	zw, _ := zstd.NewWriter(f)
	w := bufio.NewWriterSize(zw, 1<<20)
	g := loggen.New(1)
	var line []byte
	for range 1_000_000 {
		line = append(g.Append(line[:0], false), '\n')
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()

	var readCPU, readWall, toolCPU, toolWall time.Duration
	b.ResetTimer()
	for range b.N {
		c0, w0 := cpuSelf(), time.Now()
		_, err := readStream(context.Background(), name, dryRunSource, nil, 0, false, 1<<20, func(c tailer.Chunk) error {
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
