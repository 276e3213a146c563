// Package loggen makes realistic access-log lines for benchmarks and tests:
// 2,000 pages of Zipf popularity, query strings, times in order over
// about a day (12 lines a second on average), a status mix (mostly 2xx,
// some 3xx, 4xx and 5xx, a few 101), sizes, and, from tables that say
// what logtally must count each under: user agents (Agents: real agents
// with the bot class and the browser, OS, device and crawler each must
// get), referers (Referrers: none mostly, search, social, AI, email,
// other sites, the site itself, spam, invalid, with the referrer host and
// channel of each) and clients (Networks: IPv4 and IPv6 networks with
// their country and AS, and random addresses in none). Package loggeo
// writes the country and ASN databases of Networks. Combined lines
// average about 200 bytes. The lines depend only on the seed.
//
// The networks' AS numbers are in none of geo's pinned hosting networks:
// a person's agent from them is not made a suspected bot (with
// [dimensions] and an ASN database, one from a hosting network is), so an
// agent's class is Agents' whatever the client.
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
	"net/netip"
	"strconv"
	"time"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/stream"
)

// Agent is a real user agent, the class logtally must give it and its
// value in each dimension of the user agent (package dims), written by
// hand from what the agent is: a person's browser, OS and device
// families and the crawler "(people)"; a bot of any class "(bot)" for
// the three families (whatever it claims: Googlebot's smartphone agent
// says Android and Chrome) and its crawler's name, or "(other <class>)"
// for a bot no list names.
type Agent struct {
	// UA is the user agent as logged ("-": none sent).
	UA string
	// Class is the class it must get.
	Class botclass.Class
	// Weight is its share of the generated lines (out of the table's sum).
	Weight int
	// Browser, OS and Device are its families, Crawler its crawler.
	Browser, OS, Device, Crawler string
}

