package parser

import (
	"errors"
	"strings"
	"testing"

	"github.com/logtally/logtally/botclass"
)

// User agents whose class does not depend on the embedded lists: a
// browser (a person), a declared crawler (some bot class), and one that
// testBots names (AI, whatever the lists say).
const (
	uaBrowser   = `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36`
	uaGooglebot = `Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)`
	uaTest      = `TestCrawler/1.0 (+https://example.org/crawler)`
)

var testBots = []botclass.Pattern{{Class: botclass.AI, Match: `^testcrawler/`}}

// anyBot stands for "a class other than Person" in measureCase.bot.
const anyBot botclass.Class = 255

type measureCase struct {
	name  string
	line  string
	bytes uint64
	rt    int64
	bot   botclass.Class
}

func runMeasureCases(t *testing.T, cfg Config, cases []measureCase) {
	t.Helper()
	p := mustNew(t, cfg)
	for _, tc := range cases {
		var h Hit
		if o := p.Parse([]byte(tc.line), &h); o != OK {
			t.Errorf("%s: %s: Parse(%q) = %v", cfg.Format, tc.name, tc.line, o)
			continue
		}
		botOK := h.Bot == tc.bot || tc.bot == anyBot && h.Bot != botclass.Person && h.Bot < botclass.NumClasses
		if h.Bytes != tc.bytes || h.RT != tc.rt || !botOK {
			want := tc.bot.String()
			if tc.bot == anyBot {
				want = "a bot class"
			}
			t.Errorf("%s: %s: Parse(%q): bytes %d rt %d bot %v, want %d %d %s", cfg.Format, tc.name, tc.line, h.Bytes, h.RT, h.Bot, tc.bytes, tc.rt, want)
		}
	}
}

func clf(size, rest string) string {
	return `203.0.113.5 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 ` + size + rest
}

func TestMeasuresCLF(t *testing.T) {
	combined := []measureCase{
		{"browser", clf("2326", ` "-" "`+uaBrowser+`"`), 2326, NoRT, botclass.Person},
		{"googlebot", clf("0", ` "-" "`+uaGooglebot+`"`), 0, NoRT, anyBot},
		{"own pattern", clf("5", ` "http://example.org/" "`+uaTest+`"`), 5, NoRT, botclass.AI},
		{"dash size", clf("-", ` "-" "`+uaBrowser+`"`), 0, NoRT, botclass.Person},
		{"empty user agent", clf("1", ` "-" ""`), 1, NoRT, botclass.Suspect},
		{"cut user agent", clf("1", ` "-" "`+uaTest[:20]), 1, NoRT, botclass.AI},
		{"common line", clf("7", ``), 7, NoRT, botclass.Person},
		{"huge size", clf("99999999999999999999999", ` "-" "`+uaBrowser+`"`), MaxBytes, NoRT, botclass.Person},
		{"trailing %D", clf("12", ` "-" "`+uaBrowser+`" 1234`), 12, NoRT, botclass.Person},
	}
	runMeasureCases(t, Config{Format: "combined", Site: "example.com", Bots: testBots}, combined)
	var vhost []measureCase
	for _, c := range combined {
		c.line = "example.com:443 " + c.line
		vhost = append(vhost, c)
	}
	runMeasureCases(t, Config{Format: "vhost_combined", Site: SiteFromLine, Bots: testBots}, vhost)
	// common logs no user agent: every hit is a person, even of a
	// combined line.
	runMeasureCases(t, Config{Format: "common", Site: "example.com"}, []measureCase{
		{"common", clf("2326", ``), 2326, NoRT, botclass.Person},
		{"combined line", clf("3", ` "-" "`+uaGooglebot+`"`), 3, NoRT, botclass.Person},
	})
	// A bad size in CLF still makes the line malformed.
	p := mustNew(t, Config{Format: "combined", Site: "example.com"})
	var h Hit
	if o := p.Parse([]byte(clf("12a", ` "-" "x"`)), &h); o != MalformedFields {
		t.Errorf("bad size: %v", o)
	}
}

