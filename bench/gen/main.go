// Command gen writes a realistic combined access log for benchmarks:
// about 190 bytes a line, 2,000 pages of Zipf popularity, query strings,
// IPv4 and IPv6 clients, referers and user agents, times over about a day
// (12 lines a second on average, in order). The output depends only on
// -lines and -seed.
//
//	go run ./bench/gen -lines 1000000 -o /tmp/access.log
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"
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
	rng := rand.New(rand.NewPCG(seed, 2))
	zipf := rand.NewZipf(rng, 1.1, 1, 1999)
	sections := []string{"blog", "docs", "products", "news", "api/v2", "static/js", "static/css", "img"}
	words := []string{"getting-started", "release-notes", "pricing", "install", "faq", "search", "index.html", "app.min.js", "logo.png", "2024", "05", "hello-world"}
	pages := make([]string, 2000)
	for i := range pages {
		pages[i] = fmt.Sprintf("/%s/%s-%d", sections[i%len(sections)], words[i*7%len(words)], i)
	}
	queries := []string{"", "", "", "", "?utm_source=twitter&utm_medium=social", "?page=2", "?q=log+parser&lang=en", "?id=12345&ref=home"}
	agents := []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
		"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
		"curl/8.5.0",
	}
	methods := []string{"GET", "GET", "GET", "GET", "GET", "GET", "POST", "HEAD"}
	statuses := []string{"200", "200", "200", "200", "200", "304", "304", "404", "301", "500"}
	t := time.Date(2024, 5, 17, 0, 0, 0, 0, time.FixedZone("", 2*3600))
	var b []byte
	for i := 0; i < n; i++ {
		b = b[:0]
		if rng.IntN(3) == 0 {
			b = fmt.Appendf(b, "2001:db8:%x:%x::%x", rng.IntN(65536), rng.IntN(65536), rng.IntN(65536))
		} else {
			b = fmt.Appendf(b, "%d.%d.%d.%d", 1+rng.IntN(223), rng.IntN(256), rng.IntN(256), 1+rng.IntN(254))
		}
		t = t.Add(time.Duration(rng.ExpFloat64() * float64(86*time.Millisecond)))
		b = append(b, " - - ["...)
		b = t.AppendFormat(b, "02/Jan/2006:15:04:05 -0700")
		b = append(b, `] "`...)
		b = append(b, methods[rng.IntN(len(methods))]...)
		b = append(b, ' ')
		b = append(b, pages[zipf.Uint64()]...)
		b = append(b, queries[rng.IntN(len(queries))]...)
		b = append(b, ` HTTP/1.1" `...)
		b = append(b, statuses[rng.IntN(len(statuses))]...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(rng.IntN(200000)), 10)
		b = append(b, ` "`...)
		if rng.IntN(4) == 0 {
			b = append(b, "https://www.example.com"...)
			b = append(b, pages[zipf.Uint64()]...)
		} else {
			b = append(b, '-')
		}
		b = append(b, `" "`...)
		b = append(b, agents[rng.IntN(len(agents))]...)
		b = append(b, "\"\n"...)
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return w.Flush()
}
