// Command gen writes a realistic combined access log for benchmarks (see
// internal/loggen): about 200 bytes a line, 2,000 pages of Zipf
// popularity, query strings, IPv4 and IPv6 clients, referers and user
// agents, times in order over about a day. The output depends only on
// -lines and -seed.
//
//	go run ./bench/gen -lines 1000000 -o /tmp/access.log
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/logtally/logtally/internal/loggen"
)

func main() {
	lines := flag.Int("lines", 1_000_000, "number of lines")
	out := flag.String("o", "", "output `file` (default stdout)")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := gen(*lines, *out, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func gen(n int, out string, seed uint64) error {
	f := os.Stdout
	if out != "" {
		var err error
		if f, err = os.Create(out); err != nil {
			return err
		}
		defer f.Close()
	}
	w := bufio.NewWriterSize(f, 1<<20)
	g := loggen.New(seed)
	var b []byte
	for i := 0; i < n; i++ {
		b = append(g.Append(b[:0], false), '\n')
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return w.Flush()
}