func TestMeasuresNginx(t *testing.T) {
	const pre = `203.0.113.5 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 `
	// Both times after the user agent; $body_bytes_sent and $bytes_sent.
	runMeasureCases(t, Config{Format: "nginx", Site: "example.com", Bots: testBots,
		LogFormat: ngxDefault + ` $bytes_sent $request_time "$upstream_response_time"`}, []measureCase{
		{"request_time wins", pre + `612 "-" "` + uaBrowser + `" 900 0.123 "0.050"`, 612, 123000, botclass.Person},
		{"upstream list", pre + `612 "-" "` + uaGooglebot + `" 900 - "0.012, 0.030"`, 612, 42000, anyBot},
		{"redirect list", pre + `0 "-" "` + uaTest + `" 900 - "0.012 : 0.030"`, 0, 42000, botclass.AI},
		{"no times", pre + `0 "-" "-" 900 - "-"`, 0, NoRT, botclass.Suspect},
		{"garbage request_time", pre + `1 "-" "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0" 900 abc "0.002"`, 1, 2000, botclass.Person},
		{"garbage both", pre + `1 "-" "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0" 900 -1.5 "fast"`, 1, NoRT, botclass.Person},
		{"garbage bytes", pre + `x1 "-" "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0" 900 0.001 "-"`, 0, 1000, botclass.Person},
		{"dash bytes", pre + `- "-" "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0" 900 0.001 "-"`, 0, 1000, botclass.Person},
		{"whole seconds", pre + `1 "-" "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0" 900 3 "-"`, 1, 3_000_000, botclass.Person},
		{"capped", pre + `1 "-" "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0" 900 100000.000 "-"`, 1, MaxRT, botclass.Person},
		// A cut user agent loses what follows it, not the hit.
		{"cut user agent", pre + `7 "-" "` + uaTest[:20], 7, NoRT, botclass.AI},
	})
	// $bytes_sent alone; the times before every field a hit needs.
	runMeasureCases(t, Config{Format: "nginx", Site: "example.com",
		LogFormat: `$request_time $upstream_response_time [$time_local] "$request" $status $bytes_sent $http_x_forwarded_for`}, []measureCase{
		{"first", `0.004 0.003 [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 77 -`, 77, 4000, botclass.Person},
		{"upstream", `- 0.003 [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 77 -`, 77, 3000, botclass.Person},
		{"last var takes the rest", `- - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 77 a b c`, 77, NoRT, botclass.Person},
	})
	// Measures last, after nothing: the value is the rest of the line.
	runMeasureCases(t, Config{Format: "nginx", Site: "example.com",
		LogFormat: `[$time_local] "$request" $status $body_bytes_sent $upstream_response_time`}, []measureCase{
		{"list at the end", `[10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 5 0.001, 0.002 : 0.003`, 5, 6000, botclass.Person},
		{"no user agent logged", `[10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 5 -`, 5, NoRT, botclass.Person},
	})
	// A format without the measures.
	runMeasureCases(t, Config{Format: "nginx", Site: "example.com", LogFormat: `[$time_local] "$request" $status`}, []measureCase{
		{"none", `[10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200`, 0, NoRT, botclass.Person},
	})
	// A broken measure field before the last field a hit needs is a
	// broken line, as any other field there.
	p := mustNew(t, Config{Format: "nginx", Site: "example.com", LogFormat: `"$request_time" [$time_local] "$request" $status`})
	var h Hit
	if o := p.Parse([]byte(`"0.1 [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200`), &h); o != MalformedFields {
		t.Errorf("broken request_time before the status: %v", o)
	}
}

