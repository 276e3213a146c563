// Package loggen makes realistic access-log lines for benchmarks and tests:
// 2,000 pages of Zipf popularity, query strings, IPv4 and IPv6 clients,
// referers and long user agents, times in order over about a day (12 lines a
// second on average). Combined lines average about 200 bytes. The lines
// depend only on the seed.
package loggen

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

var (
	sections = []string{"blog", "docs", "products", "news", "api/v2", "static/js", "static/css", "img"}
	words    = []string{"getting-started", "release-notes", "pricing", "install", "faq", "search", "index.html", "app.min.js", "logo.png", "2024", "05", "hello-world"}
	queries  = []string{"", "", "", "", "?utm_source=twitter&utm_medium=social", "?page=2", "?q=log+parser&lang=en", "?id=12345&ref=home"}
	agents   = []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
		"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
		"curl/8.5.0",
	}
	methods  = []string{"GET", "GET", "GET", "GET", "GET", "GET", "POST", "HEAD"}
	statuses = []string{"200", "200", "200", "200", "200", "304", "304", "404", "301", "500"}
	pages    = func() []string {
		p := make([]string, 2000)
		for i := range p {
			p[i] = fmt.Sprintf("/%s/%s-%d", sections[i%len(sections)], words[i*7%len(words)], i)
		}
		return p
	}()
)

// Gen makes lines. It is not safe for concurrent use.
type Gen struct {
	rng  *rand.Rand
	zipf *rand.Zipf
	t    time.Time
}

// New returns a generator whose lines depend only on seed.
func New(seed uint64) *Gen {
	rng := rand.New(rand.NewPCG(seed, 2))
	return &Gen{
		rng:  rng,
		zipf: rand.NewZipf(rng, 1.1, 1, uint64(len(pages)-1)),
		t:    time.Date(2024, 5, 17, 0, 0, 0, 0, time.FixedZone("", 2*3600)),
	}
}

// Append appends the next line to b, without its newline: combined format,
// or common (no referer and user agent) when common is true.
func (g *Gen) Append(b []byte, common bool) []byte {
	rng := g.rng
	if rng.IntN(3) == 0 {
		b = fmt.Appendf(b, "2001:db8:%x:%x::%x", rng.IntN(65536), rng.IntN(65536), rng.IntN(65536))
	} else {
		b = fmt.Appendf(b, "%d.%d.%d.%d", 1+rng.IntN(223), rng.IntN(256), rng.IntN(256), 1+rng.IntN(254))
	}
	g.t = g.t.Add(time.Duration(rng.ExpFloat64() * float64(86*time.Millisecond)))
	b = append(b, " - - ["...)
	b = g.t.AppendFormat(b, "02/Jan/2006:15:04:05 -0700")
	b = append(b, `] "`...)
	b = append(b, methods[rng.IntN(len(methods))]...)
	b = append(b, ' ')
	b = append(b, pages[g.zipf.Uint64()]...)
	b = append(b, queries[rng.IntN(len(queries))]...)
	b = append(b, ` HTTP/1.1" `...)
	b = append(b, statuses[rng.IntN(len(statuses))]...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(rng.IntN(200000)), 10)
	if common {
		return b
	}
	b = append(b, ` "`...)
	if rng.IntN(4) == 0 {
		b = append(b, "https://www.example.com"...)
		b = append(b, pages[g.zipf.Uint64()]...)
	} else {
		b = append(b, '-')
	}
	b = append(b, `" "`...)
	b = append(b, agents[rng.IntN(len(agents))]...)
	return append(b, '"')
}
