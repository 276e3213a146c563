package tailer

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtally/logtally/stream"
)

// BenchmarkCatchUp tails a ~50 MB log from 0 to its end: the catch-up of a
// half-million-line log after a restart. The consumer only takes the chunks
// and releases them.
func BenchmarkCatchUp(b *testing.B) {
	p := filepath.Join(b.TempDir(), "access.log")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	var size int64
	lines := 0
	for size < 50<<20 {
		n, _ := fmt.Fprintf(w, "10.1.%d.%d - - [01/Jan/2024:10:%02d:%02d +0000] \"GET /articles/%d?ref=home HTTP/1.1\" 200 5123 \"-\" \"Mozilla/5.0\"\n",
			lines%250, lines%200, lines/60%60, lines%60, lines)
		size += int64(n)
		lines++
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()

	for _, rs := range []int{DefaultReadSize, 1 << 20} {
		b.Run(fmt.Sprintf("read=%dKiB", rs>>10), func(b *testing.B) { benchCatchUp(b, p, size, lines, rs) })
	}
	// The floor on this machine: the same preads into fresh buffers, no
	// tailer, no channel.
	b.Run("baseline-pread", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			f, err := os.Open(p)
			if err != nil {
				b.Fatal(err)
			}
			var off int64
			for off < size {
				buf := make([]byte, DefaultReadSize)
				n, _ := f.ReadAt(buf, off)
				off += int64(n)
			}
			f.Close()
		}
	})
}

func benchCatchUp(b *testing.B, p string, size int64, lines, readSize int) {
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		out := make(chan stream.Chunk, 4)
		tl, err := New(Config{Source: "bench", Paths: []string{p}, ReadSize: readSize}, out)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		go func() { ran <- tl.Run(ctx) }()
		var got int64
		for got < size {
			c := <-out
			got += int64(len(c.Data))
			c.Release()
		}
		cancel()
		if err := <-ran; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