func TestMeasuresJSON(t *testing.T) {
	const base = `{"time":"2000-10-10T13:55:36-07:00","request_uri":"/a","status":200`
	runMeasureCases(t, Config{Format: "json", Site: "example.com", Bots: testBots}, []measureCase{
		{"numbers", base + `,"body_bytes_sent":612,"request_time":0.123,"upstream_response_time":0.1,"http_user_agent":"` + uaBrowser + `"}`, 612, 123000, botclass.Person},
		{"strings", base + `,"body_bytes_sent":"612","request_time":"0.123","http_user_agent":"` + uaGooglebot + `"}`, 612, 123000, anyBot},
		{"upstream list", base + `,"request_time":"-","upstream_response_time":"0.012, 0.030","http_user_agent":"` + uaTest + `"}`, 0, 42000, botclass.AI},
		{"dash", base + `,"body_bytes_sent":"-","request_time":"-","upstream_response_time":"-","http_user_agent":""}`, 0, NoRT, botclass.Suspect},
		{"null and garbage", base + `,"body_bytes_sent":null,"request_time":true,"upstream_response_time":"abc"}`, 0, NoRT, botclass.Person},
		{"escaped number", base + `,"body_bytes_sent":"1\u0032","request_time":"0.\u0031"}`, 0, NoRT, botclass.Person},
		{"negative", base + `,"body_bytes_sent":-5,"request_time":-0.1,"upstream_response_time":0.002}`, 0, 2000, botclass.Person},
		{"absent", base + `}`, 0, NoRT, botclass.Person},
		{"escaped user agent", base + `,"http_user_agent":"\u0054estCrawler/2"}`, 0, NoRT, botclass.AI},
	})
	// Caddy: duration in seconds, size.
	caddy := JSONFields{Time: "ts", URI: "request.uri", Status: "status", Bytes: "size", RequestTime: "duration", UserAgent: "ua"}
	runMeasureCases(t, Config{Format: "json", Site: "example.com", JSON: caddy, TimeLayout: "unix"}, []measureCase{
		{"caddy", `{"ts":971211336.5,"request":{"uri":"/docs/","headers":{"User-Agent":["curl/8"]}},"duration":0.000123456,"size":12,"status":200}`, 12, 123, botclass.Person},
		{"caddy exponent", `{"ts":971211336.5,"request":{"uri":"/docs/"},"duration":1.5e-05,"size":12,"status":200}`, 12, 15, botclass.Person},
	})
	// Traefik: Duration in nanoseconds.
	traefik := JSONFields{Time: "StartUTC", URI: "RequestPath", Status: "DownstreamStatus", Bytes: "DownstreamContentSize",
		RequestTime: "Duration", UpstreamResponseTime: "OriginDuration", TimeUnit: "ns", UserAgent: "request_User-Agent"}
	runMeasureCases(t, Config{Format: "json", Site: "example.com", JSON: traefik, TimeLayout: "unix_ms"}, []measureCase{
		{"traefik", `{"RequestPath":"/t","DownstreamStatus":301,"StartUTC":971211336999,"DownstreamContentSize":1024,"Duration":1234567,"OriginDuration":1000000,"request_User-Agent":"` + uaBrowser + `"}`, 1024, 1234, botclass.Person},
		{"traefik origin only", `{"RequestPath":"/t","DownstreamStatus":301,"StartUTC":971211336999,"OriginDuration":2000000}`, 0, 2000, botclass.Person},
	})
	for _, tc := range []struct {
		unit string
		want int64
	}{{"s", 7_000_000}, {"ms", 7000}, {"us", 7}, {"ns", 0}} {
		runMeasureCases(t, Config{Format: "json", Site: "example.com", JSON: JSONFields{TimeUnit: tc.unit}}, []measureCase{
			{"unit " + tc.unit, base + `,"request_time":7}`, 0, tc.want, botclass.Person},
		})
	}
	_, err := New(Config{Format: "json", Site: "example.com", JSON: JSONFields{TimeUnit: "sec"}})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "json.time_unit" || !strings.Contains(ce.Problem, `"sec"`) {
		t.Errorf("time_unit sec: %v", err)
	}
}

func TestMeasuresRegex(t *testing.T) {
	// Apache: %b, %T (whole seconds) and %D (microseconds).
	apache := `^\S+ \S+ \S+ \[(?P<time>[^\]]+)\] "(?P<request>[^"]*)" (?P<status>\d{3}) (?P<bytes>\S+) "[^"]*" "(?P<user_agent>[^"]*)"(?: (?P<request_time>\S+) (?P<request_time_us>\S+))?`
	runMeasureCases(t, Config{Format: "regex", Site: "example.com", Regex: apache, Bots: testBots}, []measureCase{
		{"%T %D", clf("2326", ` "-" "`+uaBrowser+`" 0 2500`), 2326, 0, botclass.Person},
		{"%T garbage, %D", clf("2326", ` "-" "`+uaBrowser+`" x 2500`), 2326, 2500, botclass.Person},
		{"none", clf("-", ` "-" "`+uaGooglebot+`"`), 0, NoRT, anyBot},
		{"own pattern", clf("abc", ` "-" "`+uaTest+`" - -`), 0, NoRT, botclass.AI},
	})
	runMeasureCases(t, Config{Format: "regex", Site: "example.com",
		Regex: `^(?P<time>\S+) "(?P<request>[^"]*)" (?P<status>\d+) (?P<request_time_ms>\S+)`, TimeLayout: "rfc3339"}, []measureCase{
		{"ms", `2000-10-10T20:55:36Z "GET / HTTP/1.1" 200 12.5`, 0, 12500, botclass.Person},
	})
}

