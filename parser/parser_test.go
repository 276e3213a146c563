package parser

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func mustNew(t testing.TB, cfg Config) *Parser {
	t.Helper()
	if cfg.Site == "" {
		cfg.Site = "example.com"
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		cfg     Config
		wantErr string // substring; "" means no error
	}{
		{Config{Format: "combined", Site: "s"}, ""},
		{Config{Format: "common", Site: "s"}, ""},
		{Config{Format: "common", Site: "s", MaxPageLen: MinMaxPageLen}, ""},
		{Config{Format: "nginx", Site: "s"}, `log_format: must not be empty`},
		{Config{Format: "Combined", Site: "s"}, `format: "Combined": unknown log format`},
		{Config{Format: "", Site: "s"}, "format: must not be empty"},
		{Config{Format: "combined"}, "site: must not be empty"},
		{Config{Format: "combined", Site: "s", MaxPageLen: -1}, "page.max_length: -1: must be at least 32"},
		{Config{Format: "combined", Site: "s", MaxPageLen: MinMaxPageLen - 1}, "must be at least 32"},
		{Config{Format: "common", Site: SiteFromLine}, "format common has no host"},
		{Config{Format: "combined", Site: "{site}"}, `write "{host}"`},
		{Config{Format: "combined", Site: "s", LogFormat: "$status"}, "log_format: only for format nginx"},
		{Config{Format: "combined", Site: "s", TimeLayout: "unix"}, "time_layout: only for formats json and regex"},
		{Config{Format: "json", Site: "s", TimeLayout: "yesterday"}, `time_layout: "yesterday": want rfc3339`},
		{Config{Format: "regex", Site: "s", Regex: `(?P<time>\S+) (?P<path>\S+)`}, "no (?P<status>...) group"},
		{Config{Format: "regex", Site: "s", Regex: `(?P<time>`}, "regex: \"(?P<time>\": error parsing regexp"},
		{Config{Format: "nginx", Site: "s", LogFormat: "$status $request"}, "no $time_local"},
		{Config{Format: "nginx", Site: "s", LogFormat: "$time_local $status"}, "no $request"},
		{Config{Format: "nginx", Site: "s", LogFormat: "$time_local $request"}, "no $status"},
		{Config{Format: "nginx", Site: "s", LogFormat: "$msec $request$status"}, "$request and $status have nothing between them"},
		{Config{Format: "nginx", Site: SiteFromLine, LogFormat: "$msec $request $status"}, "log_format has no $host"},
		{Config{Format: "common", Site: "s", Filter: FilterConfig{ExcludeUserAgents: []string{"bots"}}}, "filter.exclude_user_agents: the format does not log the user agent"},
		{Config{Format: "nginx", Site: "s", LogFormat: "$msec $uri $status", Filter: FilterConfig{Methods: []string{"GET"}}}, "filter.methods: the format does not log the method"},
		{Config{Format: "combined", Site: "s", Filter: FilterConfig{Methods: []string{"GET", "G T"}}}, `filter.methods[1]: "G T": must be an HTTP method`},
		{Config{Format: "combined", Site: "s", Filter: FilterConfig{Status: []string{"2xx", "6xx", "20"}}}, `filter.status[1]: "6xx"`},
		{Config{Format: "combined", Site: "s", Filter: FilterConfig{ExcludeExtensions: []string{"a/b"}}}, `filter.exclude_extensions[0]`},
		{Config{Format: "combined", Site: "s", Filter: FilterConfig{ExcludePaths: []string{"admin", "^("}}}, `filter.exclude_paths[0]: "admin": must be a path prefix`},
		{Config{Format: "combined", Site: "s", Filter: FilterConfig{ExcludeUserAgents: []string{""}}}, `filter.exclude_user_agents[0]: must not be empty`},
		{Config{Format: "combined", Site: "s", Page: PageConfig{Rewrite: []Rewrite{{Match: "^/a", Replace: "/b"}, {Match: "(", Replace: "/c"}}}}, "page.rewrite[1].match: \"(\": error parsing regexp"},
		{Config{Format: "combined", Site: "s", Page: PageConfig{Rewrite: []Rewrite{{Match: "^/a", Replace: "b"}}}}, `page.rewrite[0].replace: "b": must start with '/'`},
		{Config{Format: "combined", Site: "s", Page: PageConfig{KeepQuery: []string{"a=b"}}}, `page.keep_query[0]: "a=b"`},
		{Config{Format: "combined", Site: "s", Page: PageConfig{IndexFiles: []string{"a/index.html"}}}, `page.index_files[0]`},
		{Config{Format: "combined", Site: "s", Page: PageConfig{MaxPagesPerMinute: -1}}, `page.max_pages_per_minute: -1`},
		{Config{Format: "nginx", Site: SiteFromLine, LogFormat: "$host $msec \"$request\" $status"}, ""},
		{Config{Format: "json", Site: SiteFromLine}, ""},
		{Config{Format: "vhost_combined", Site: SiteFromLine, Filter: FilterConfig{ExcludeUserAgents: []string{"bots"}}}, ""},
	} {
		p, err := New(tc.cfg)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("New(%+v): %v", tc.cfg, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("New(%+v) = %v, want error containing %q", tc.cfg, err, tc.wantErr)
		case tc.wantErr != "" && p != nil:
			t.Errorf("New(%+v) returned a parser with an error", tc.cfg)
		}
	}
	p := mustNew(t, Config{Format: "combined"})
	if p.maxPageLen != DefaultMaxPageLen {
		t.Errorf("default max page length = %d, want %d", p.maxPageLen, DefaultMaxPageLen)
	}
}

