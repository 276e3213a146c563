// Package loggen makes realistic access-log lines for benchmarks and tests:
// 2,000 pages of Zipf popularity, query strings, IPv4 and IPv6 clients,
// referers, times in order over about a day (12 lines a second on
// average), a status mix (mostly 2xx, some 3xx, 4xx and 5xx, a few 101),
// sizes, and user agents drawn from Agents, a table of real user agents
// with the bot class each must get. Combined lines average about 200
// bytes. The lines depend only on the seed.
//
// The lines are combined (or common) by default, as the benchmarks read
// them. Gen.Measures adds what the end-to-end tests also judge: a size of
// "-" now and then (a response without a body, as Apache logs it) and a
// trailing ` rt=<seconds> urt="<upstream seconds>"` (see Gen.Measures), the
// nginx log_format
//
//	... "$http_referer" "$http_user_agent" rt=$request_time urt="$upstream_response_time"
package loggen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/stream"
)

// Agent is a real user agent and the class logtally must give it.
type Agent struct {
	// UA is the user agent as logged ("-": none sent).
	UA string
	// Class is the class it must get.
	Class botclass.Class
	// Weight is its share of the generated lines (out of the table's sum).
	Weight int
}

// Agents is the user agents of the generated lines, with their classes:
// browsers (people) most of the time, search engines, AI crawlers, tools,
// other declared bots, and suspects (no user agent, a headless browser).
// Tests that count the lines look an agent's class up here (Class).
var Agents = []Agent{
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36", botclass.Person, 20},
	{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1", botclass.Person, 12},
	{"Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0", botclass.Person, 8},
	{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15", botclass.Person, 8},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.80", botclass.Person, 6},
	{"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36", botclass.Person, 10},
	{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", botclass.Search, 5},
	{"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.207 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", botclass.Search, 3},
	{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", botclass.Search, 3},
	{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", botclass.AI, 3},
	{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", botclass.AI, 2},
	{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)", botclass.AI, 2},
	{"curl/8.5.0", botclass.Tool, 2},
	{"python-requests/2.31.0", botclass.Tool, 2},
	{"Go-http-client/1.1", botclass.Tool, 1},
	{"Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", botclass.Other, 2},
	{"Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", botclass.Other, 2},
	{"-", botclass.Suspect, 1},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36", botclass.Suspect, 1},
}

// Class returns the class Agents gives ua, and false when ua is not in
// the table.
func Class(ua string) (botclass.Class, bool) {
	for _, a := range Agents {
		if a.UA == ua {
			return a.Class, true
		}
	}
	return botclass.Person, false
}

// statuses is the status mix: weighted by repetition.
var statuses = []string{
	"200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "206", "204",
	"304", "304", "304", "301", "302",
	"404", "404", "403",
	"500", "502", "503",
	"101",
}

var (
	sections = []string{"blog", "docs", "products", "news", "api/v2", "static/js", "static/css", "img"}
	words    = []string{"getting-started", "release-notes", "pricing", "install", "faq", "search", "index.html", "app.min.js", "logo.png", "2024", "05", "hello-world"}
	queries  = []string{"", "", "", "", "?utm_source=twitter&utm_medium=social", "?page=2", "?q=log+parser&lang=en", "?id=12345&ref=home"}
	methods  = []string{"GET", "GET", "GET", "GET", "GET", "GET", "POST", "HEAD"}
	pages    = func() []string {
		p := make([]string, 2000)
		for i := range p {
			p[i] = fmt.Sprintf("/%s/%s-%d", sections[i%len(sections)], words[i*7%len(words)], i)
		}
		return p
	}()
	// agentPick[i] is an index into Agents: Agents[j] appears Weight times.
	agentPick = func() []int {
		var p []int
		for j, a := range Agents {
			for range a.Weight {
				p = append(p, j)
			}
		}
		return p
	}()
)

// Gen makes lines. It is not safe for concurrent use.
type Gen struct {
	// Measures, when set, makes every line end in ` rt=<seconds>
	// urt="<upstream seconds>"` (nginx's $request_time and
	// $upstream_response_time, in seconds with 3 decimals), and gives a
	// response without a body (status 1xx, 204, 304) the size "-". The
	// upstream time is "-" (served directly), one value, or a list ("0.001,
	// 0.004 : 0.002", nginx's form when it tried several servers); rt is
	// "-" on one line in ten, so that the response time is the sum of the
	// upstream times (none when those are "-" too). Off by default: the
	// benchmarks read plain combined lines.
	Measures bool

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
	b = append(b, ` HTTP/1.1"`...)
	return g.appendRest(b, common)
}

// AppendRest appends what follows the request of a combined line:
// ` <status> <size> "<referer>" "<user agent>"`, and the timing with
// Measures. Tests that write their own times and pages use it for the
// rest.
func (g *Gen) AppendRest(b []byte) []byte { return g.appendRest(b, false) }

func (g *Gen) appendRest(b []byte, common bool) []byte {
	rng := g.rng
	b = append(b, ' ')
	status := statuses[rng.IntN(len(statuses))]
	b = append(b, status...)
	b = append(b, ' ')
	size := int64(rng.IntN(200000))
	switch {
	case g.Measures && (status[0] == '1' || status == "204" || status == "304"):
		b = append(b, '-')
	case g.Measures && status[0] != '2':
		b = strconv.AppendInt(b, size%2000, 10) // an error page or a redirect
	default:
		b = strconv.AppendInt(b, size, 10)
	}
	if !common {
		b = append(b, ` "`...)
		if rng.IntN(4) == 0 {
			b = append(b, "https://www.example.com"...)
			b = append(b, pages[g.zipf.Uint64()]...)
		} else {
			b = append(b, '-')
		}
		b = append(b, `" "`...)
		b = append(b, Agents[agentPick[rng.IntN(len(agentPick))]].UA...)
		b = append(b, '"')
	}
	if g.Measures {
		b = g.appendTiming(b)
	}
	return b
}

// appendTiming appends ` rt=<seconds> urt="<upstream seconds>"`.
func (g *Gen) appendTiming(b []byte) []byte {
	rng := g.rng
	ms := func(mean float64) int64 { return int64(rng.ExpFloat64() * mean) }
	var up []int64 // upstream times, ms; nil: served directly
	switch n := rng.IntN(10); {
	case n < 4: // static
	case n < 9:
		up = []int64{ms(40)}
	default:
		up = []int64{ms(5), ms(40), ms(20)}
	}
	rt := ms(3)
	for _, u := range up {
		rt += u
	}
	b = append(b, " rt="...)
	if rng.IntN(10) == 0 {
		b = append(b, '-')
	} else {
		b = appendSeconds(b, rt)
	}
	b = append(b, ` urt="`...)
	if up == nil {
		b = append(b, '-')
	}
	for i, u := range up {
		switch i {
		case 1:
			b = append(b, ", "...)
		case 2:
			b = append(b, " : "...)
		}
		b = appendSeconds(b, u)
	}
	return append(b, '"')
}

// appendSeconds appends ms milliseconds as nginx logs times: "0.042".
func appendSeconds(b []byte, ms int64) []byte {
	b = strconv.AppendInt(b, ms/1000, 10)
	b = append(b, '.')
	f := ms % 1000
	if f < 100 {
		b = append(b, '0')
	}
	if f < 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, f, 10)
}

// Chunks returns n combined lines of seed (each ending in '\n') and the
// same bytes cut at line ends into chunks of at most size bytes, as a
// tailer reading source's file path hands them on: what the per-line
// benchmarks of the dry-run path feed.
func Chunks(seed uint64, n, size int, source string) ([]byte, []stream.Chunk) {
	g := New(seed)
	var data []byte
	for range n {
		data = append(g.Append(data, false), '\n')
	}
	var chunks []stream.Chunk
	for off := 0; off < len(data); {
		end := min(off+size, len(data))
		end = off + bytes.LastIndexByte(data[off:end], '\n') + 1
		chunks = append(chunks, stream.Chunk{Checkpoint: stream.Checkpoint{Source: source, Path: "/logs/gen.log",
			File: stream.FileID{Dev: 1, Ino: 3}, Offset: int64(end)}, Data: data[off:end]})
		off = end
	}
	return data, chunks
}
