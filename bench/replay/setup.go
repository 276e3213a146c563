package main

// Setting up: the server in another process, the logs, formatting.

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
)

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