func TestOutcome(t *testing.T) {
	seen := map[string]bool{}
	for o := OK; o < NumOutcomes; o++ {
		s := o.String()
		if s == "" || seen[s] || strings.HasPrefix(s, "outcome(") {
			t.Errorf("Outcome(%d).String() = %q: empty, duplicate or unnamed", o, s)
		}
		seen[s] = true
		if o.Malformed() == o.Filtered() && o != OK || o == OK && (o.Malformed() || o.Filtered()) {
			t.Errorf("%v: Malformed() = %v, Filtered() = %v", o, o.Malformed(), o.Filtered())
		}
		if o.Malformed() != strings.HasPrefix(s, "malformed: ") || o.Filtered() != strings.HasPrefix(s, "filtered: ") {
			t.Errorf("%v does not say what it is", o)
		}
	}
	if OK.String() != "ok" || MalformedTime.String() != "malformed: bad time" {
		t.Errorf("names: %q, %q", OK, MalformedTime)
	}
	if s := NumOutcomes.String(); s != "outcome("+strconv.Itoa(int(NumOutcomes))+")" {
		t.Errorf("NumOutcomes.String() = %q", s)
	}
	if NumOutcomes.Malformed() || NumOutcomes.Filtered() {
		t.Error("NumOutcomes is neither malformed nor filtered")
	}
	var c Counts
	c[OK], c[MalformedTime], c[MalformedHost], c[FilteredPath], c[FilteredMethod] = 5, 1, 2, 3, 4
	if c.Lines() != 15 || c.Malformed() != 3 || c.Filtered() != 7 {
		t.Errorf("counts: %d lines %d malformed %d filtered", c.Lines(), c.Malformed(), c.Filtered())
	}
	c.Add(&c)
	if c.Lines() != 30 {
		t.Errorf("Add: %d lines", c.Lines())
	}
}

// Lines shared by the table tests, the fuzz seeds and the alloc test.
const (
	apacheExample = `127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326 "http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)"`
	apacheCommon  = `127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326`
	tAp           = 971211336 // 10/Oct/2000:13:55:36 -0700
	pre           = `2001:db8::1 - - [10/Oct/2000:13:55:36 -0700] `
	post          = ` "-" "Mozilla/5.0"`
)

type lineCase struct {
	name   string
	format string // "" means combined
	line   string
	want   Outcome
	page   string
	time   int64
	status int
	method string
}

