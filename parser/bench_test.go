package parser

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"testing"
	"time"
)

// benchLines returns n realistic access-log lines (combined, or common
// when common is true): IPv4 and IPv6 clients, a Zipf-popular set of pages,
// query strings, referers and long user agents. Combined lines average
// about 200 bytes. The lines are the same on every call.
func benchLines(n int, common bool) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
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
	statuses := []int{200, 200, 200, 200, 200, 304, 304, 404, 301, 500}
	t := time.Date(2024, 5, 17, 10, 5, 3, 0, time.FixedZone("", 2*3600))
	lines := make([][]byte, n)
	for i := range lines {
		var client string
		if rng.IntN(3) == 0 {
			client = fmt.Sprintf("2001:db8:%x:%x::%x", rng.IntN(65536), rng.IntN(65536), rng.IntN(65536))
		} else {
			client = fmt.Sprintf("%d.%d.%d.%d", 1+rng.IntN(223), rng.IntN(256), rng.IntN(256), 1+rng.IntN(254))
		}
		t = t.Add(time.Duration(rng.IntN(3)) * time.Second)
		line := fmt.Sprintf("%s - - [%s] \"%s %s%s HTTP/1.1\" %d %d", client, t.Format("02/Jan/2006:15:04:05 -0700"),
			methods[rng.IntN(len(methods))], pages[zipf.Uint64()], queries[rng.IntN(len(queries))],
			statuses[rng.IntN(len(statuses))], rng.IntN(200000))
		if !common {
			ref := "-"
			if rng.IntN(4) == 0 {
				ref = "https://www.example.com" + pages[zipf.Uint64()]
			}
			line += fmt.Sprintf(" %q %q", ref, agents[rng.IntN(len(agents))])
		}
		lines[i] = []byte(line)
	}
	return lines
}

func avgLen(lines [][]byte) int64 {
	total := 0
	for _, l := range lines {
		total += len(l)
	}
	return int64(total / len(lines))
}

func benchmarkParse(b *testing.B, format string) {
	lines := benchLines(4096, format == "common")
	p, err := New(Config{Format: format, Site: "example.com"})
	if err != nil {
		b.Fatal(err)
	}
	var h Hit
	for _, l := range lines {
		if o := p.Parse(l, &h); o != OK {
			b.Fatalf("%s: %q", o, l)
		}
	}
	b.SetBytes(avgLen(lines))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Parse(lines[i&4095], &h)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkParseCombined parses one realistic combined line per op.
func BenchmarkParseCombined(b *testing.B) { benchmarkParse(b, "combined") }

// BenchmarkParseCommon parses one realistic common line per op.
func BenchmarkParseCommon(b *testing.B) { benchmarkParse(b, "common") }

// BenchmarkBaselineScanLines only finds the end of one line per op with
// bytes.IndexByte over the same combined data: the floor to compare
// BenchmarkParseCombined with.
func BenchmarkBaselineScanLines(b *testing.B) {
	lines := benchLines(4096, false)
	data := append(bytes.Join(lines, []byte("\n")), '\n')
	b.SetBytes(avgLen(lines))
	b.ReportAllocs()
	b.ResetTimer()
	off, n := 0, 0
	for i := 0; i < b.N; i++ {
		j := bytes.IndexByte(data[off:], '\n')
		n += j
		off += j + 1
		if off == len(data) {
			off = 0
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
	if n < 0 {
		b.Fatal("impossible")
	}
}

// benchmarkConfig parses realistic lines of cfg's format, converted from
// the combined benchLines by conv, one per op.
func benchmarkConfig(b *testing.B, cfg Config, conv func(l []byte) []byte) {
	src := benchLines(4096, false)
	lines := make([][]byte, len(src))
	for i, l := range src {
		lines[i] = conv(l)
	}
	p, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	var h Hit
	for _, l := range lines {
		if o := p.Parse(l, &h); o != OK {
			b.Fatalf("%s: %q", o, l)
		}
	}
	b.SetBytes(avgLen(lines))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Parse(lines[i&4095], &h)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkParseVhostCombined: vhost_combined with the site from the line
// and an alias.
func BenchmarkParseVhostCombined(b *testing.B) {
	benchmarkConfig(b, Config{Format: "vhost_combined", Site: SiteFromLine, SiteAliases: map[string]string{"www.example.com": "example.com"}},
		func(l []byte) []byte { return append([]byte("www.example.com:443 "), l...) })
}

// BenchmarkParseNginx: the nginx default log_format plus $request_time.
func BenchmarkParseNginx(b *testing.B) {
	benchmarkConfig(b, Config{Format: "nginx", Site: "example.com", LogFormat: ngxDefault + " $request_time"},
		func(l []byte) []byte { return append(bytes.Clone(l), " 0.004"...) })
}

// BenchmarkParseCombinedRulesFilters: combined with keep_query, lowercase,
// strip_trailing_slash and every filter (bots included) that lets the
// line through.
func BenchmarkParseCombinedRulesFilters(b *testing.B) {
	benchmarkConfig(b, Config{Format: "combined", Site: "example.com",
		Page:   PageConfig{KeepQuery: []string{"page", "id"}, Lowercase: true, StripTrailingSlash: true},
		Filter: FilterConfig{Methods: []string{"GET", "POST", "HEAD"}, ExcludeExtensions: []string{"gif"}, ExcludePaths: []string{"/admin/"}, ExcludeUserAgents: []string{"nagios"}}},
		func(l []byte) []byte { return l })
}

var combinedSplit = regexp.MustCompile(`^(\S+) \S+ \S+ \[([^\]]+)\] "(\S+) (\S+) [^"]*" (\d+) (\d+) "[^"]*" "([^"]*)"$`)

// BenchmarkParseJSON: nginx escape=json style lines.
func BenchmarkParseJSON(b *testing.B) {
	benchmarkConfig(b, Config{Format: "json", Site: "example.com", TimeLayout: "clf"}, func(l []byte) []byte {
		m := combinedSplit.FindSubmatch(l)
		return fmt.Appendf(nil, `{"remote_addr":"%s","time":"%s","request_method":"%s","request_uri":"%s","status":%s,"body_bytes_sent":%s,"http_user_agent":"%s"}`,
			m[1], m[2], m[3], m[4], m[5], m[6], m[7])
	})
}

// BenchmarkParseRegex: the regex format over combined lines.
func BenchmarkParseRegex(b *testing.B) {
	benchmarkConfig(b, Config{Format: "regex", Site: "example.com",
		Regex: `^\S+ \S+ \S+ \[(?P<time>[^\]]+)\] "(?P<request>[^"]*)" (?P<status>\d{3}) `}, func(l []byte) []byte { return l })
}