// TestClassifyAfterFilters checks that a filtered line is not classified
// (the cache sees only hits), that the "bots" preset still filters, and
// the cache's statistics.
func TestClassifyAfterFilters(t *testing.T) {
	p := mustNew(t, Config{Format: "combined", Site: "example.com",
		Filter: FilterConfig{ExcludeUserAgents: []string{"bots"}, ExcludeExtensions: []string{"png"}}})
	var h Hit
	for _, tc := range []struct {
		line string
		want Outcome
	}{
		{clf("1", ` "-" "`+uaGooglebot+`"`), FilteredUserAgent},
		{`203.0.113.5 - - [10/Oct/2000:13:55:36 -0700] "GET /a.png HTTP/1.1" 200 1 "-" "` + uaBrowser + `"`, FilteredExtension},
		{clf("1", ` "-" "`+uaBrowser+`"`), OK},
		{clf("1", ` "-" "`+uaBrowser+`"`), OK},
	} {
		if o := p.Parse([]byte(tc.line), &h); o != tc.want {
			t.Errorf("Parse(%q) = %v, want %v", tc.line, o, tc.want)
		}
	}
	if hits, misses := p.BotCacheStats(); hits != 1 || misses != 1 {
		t.Errorf("BotCacheStats = %d hits, %d misses; want 1, 1 (filtered lines are not classified)", hits, misses)
	}
	if hits, misses := mustNew(t, Config{Format: "common", Site: "example.com"}).BotCacheStats(); hits != 0 || misses != 0 {
		t.Errorf("common: BotCacheStats = %d, %d", hits, misses)
	}
}

// TestUserAgentBound checks that the classifier sees at most maxUALen
// bytes of a user agent.
func TestUserAgentBound(t *testing.T) {
	browser := "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0 "
	long := browser + strings.Repeat("a", maxUALen-len(browser)) + "TestCrawler/1.0"
	p := mustNew(t, Config{Format: "combined", Site: "example.com", Bots: []botclass.Pattern{{Class: botclass.Tool, Match: `testcrawler`}}})
	var h Hit
	if o := p.Parse([]byte(clf("1", ` "-" "`+long+`"`)), &h); o != OK || h.Bot != botclass.Person {
		t.Errorf("long user agent: %v %v, want a person (the pattern is past the bound)", o, h.Bot)
	}
	if o := p.Parse([]byte(clf("1", ` "-" "`+long[maxUALen-10:]+`"`)), &h); o != OK || h.Bot != botclass.Tool {
		t.Errorf("short user agent: %v %v, want tool", o, h.Bot)
	}
}

func TestBotsConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg    Config
		fields []string
	}{
		{Config{Format: "common", Site: "a", Bots: testBots}, []string{"bots"}},
		{Config{Format: "nginx", Site: "a", LogFormat: `[$time_local] "$request" $status`, Bots: testBots}, []string{"bots"}},
		{Config{Format: "combined", Site: "a", Bots: []botclass.Pattern{
			{Class: botclass.Person, Match: "x"}, {Class: botclass.AI, Match: "(["}, {Class: botclass.NumClasses, Match: ""}}},
			[]string{"bots[0].class", "bots[1].match", "bots[2].class", "bots[2].match"}},
	} {
		_, err := New(tc.cfg)
		var got []string
		for _, e := range unjoinErr(err) {
			var ce *ConfigError
			if errors.As(e, &ce) {
				got = append(got, ce.Field)
			}
		}
		if strings.Join(got, " ") != strings.Join(tc.fields, " ") {
			t.Errorf("%+v: errors %v, want fields %v", tc.cfg, err, tc.fields)
		}
	}
	if _, err := New(Config{Format: "regex", Site: "a", Regex: `(?P<time>\S+) (?P<path>\S+) (?P<status>\d+) (?P<user_agent>.*)`, Bots: testBots}); err != nil {
		t.Errorf("regex with user_agent and bots: %v", err)
	}
}

func unjoinErr(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}