var goodLines = []lineCase{
	{name: "apache combined", line: apacheExample, page: "/apache_pb.gif", time: tAp, status: 200, method: "GET"},
	{name: "apache common", format: "common", line: apacheCommon, page: "/apache_pb.gif", time: tAp, status: 200, method: "GET"},
	{name: "common line in combined", line: apacheCommon, page: "/apache_pb.gif", time: tAp, status: 200, method: "GET"},
	{name: "combined line in common", format: "common", line: apacheExample, page: "/apache_pb.gif", time: tAp, status: 200, method: "GET"},
	{name: "common line trailing space", line: apacheCommon + " ", page: "/apache_pb.gif", time: tAp, status: 200, method: "GET"},
	{name: "CR LF", line: apacheExample + "\r\n", page: "/apache_pb.gif", time: tAp, status: 200, method: "GET"},
	{name: "CR", line: apacheExample + "\r", page: "/apache_pb.gif", time: tAp, status: 200, method: "GET"},
	{name: "common CR", format: "common", line: apacheCommon + "\r", page: "/apache_pb.gif", time: tAp, status: 200, method: "GET"},
	{name: "LF", line: apacheExample + "\n", page: "/apache_pb.gif", time: tAp, status: 200, method: "GET"},
	{name: "ipv6 client", line: pre + `"POST /api/v1/items HTTP/2.0" 201 -` + post, page: "/api/v1/items", time: tAp, status: 201, method: "POST"},
	{name: "ipv4-mapped client", line: `::ffff:192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 304 0` + post, page: "/", time: tAp, status: 304, method: "GET"},
	{name: "query and fragment", line: pre + `"GET /a/b?x=1#f HTTP/1.1" 200 5` + post, page: "/a/b", time: tAp, status: 200, method: "GET"},
	{name: "fragment first", line: pre + `"GET /a/b#f?x=1 HTTP/1.1" 200 5` + post, page: "/a/b", time: tAp, status: 200, method: "GET"},
	{name: "only query", line: pre + `"GET /?x=1 HTTP/1.1" 200 5` + post, page: "/", time: tAp, status: 200, method: "GET"},
	{name: "absolute form", line: pre + `"GET http://host/a/b?x=1 HTTP/1.1" 200 5` + post, page: "/a/b", time: tAp, status: 200, method: "GET"},
	{name: "absolute form no path", line: pre + `"GET http://host HTTP/1.1" 200 5` + post, page: "/", time: tAp, status: 200, method: "GET"},
	{name: "absolute form query only", line: pre + `"GET http://host?x=/y HTTP/1.1" 200 5` + post, page: "/", time: tAp, status: 200, method: "GET"},
	{name: "absolute form https port case", line: pre + `"GET HTTPS://Host.Example:8443/x/ HTTP/1.1" 200 5` + post, page: "/x/", time: tAp, status: 200, method: "GET"},
	{name: "http/0.9", line: pre + `"GET /old/page" 200 5` + post, page: "/old/page", time: tAp, status: 200, method: "GET"},
	{name: "size dash", line: pre + `"HEAD /x HTTP/1.1" 200 -` + post, page: "/x", time: tAp, status: 200, method: "HEAD"},
	{name: "escaped quote in request", line: pre + `"GET /a\"b HTTP/1.1" 200 5` + post, page: `/a"b`, time: tAp, status: 200, method: "GET"},
	{name: "escaped backslash then quote", line: pre + `"GET /a\\" 200 5` + post, page: `/a\`, time: tAp, status: 200, method: "GET"},
	{name: "escaped quotes in user agent", line: pre + `"GET /a HTTP/1.1" 200 5 "-" "Mozilla \"quoted\" [x] \\"`, page: "/a", time: tAp, status: 200, method: "GET"},
	{name: "nginx hex escapes of utf-8", line: pre + `"GET /caf\xC3\xA9/\xE2\x82\xAC HTTP/1.1" 200 5` + post, page: "/café/€", time: tAp, status: 200, method: "GET"},
	{name: "nginx hex escape of invalid byte", line: pre + `"GET /a\xFFb\x22 HTTP/1.1" 200 5` + post, page: `/a%FFb"`, time: tAp, status: 200, method: "GET"},
	{name: "raw utf-8", line: pre + "\"GET /caf\xc3\xa9 HTTP/1.1\" 200 5" + post, page: "/café", time: tAp, status: 200, method: "GET"},
	{name: "raw invalid utf-8", line: pre + "\"GET /a\xff\xc3(\xed\xa0\x80 HTTP/1.1\" 200 5" + post, page: "/a%FF%C3(%ED%A0%80", time: tAp, status: 200, method: "GET"},
	{name: "apache control escapes", line: pre + `"GET /a\nb\tc\x01 HTTP/1.1" 200 5` + post, page: "/a%0Ab%09c%01", time: tAp, status: 200, method: "GET"},
	{name: "space in target", line: pre + `"GET /a b HTTP/1.1" 400 5` + post, page: "/a%20b", time: tAp, status: 400, method: "GET"},
	{name: "lone backslash", line: pre + `"GET /a\b\q\x4 HTTP/1.1" 200 5` + post, page: "/a%08\\q\\x4", time: tAp, status: 200, method: "GET"},
	{name: "user with spaces and bracket", line: `10.0.0.1 - bob [smith] x [10/Oct/2000:13:55:36 -0700] "GET /u HTTP/1.1" 200 5` + post, page: "/u", time: tAp, status: 200, method: "GET"},
	{name: "extra nginx fields", line: pre + `"GET /a HTTP/1.1" 200 5 "-" "ua" "203.0.113.9" 0.003`, page: "/a", time: tAp, status: 200, method: "GET"},
	{name: "extra common fields", format: "common", line: pre + `"GET /a HTTP/1.1" 200 5 1234 rt=0.1`, page: "/a", time: tAp, status: 200, method: "GET"},
	{name: "webdav method", line: pre + `"PROPFIND /dav/ HTTP/1.1" 207 5` + post, page: "/dav/", time: tAp, status: 207, method: "PROPFIND"},
	{name: "status 100", line: pre + `"GET /a HTTP/1.1" 100 0` + post, page: "/a", time: tAp, status: 100, method: "GET"},
	{name: "status 599", line: pre + `"GET /a HTTP/1.1" 599 0` + post, page: "/a", time: tAp, status: 599, method: "GET"},
	{name: "leap day", line: `h - - [29/Feb/2024:23:59:59 +0000] "GET / HTTP/1.1" 200 1`, page: "/", time: 1709251199, status: 200, method: "GET"},
	{name: "leap day 2000", line: `h - - [29/Feb/2000:00:00:00 +0000] "GET / HTTP/1.1" 200 1`, page: "/", time: 951782400, status: 200, method: "GET"},
	{name: "leap second counts as 59", line: `h - - [31/Dec/2016:23:59:60 +0000] "GET / HTTP/1.1" 200 1`, page: "/", time: 1483228799, status: 200, method: "GET"},
	{name: "half-hour zone", line: `h - - [01/Jan/2024:05:30:00 +0530] "GET / HTTP/1.1" 200 1`, page: "/", time: 1704067200, status: 200, method: "GET"},
	{name: "zone crosses year", line: `h - - [31/Dec/2023:23:00:00 -0100] "GET / HTTP/1.1" 200 1`, page: "/", time: 1704067200, status: 200, method: "GET"},
	{name: "epoch", line: `h - - [01/Jan/1970:00:00:00 +0000] "GET / HTTP/1.1" 200 1`, page: "/", time: 0, status: 200, method: "GET"},
	{name: "year 9999", line: `h - - [31/Dec/9999:23:59:59 +0000] "GET / HTTP/1.1" 200 1`, page: "/", time: 253402300799, status: 200, method: "GET"},
	// Broken or odd fields after %b do not change the hit.
	{name: "unbalanced referer quote", line: pre + `"GET /a HTTP/1.1" 200 5 "http://x "ua"`, page: "/a", time: tAp, status: 200, method: "GET"},
	{name: "unbalanced user agent quote", line: pre + `"GET /a HTTP/1.1" 200 5 "-" "Mozilla`, page: "/a", time: tAp, status: 200, method: "GET"},
	{name: "user agent without quotes", line: pre + `"GET /a HTTP/1.1" 200 5 "-" Mozilla`, page: "/a", time: tAp, status: 200, method: "GET"},
	{name: "text after user agent", line: pre + `"GET /a HTTP/1.1" 200 5 "-" "ua"x`, page: "/a", time: tAp, status: 200, method: "GET"},
	{name: "referer only", line: pre + `"GET /a HTTP/1.1" 200 5 "-"`, page: "/a", time: tAp, status: 200, method: "GET"},
	{name: "common with referer garbage", line: pre + `"GET /a HTTP/1.1" 200 5 x`, page: "/a", time: tAp, status: 200, method: "GET"},
}

var badLines = []lineCase{
	{name: "empty", line: "", want: MalformedEmpty},
	{name: "blank", line: " \t ", want: MalformedEmpty},
	{name: "only CR LF", line: "\r\n", want: MalformedEmpty},
	{name: "one word", line: "hello", want: MalformedFields},
	{name: "leading space", line: " " + apacheExample, want: MalformedFields},
	{name: "no ident", line: `h [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 1`, want: MalformedFields},
	{name: "binary garbage", line: "\x00\x01\x02\xff\xfe \x16\x03\x01\x00\xf7\x01[\x00\x00\xf3\x03\x03", want: MalformedFields},
	{name: "binary garbage no space", line: "\x16\x03\x01\x00\xf7\x01\x00\x00\xf3\x03\x03\xde\xad", want: MalformedFields},
	{name: "nginx TLS to plain port", line: pre + `"\x16\x03\x01\x00\xF7\x01\x00\x00\xF3\x03\x03 \xAB\x22\x5C" 400 157 "-" "-"`, want: MalformedRequest},
	{name: "apache TLS to plain port", format: "common", line: pre + `"\x16\x03\x01" 400 226`, want: MalformedRequest},
	{name: "raw TLS bytes", line: pre + "\"\x16\x03\x01\x00\xf7\x01 \x00\" 400 157" + post, want: MalformedRequest},
	{name: "dash request", line: pre + `"-" 408 -` + post, want: MalformedRequest},
	{name: "empty request", line: pre + `"" 400 0` + post, want: MalformedRequest},
	{name: "method only", line: pre + `"GET" 400 0` + post, want: MalformedRequest},
	{name: "empty target", line: pre + `"GET " 400 0` + post, want: MalformedRequest},
	{name: "empty target with protocol", line: pre + `"GET  HTTP/1.1" 400 0` + post, want: MalformedRequest},
	{name: "protocol as target", line: pre + `"GET HTTP/1.1" 400 0` + post, want: MalformedRequest},
	{name: "OPTIONS star", line: pre + `"OPTIONS * HTTP/1.1" 200 0` + post, want: MalformedRequest},
	{name: "CONNECT", line: pre + `"CONNECT example.com:443 HTTP/1.1" 405 0` + post, want: MalformedRequest},
	{name: "HTTP/2 preface", line: pre + `"PRI * HTTP/2.0" 400 0` + post, want: MalformedRequest},
	{name: "relative target", line: pre + `"GET index.html HTTP/1.1" 400 0` + post, want: MalformedRequest},
	{name: "other scheme", line: pre + `"GET ftp://host/a HTTP/1.1" 400 0` + post, want: MalformedRequest},
	{name: "method not a token", line: pre + `"GE(T /a HTTP/1.1" 400 0` + post, want: MalformedRequest},
	{name: "method too long", line: pre + `"` + strings.Repeat("A", maxMethodLen+1) + ` /a HTTP/1.1" 400 0` + post, want: MalformedRequest},
	{name: "31 Feb", line: `h - - [31/Feb/2024:10:00:00 +0000] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "29 Feb common year", line: `h - - [29/Feb/2023:10:00:00 +0000] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "29 Feb 2100", line: `h - - [29/Feb/2100:10:00:00 +0000] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "31 Apr", line: `h - - [31/Apr/2024:10:00:00 +0000] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "day 0", line: `h - - [00/Apr/2024:10:00:00 +0000] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "day 32", line: `h - - [32/Jan/2024:10:00:00 +0000] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "lowercase month", line: `h - - [10/oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "unknown month", line: `h - - [10/Okt/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "hour 24", line: `h - - [10/Oct/2000:24:00:00 -0700] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "minute 60", line: `h - - [10/Oct/2000:13:60:00 -0700] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "second 61", line: `h - - [10/Oct/2000:13:55:61 -0700] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "zone hour 24", line: `h - - [10/Oct/2000:13:55:36 +2400] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "zone minute 60", line: `h - - [10/Oct/2000:13:55:36 +0060] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "zone without sign", line: `h - - [10/Oct/2000:13:55:36 07000] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "no zone", line: `h - - [10/Oct/2000:13:55:36] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "digit not digit", line: `h - - [1O/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "year not digits", line: `h - - [10/Oct/20x0:13:55:36 -0700] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "iso time", line: `h - - [2000-10-10T13:55:36-07:00] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "before 1970", line: `h - - [31/Dec/1969:23:59:59 +0000] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "before epoch by zone", line: `h - - [01/Jan/1970:00:30:00 +0100] "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "unclosed bracket", line: `h - - [10/Oct/2000:13:55:36 -0700 "GET / HTTP/1.1" 200 1`, want: MalformedTime},
	{name: "no space after time", line: `h - - [10/Oct/2000:13:55:36 -0700]"GET / HTTP/1.1" 200 1`, want: MalformedFields},
	{name: "request not quoted", line: `h - - [10/Oct/2000:13:55:36 -0700] GET / HTTP/1.1 200 1`, want: MalformedFields},
	{name: "unbalanced request quote", line: pre + `"GET /a HTTP/1.1 200 5 -`, want: MalformedFields},
	{name: "escaped closing quote", line: pre + `"GET /a HTTP/1.1\" 200 5`, want: MalformedFields},
	{name: "quote glued to status", line: pre + `"GET /a HTTP/1.1"200 5` + post, want: MalformedFields},
	{name: "status missing size", line: pre + `"GET /a HTTP/1.1" 200`, want: MalformedFields},
	{name: "status two digits", line: pre + `"GET /a HTTP/1.1" 20 5` + post, want: MalformedStatus},
	{name: "status four digits", line: pre + `"GET /a HTTP/1.1" 2000 5` + post, want: MalformedStatus},
	{name: "status 099", line: pre + `"GET /a HTTP/1.1" 099 5` + post, want: MalformedStatus},
	{name: "status 600", line: pre + `"GET /a HTTP/1.1" 600 5` + post, want: MalformedStatus},
	{name: "status dash", line: pre + `"GET /a HTTP/1.1" - 5` + post, want: MalformedStatus},
	{name: "status letters", line: pre + `"GET /a HTTP/1.1" OK! 5` + post, want: MalformedStatus},
	{name: "size not a number", line: pre + `"GET /a HTTP/1.1" 200 12a` + post, want: MalformedFields},
	{name: "size empty", line: pre + `"GET /a HTTP/1.1" 200  ` + post, want: MalformedFields},
}

func TestParse(t *testing.T) {
	for _, cases := range [][]lineCase{goodLines, badLines} {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				format := tc.format
				if format == "" {
					format = "combined"
				}
				p := mustNew(t, Config{Format: format, Site: "example.com"})
				// A previous hit must not leak into a malformed result.
				var h Hit
				if o := p.Parse([]byte(apacheExample), &h); o != OK {
					t.Fatalf("warm-up: %v", o)
				}
				o := p.Parse([]byte(tc.line), &h)
				if o != tc.want {
					t.Fatalf("Parse(%q) = %v, want %v", tc.line, o, tc.want)
				}
				if o != OK {
					if h.Site != nil || h.Page != nil || h.Method != nil || h.Time != 0 || h.Status != 0 {
						t.Errorf("malformed line left hit %+v", h)
					}
					return
				}
				got := lineCase{page: string(h.Page), time: h.Time, status: h.Status, method: string(h.Method)}
				want := lineCase{page: tc.page, time: tc.time, status: tc.status, method: tc.method}
				if got != want {
					t.Errorf("Parse(%q)\n got page %q time %d status %d method %q\nwant page %q time %d status %d method %q",
						tc.line, got.page, got.time, got.status, got.method, want.page, want.time, want.status, want.method)
				}
				if string(h.Site) != "example.com" {
					t.Errorf("site = %q", h.Site)
				}
			})
		}
	}
}

// TestParseTruncated cuts a combined line at every length: the lines that
// hold the complete common part (with its size possibly cut, which cannot
// be told apart) are hits, all shorter ones are malformed.
func TestParseTruncated(t *testing.T) {
	full := apacheExample
	common := apacheCommon // ends in the size "2326"
	p := mustNew(t, Config{Format: "combined"})
	var h Hit
	for n := 0; n <= len(full); n++ {
		o := p.Parse([]byte(full[:n]), &h)
		if wantOK := n >= len(common)-3; (o == OK) != wantOK || o != OK && !o.Malformed() {
			t.Errorf("Parse(%q) = %v, want ok %v", full[:n], o, wantOK)
		}
	}
}

func TestParseHugeLines(t *testing.T) {
	const mib = 1 << 20
	p := mustNew(t, Config{Format: "combined"})
	var h Hit
	for _, tc := range []struct {
		name string
		line []byte
		want Outcome
	}{
		{"letters", bytes.Repeat([]byte("A"), mib+1), MalformedFields},
		{"spaces and brackets", bytes.Repeat([]byte(" ["), mib), MalformedFields},
		{"words then brackets", append([]byte("h - "), bytes.Repeat([]byte("x ["), mib)...), MalformedTime},
		{"backslashes in request", []byte(pre + `"GET /` + strings.Repeat(`\\\"`, mib/3)), MalformedFields},
		{"quotes in request", []byte(pre + `"GET /` + strings.Repeat(`\"`, mib/2) + `"` + ` 200 1`), OK},
		{"huge path", []byte(pre + `"GET /` + strings.Repeat("a/", mib/2) + ` HTTP/1.1" 200 1` + post), OK},
		{"huge invalid path", []byte(pre + `"GET /` + strings.Repeat(`\xFF`, mib/4) + ` HTTP/1.1" 200 1` + post), OK},
		{"huge user agent", []byte(pre + `"GET /a HTTP/1.1" 200 1 "-" "` + strings.Repeat("Mozilla ", mib/8) + `"`), OK},
	} {
		o := p.Parse(tc.line, &h)
		if o != tc.want {
			t.Errorf("%s: Parse = %v, want %v", tc.name, o, tc.want)
			continue
		}
		if o == OK && (len(h.Page) > DefaultMaxPageLen || !utf8.Valid(h.Page) || h.Page[0] != '/') {
			t.Errorf("%s: page of %d bytes %q...", tc.name, len(h.Page), h.Page[:min(len(h.Page), 40)])
		}
	}
	if cap(p.scratch) != DefaultMaxPageLen {
		t.Errorf("scratch grew to %d", cap(p.scratch))
	}
}

// TestParseAllocs checks that Parse allocates nothing, on the fast path,
// the slow page path, long pages and malformed lines alike.
func TestParseAllocs(t *testing.T) {
	lines := benchLines(64, false)
	for _, tc := range append(append([]lineCase{}, goodLines...), badLines...) {
		lines = append(lines, []byte(tc.line))
	}
	lines = append(lines,
		[]byte(pre+`"GET /`+strings.Repeat("x", 2000)+` HTTP/1.1" 200 1`+post),
		[]byte(pre+`"GET /`+strings.Repeat(`\xC3\xA9\xFF`, 500)+` HTTP/1.1" 200 1`+post),
	)
	for _, format := range []string{"combined", "common"} {
		p := mustNew(t, Config{Format: format})
		var h Hit
		allocs := testing.AllocsPerRun(20, func() {
			for _, l := range lines {
				p.Parse(l, &h)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocs per run of %d lines, want 0", format, allocs, len(lines))
		}
		if hits, _ := p.BotCacheStats(); format == "combined" && hits == 0 {
			t.Errorf("combined: no user agent classified")
		}
	}
	// nginx with every measure, and vhost_combined: the bot cache warmed
	// by AllocsPerRun's first run, classifying allocates nothing.
	for _, tc := range []struct {
		cfg  Config
		conv func([]byte) []byte
	}{
		{Config{Format: "nginx", Site: "example.com", LogFormat: ngxDefault + ` $bytes_sent $request_time "$upstream_response_time"`},
			func(l []byte) []byte { return append(bytes.Clone(l), ` 700 - "0.012, 0.030 : 0.001"`...) }},
		{Config{Format: "vhost_combined", Site: SiteFromLine},
			func(l []byte) []byte { return append([]byte("www.example.com:443 "), l...) }},
	} {
		p := mustNew(t, tc.cfg)
		var conv [][]byte
		for _, l := range lines {
			conv = append(conv, tc.conv(l))
		}
		var h Hit
		allocs := testing.AllocsPerRun(20, func() {
			for _, l := range conv {
				p.Parse(l, &h)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocs per run of %d lines, want 0", tc.cfg.Format, allocs, len(conv))
		}
		if hits, _ := p.BotCacheStats(); hits == 0 {
			t.Errorf("%s: no user agent classified", tc.cfg.Format)
		}
	}
}

// TestParseDoesNotModifyLine checks that Parse leaves the line alone.
func TestParseDoesNotModifyLine(t *testing.T) {
	p := mustNew(t, Config{Format: "combined"})
	var h Hit
	for _, tc := range append(append([]lineCase{}, goodLines...), badLines...) {
		line := []byte(tc.line)
		p.Parse(line, &h)
		if string(line) != tc.line {
			t.Errorf("%s: line changed to %q", tc.name, line)
		}
	}
}

func TestWindow(t *testing.T) {
	since := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	p, err := New(Config{Format: "combined", Site: "s", Since: since, Until: since.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var h Hit
	for _, c := range []struct {
		at   string
		want Outcome
	}{
		{"01/Nov/2026:09:59:59 +0000", FilteredWindow},
		{"01/Nov/2026:10:00:00 +0000", OK},
		{"01/Nov/2026:12:59:59 +0200", OK}, // 10:59:59 UTC
		{"01/Nov/2026:11:00:00 +0000", FilteredWindow},
	} {
		line := `1.2.3.4 - - [` + c.at + `] "GET /a HTTP/1.1" 200 5 "-" "ua"`
		if got := p.Parse([]byte(line), &h); got != c.want {
			t.Errorf("%s: %v, want %v", c.at, got, c.want)
		}
	}
}

// FromHost marks the hits whose site is a host from the line that no
// alias mapped: the sites MaxSites bounds (the aggregator applies it, in
// line order: aggregate's TestSummerMaxSites). Parse gives every site as
// it is, MaxSites or not.
func TestFromHost(t *testing.T) {
	p, err := New(Config{Format: "vhost_combined", Site: SiteFromLine, MaxSites: 1,
		SiteAliases: map[string]string{"www.example.com": "example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	line := func(host string, status int) []byte {
		return fmt.Appendf(nil, `%s:80 1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET /a HTTP/1.1" %d 100 "-" "t"`, host, status)
	}
	var h Hit
	for _, tc := range []struct {
		host     string
		want     string
		fromHost bool
	}{
		{"a.test", "a.test", true},
		{"www.example.com", "example.com", false}, // aliased
		{"B.TEST", "b.test", true},
		{"c.test", "c.test", true},
	} {
		if o := p.Parse(line(tc.host, 200), &h); o != OK || string(h.Site) != tc.want || h.FromHost != tc.fromHost {
			t.Errorf("%s: %v site %q from host %v, want %q %v", tc.host, o, h.Site, h.FromHost, tc.want, tc.fromHost)
		}
	}
	q, _ := New(Config{Format: "combined", Site: "s.test"})
	if o := q.Parse([]byte(`1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET /a HTTP/1.1" 200 100 "-" "t"`), &h); o != OK || h.FromHost {
		t.Errorf("a configured site: %v from host %v", o, h.FromHost)
	}
	if _, err := New(Config{Format: "vhost_combined", Site: SiteFromLine, MaxSites: -1}); err == nil || !strings.Contains(err.Error(), "max_sites") {
		t.Errorf("MaxSites -1: %v", err)
	}
}

// The cache of the line before's host gives each line the site siteOf
// gives it: hosts repeated and changed (case, port, trailing dot, alias,
// bad bytes, empty, "-", too long), read from a buffer reused as a
// reader's is.
func TestLastHostAsSiteOf(t *testing.T) {
	cfg := Config{Format: "vhost_combined", Site: SiteFromLine,
		SiteAliases: map[string]string{"www.example.com": "example.com", "a.org": "A"}}
	p := mustNew(t, cfg)
	ref := mustNew(t, cfg)
	hosts := []string{"www.example.com", "WWW.example.com:443", "www.example.com.", "a.org", "b.org", "b.org:80", "B.ORG",
		"", "-", "bad host", "b\x00rg", "[::1]:80", "::1", strings.Repeat("h", maxHostLen), strings.Repeat("h", maxHostLen+1), "a.org."}
	rng := rand.New(rand.NewPCG(13, 14))
	buf := make([]byte, 0, 512)
	for k := range 50_000 {
		host := hosts[rng.IntN(len(hosts))]
		if k < len(hosts) {
			host = hosts[k]
		}
		buf = append(buf[:0], host...)
		site, aliased, ok := p.lastHost.siteOf(p, buf)
		got := string(site)
		for i := range buf {
			buf[i] = 'x' // the next line's bytes
		}
		wantSite, wantAliased, wantOK := ref.siteOf([]byte(host))
		if got != string(wantSite) || aliased != wantAliased || ok != wantOK {
			t.Fatalf("host %q: site %q, %v, %v; siteOf: %q, %v, %v", host, got, aliased, ok, wantSite, wantAliased, wantOK)
		}
	}
}

// A Hit reused for a line without a user agent does not keep the line
// before's.
func TestParseUserAgentNotCarriedOver(t *testing.T) {
	p := mustNew(t, Config{Format: "combined", Site: "example.com"})
	var h Hit
	with := []byte(`1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 2326 "-" "curl/8.0"`)
	without := []byte(`1.2.3.4 - - [10/Oct/2000:13:55:37 -0700] "GET / HTTP/1.0" 200 2326`)
	if o := p.Parse(with, &h); o != OK || string(h.UA) != "curl/8.0" {
		t.Fatalf("Parse(with) = %v, ua %q", o, h.UA)
	}
	if o := p.Parse(without, &h); o != OK || h.UA != nil || h.UADigest != 0 {
		t.Fatalf("Parse(without) = %v, ua %q digest %d; want no user agent", o, h.UA, h.UADigest)
	}
}
