package parser

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/logtally/logtally/internal/loggen"
)

// benchLines returns n realistic access-log lines (combined, or common
// when common is true) from internal/loggen, the generator of bench/gen.
// The lines are the same on every call.
func benchLines(n int, common bool) [][]byte {
	g := loggen.New(1)
	lines := make([][]byte, n)
	for i := range lines {
		lines[i] = g.Append(nil, common)
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
	p, err := New(Config{Format: format, Site: "example.com"})
	if err != nil {
		b.Fatal(err)
	}
	benchmarkLines(b, p, benchLines(4096, format == "common"))
}

// benchmarkLines checks that p parses every line, then times one Parse of
// lines (4096 of them) per op.
func benchmarkLines(b *testing.B, p *Parser, lines [][]byte) {
	var h Hit
	for _, l := range lines {
		if o := p.Parse(l, &h); o != OK {
			b.Fatalf("%s: %q", o, l)
		}
	}
	b.SetBytes(avgLen(lines))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p.Parse(lines[i&4095], &h)
		i++
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
	off, n := 0, 0
	for b.Loop() {
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
	benchmarkLines(b, p, lines)
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

// BenchmarkParseRealMeasures parses the real Apache combined log of the
// test data (10,000 lines, many bots; one line per op) twice: "hits"
// reads only what a hit needed before the measures (no size, no user
// agent, no classification), "measures" reads everything the parser gives
// now (bytes, response time, the bot class from the cache). The measures
// sub-benchmark reports the ratio of their times per line (x-hits-time;
// run both: -bench 'ParseRealMeasures$') and the bot cache's hit rate
// over one pass of the log (%cache-hits: each distinct user agent misses
// once). "referer" reads the referer too, "dims" gives every dimension's
// value (geo's Tor test file for the countries): their x-measures-time.
func BenchmarkParseRealMeasures(b *testing.B) {
	data, err := os.ReadFile(realLog)
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	var nsPerLine [4]float64
	for i, name := range []string{"hits", "measures", "referer", "dims"} {
		b.Run(name, func(b *testing.B) {
			cfg := Config{Format: "combined", Site: "semicomplete.com", Referer: i == 2}
			if i == 3 {
				cfg.Dims = &DimsConfig{Geo: torHolder(b)}
			}
			p, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			if i == 0 {
				p.hitsOnly, p.bots = true, nil
			}
			var h Hit
			for _, l := range lines {
				if o := p.Parse(l, &h); o != OK {
					b.Fatalf("%s: %q", o, l)
				}
			}
			hits, misses := p.BotCacheStats()
			b.SetBytes(avgLen(lines))
			b.ReportAllocs()
			k := 0
			for b.Loop() {
				p.Parse(lines[k], &h)
				if k++; k == len(lines) {
					k = 0
				}
			}
			nsPerLine[i] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if i == 1 {
				b.ReportMetric(100*float64(hits)/float64(hits+misses), "%cache-hits")
				if nsPerLine[0] > 0 {
					b.ReportMetric(nsPerLine[1]/nsPerLine[0], "x-hits-time")
				}
			}
			if i >= 2 && nsPerLine[1] > 0 {
				b.ReportMetric(nsPerLine[i]/nsPerLine[1], "x-measures-time")
			}
		})
	}
}