// Agents is the user agents of the generated lines, with their classes
// and values: browsers (people) most of the time, search engines, AI
// crawlers, tools, other declared bots, and suspects (no user agent, a
// headless browser). Tests that count the lines look an agent up here
// (Class, AgentOf).
var Agents = []Agent{
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36", botclass.Person, 20, "Chrome", "Windows", "desktop", people},
	{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1", botclass.Person, 12, "Safari", "iOS", "mobile", people},
	{"Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0", botclass.Person, 8, "Firefox", "Linux", "desktop", people},
	{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15", botclass.Person, 8, "Safari", "macOS", "desktop", people},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.80", botclass.Person, 6, "Edge", "Windows", "desktop", people},
	{"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36", botclass.Person, 10, "Chrome", "Android", "mobile", people},
	{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", botclass.Search, 5, bot, bot, bot, "Googlebot"},
	{"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.207 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", botclass.Search, 3, bot, bot, bot, "Googlebot"},
	{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", botclass.Search, 3, bot, bot, bot, "bingbot"},
	{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", botclass.AI, 3, bot, bot, bot, "GPTBot"},
	{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", botclass.AI, 2, bot, bot, bot, "ClaudeBot"},
	{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)", botclass.AI, 2, bot, bot, bot, "PerplexityBot"},
	{"curl/8.5.0", botclass.Tool, 2, bot, bot, bot, "curl"},
	{"python-requests/2.31.0", botclass.Tool, 2, bot, bot, bot, "python-requests"},
	{"Go-http-client/1.1", botclass.Tool, 1, bot, bot, bot, "Go-http-client"},
	{"Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", botclass.Other, 2, bot, bot, bot, "AhrefsBot"},
	{"Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", botclass.Other, 2, bot, bot, bot, "SemrushBot"},
	{"-", botclass.Suspect, 1, bot, bot, bot, "(other suspect)"},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36", botclass.Suspect, 1, bot, bot, bot, "HeadlessChrome"},
}

// The values of the user agent's dimensions every bot shares, and the
// crawler of people.
const (
	bot    = "(bot)"
	people = "(people)"
)

// Class returns the class Agents gives ua, and false when ua is not in
// the table.
func Class(ua string) (botclass.Class, bool) {
	a, ok := AgentOf(ua)
	if !ok {
		return botclass.Person, false
	}
	return a.Class, true
}

// AgentOf returns ua's row of Agents, and false when ua is not in it.
func AgentOf(ua string) (Agent, bool) {
	for _, a := range Agents {
		if a.UA == ua {
			return a, true
		}
	}
	return Agent{}, false
}

// Referrer is a referer the lines send and its referrer host and channel
// (package dims' referrer and channel dimensions), written by hand: a
// host lower-cased with a leading "www." folded; "(direct)" for none,
// "(self)" for the site itself, "(spam)" for a host of referrer's pinned
// spam list (Matomo's referrer-spam-list), "(invalid)" for a referer
// that is no URL.
type Referrer struct {
	// Ref is the referer as logged ("-": none sent); for a Self row,
	// the path that follows "https://" and the site's host (Gen.Site).
	Ref string
	// Self marks the site's own page.
	Self bool
	// Host and Channel are its values.
	Host, Channel string
	// Weight is its share of the generated lines (out of the table's sum).
	Weight int
}

// Referrers is the referers of the generated lines: none most of the
// time, search engines, social sites, an AI assistant, a webmail, a
// plain other site, the site itself, a spammer and a referer that is no
// URL. Tests that count the lines look a referer up with ReferrerOf.
var Referrers = []Referrer{
	{"-", false, "(direct)", "direct", 60},
	{"https://www.google.com/", false, "google.com", "search", 8},
	{"https://www.google.de/search?q=access+log", false, "google.de", "search", 2},
	{"https://www.bing.com/search?q=log+parser", false, "bing.com", "search", 2},
	{"https://duckduckgo.com/", false, "duckduckgo.com", "search", 2},
	{"https://t.co/x7Yz0Q", false, "t.co", "social", 2},
	{"https://news.ycombinator.com/item?id=4242", false, "news.ycombinator.com", "social", 2},
	{"https://chatgpt.com/", false, "chatgpt.com", "ai", 2},
	{"https://mail.google.com/mail/u/0/", false, "mail.google.com", "email", 1},
	{"https://www.example.com/blog/hello-world-8", false, "example.com", "referral", 10},
	{"/docs/getting-started-1", true, "(self)", "internal", 6},
	{"https://semalt.com/", false, "(spam)", "spam", 1},
	{"www.google.com", false, "(invalid)", "other", 1},
}

// ReferrerOf returns the row of Referrers that ref (as logged) is for
// lines of site (the host Gen.Site names), and false when none is.
func ReferrerOf(ref, site string) (Referrer, bool) {
	for _, r := range Referrers {
		if r.Ref == ref && !r.Self || r.Self && ref == "https://"+site+r.Ref {
			return r, true
		}
	}
	return Referrer{}, false
}

// Network is a network the lines' clients come from, with its country
// and autonomous system as the databases of package loggeo hold them.
// Its addresses are in the documentation prefixes (RFC 5737's
// 192.0.2.0/24, 198.51.100.0/24 and 203.0.113.0/24, RFC 2544's
// benchmarking 198.18.0.0/15, RFC 9637's 3fff::/20) and its AS numbers
// in RFC 5398's documentation range (64496 to 64511): none is in geo's
// pinned list of hosting networks, so a person's agent from them stays
// a person (TestNetworksNotHosting in package loggeo checks it).
type Network struct {
	// Prefix is the network.
	Prefix netip.Prefix
	// Country is its ISO 3166-1 code; "": not in the country database.
	Country string
	// ASN and Org are its autonomous system; 0: not in the ASN database.
	ASN uint32
	Org string
	// Weight is its share of the generated lines (out of the sum of the
	// table's and NoNetworkWeight).
	Weight int
}

// Networks is the networks of the generated clients. A network's country
// is its value in the country dimension, "(unknown)" when it has none;
// "AS<n> <org>" its value in the asn dimension, "(unknown)" when it has
// no AS number.
var Networks = []Network{
	{netip.MustParsePrefix("192.0.2.0/24"), "DE", 64496, "Example Telekom", 8},
	{netip.MustParsePrefix("3fff:100::/32"), "DE", 64496, "Example Telekom", 6},
	{netip.MustParsePrefix("198.51.100.0/25"), "FR", 64497, "Exemple Fibre", 6},
	{netip.MustParsePrefix("198.51.100.128/25"), "US", 64498, "Example Cable", 10},
	{netip.MustParsePrefix("3fff:200::/32"), "US", 64498, "Example Cable", 6},
	{netip.MustParsePrefix("203.0.113.0/24"), "JP", 64499, "Example Mobile", 5},
	{netip.MustParsePrefix("3fff:300::/32"), "IN", 64500, "Example Broadband", 5},
	{netip.MustParsePrefix("198.18.0.0/15"), "BR", 0, "", 4},
	{netip.MustParsePrefix("3fff:400::/32"), "", 64501, "Example Transit", 2},
}

// NoNetworkWeight is the share of the clients in no network of Networks
// (out of the sum of its and the table's weights): random addresses, a
// third of them IPv6 (in 2001:db8::/32), whose country and network are
// "(unknown)".
const NoNetworkWeight = 48

// NetworkOf returns the row of Networks holding addr, and false when
// none does.
func NetworkOf(addr netip.Addr) (Network, bool) {
	addr = addr.Unmap()
	for _, n := range Networks {
		if n.Prefix.Contains(addr) {
			return n, true
		}
	}
	return Network{}, false
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
	agentPick    = pick(len(Agents), func(i int) int { return Agents[i].Weight })
	referrerPick = pick(len(Referrers), func(i int) int { return Referrers[i].Weight })
	// networkPick's entries are indexes into Networks, len(Networks)
	// for no network.
	networkPick = pick(len(Networks)+1, func(i int) int {
		if i == len(Networks) {
			return NoNetworkWeight
		}
		return Networks[i].Weight
	})
)

// pick returns indexes 0 to n-1, each weight(i) times.
func pick(n int, weight func(i int) int) []int {
	var p []int
	for i := range n {
		for range weight(i) {
			p = append(p, i)
		}
	}
	return p
}

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
	// Site is the host of the site the lines are for: the referer of a
	// Self row of Referrers names it. New sets "www.example.net".
	Site string

	rng  *rand.Rand
	zipf *rand.Zipf
	t    time.Time
}

// New returns a generator whose lines depend only on seed.
func New(seed uint64) *Gen {
	rng := rand.New(rand.NewPCG(seed, 2))
	return &Gen{
		Site: "www.example.net",
		rng:  rng,
		zipf: rand.NewZipf(rng, 1.1, 1, uint64(len(pages)-1)),
		t:    time.Date(2024, 5, 17, 0, 0, 0, 0, time.FixedZone("", 2*3600)),
	}
}

// Append appends the next line to b, without its newline: combined format,
// or common (no referer and user agent) when common is true.
func (g *Gen) Append(b []byte, common bool) []byte {
	rng := g.rng
	b = g.AppendClient(b)
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

// AppendClient appends a client address: one of a network of Networks
// (its weight's share of the lines), else a random address in none
// (NoNetworkWeight's share), a third of those IPv6.
func (g *Gen) AppendClient(b []byte) []byte {
	rng := g.rng
	if i := networkPick[rng.IntN(len(networkPick))]; i < len(Networks) {
		p := Networks[i].Prefix
		a := p.Addr().AsSlice()
		for j := p.Bits() / 8; j < len(a); j++ { // random host bits
			a[j] |= byte(rng.Uint32()) & (0xff >> max(p.Bits()-8*j, 0))
		}
		addr, _ := netip.AddrFromSlice(a)
		return addr.AppendTo(b)
	}
	for {
		var addr netip.Addr
		if rng.IntN(3) == 0 {
			addr = netip.MustParseAddr(fmt.Sprintf("2001:db8:%x:%x::%x", rng.IntN(65536), rng.IntN(65536), rng.IntN(65536)))
		} else {
			addr = netip.AddrFrom4([4]byte{byte(1 + rng.IntN(223)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(1 + rng.IntN(254))})
		}
		if _, in := NetworkOf(addr); !in {
			return addr.AppendTo(b)
		}
	}
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
		if r := Referrers[referrerPick[rng.IntN(len(referrerPick))]]; r.Self {
			b = append(b, "https://"...)
			b = append(b, g.Site...)
			b = append(b, r.Ref...)
		} else {
			b = append(b, r.Ref...)
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
