package parser

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/logtally/logtally/botclass"
)

// fuzzConfigs are the parsers FuzzFormats runs each input through, with
// rules and filters on so their code is fuzzed too.
var fuzzConfigs = []Config{
	{Format: "vhost_combined", Site: SiteFromLine, SiteAliases: map[string]string{"www.example.com": "example.com"},
		Filter: FilterConfig{ExcludeUserAgents: []string{"bots"}, ExcludeExtensions: []string{"png"}}},
	{Format: "nginx", Site: "example.com", LogFormat: ngxDefault + " $request_time", MaxPageLen: MinMaxPageLen,
		Page: PageConfig{KeepQuery: []string{"id", "page"}, Lowercase: true, StripTrailingSlash: true, IndexFiles: []string{"index.html"},
			Rewrite: []Rewrite{{Match: `^/u/[0-9]+`, Replace: "/u/:id"}}}},
	{Format: "nginx", Site: SiteFromLine, LogFormat: `$time_iso8601|$http_host|$request_method|$request_uri|$status|$msec|$http_user_agent`},
	{Format: "nginx", Site: "example.com", Bots: []botclass.Pattern{{Class: botclass.Tool, Match: `^x`}},
		LogFormat: `$upstream_response_time|$time_iso8601|$request_uri|$status|$bytes_sent|$http_user_agent|$request_time|$body_bytes_sent`},
	{Format: "json", Site: SiteFromLine, Page: PageConfig{KeepQuery: []string{"q"}}},
	{Format: "json", Site: "example.com", TimeLayout: "unix", JSON: JSONFields{Time: "ts", URI: "request.uri", Method: "request.method", Bytes: "size", RequestTime: "duration", TimeUnit: "ns"}},
	{Format: "regex", Site: SiteFromLine, Regex: `^(?P<site>\S+) \[(?P<time>[^\]]+)\] "(?P<request>[^"]*)" (?P<status>\d+) "(?P<user_agent>[^"]*)"(?: (?P<bytes>\S+) (?P<request_time>\S*) ?(?P<request_time_us>\S*))?`,
		Filter: FilterConfig{ExcludePaths: []string{"/admin", "^/x+$"}, Status: []string{"2xx", "404"}}},
	{Format: "nginx", Site: "example.com", Client: ClientForwardedFor, LogFormat: ngxDefault + ` "$http_x_forwarded_for"`},
	{Format: "json", Site: "example.com", Client: ClientForwardedFor, JSON: JSONFields{Client: "c.ip", ForwardedFor: "xff"}},
	{Format: "regex", Site: "example.com", Regex: realRegex},
}

// FuzzFormats checks, for any bytes and every format in fuzzConfigs:
// Parse does not panic or modify the line; a hit has a valid site and a
// page that starts with '/', is valid UTF-8 and within MaxPageLen,
// measures in range (RT >= -1, Bot < NumClasses: checkMeasures), and a
// Client and UA within their bounds, inside the line or the Parser's
// buffers (checkClientUA); a non-hit is malformed or filtered with a zero
// Hit; parsing the line again
// (after another line) gives the same result.
func FuzzFormats(f *testing.F) {
	for _, fc := range formatCases {
		for _, l := range fc.extra {
			f.Add([]byte(l))
		}
	}
	for _, s := range []string{
		"example.com:80 " + apacheExample,
		`www.example.com|2000-10-10T13:55:36-07:00|GET|/x?y=1|304|971211336.1|curl`,
		`{"time":"2000-10-10T13:55:36-07:00","host":"example.com","request_uri":"/a/b?q=1","status":200}`,
		`{"ts":971211336.5,"request":{"uri":"/d","method":"GET"},"status":200}`,
		`example.com [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 "ua"`,
		`example.com [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 "ua" 12 0.5e1 1234`,
		`0.012, - : 0.5|2000-10-10T13:55:36-07:00|/a|200|12|xbot|0.001|-`,
		`{"ts":971211336.5,"request":{"uri":"/d","method":"GET"},"status":200,"size":"12","duration":123456789}`,
		`203.0.113.5 - - [10/Oct/2000:13:55:36 -0700] "GET /U/12/index.html?page=2&id=1 HTTP/1.1" 200 612 "-" "curl" 0.004`,
		`2001:db8::1 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 612 "-" "curl" " 198.51.100.7 , 10.0.0.2"`,
		`{"time":"2000-10-10T13:55:36-07:00","request_uri":"/a","status":200,"c":{"ip":"10.0.0.1"},"xff":"198.51.100.7, 10.0.0.2"}`,
	} {
		f.Add([]byte(s))
	}
	var parsers []*Parser
	for _, c := range fuzzConfigs {
		parsers = append(parsers, mustNew(f, c))
	}
	other := []byte(`{"time":"2001-10-10T13:55:36Z","host":"other.org","request_uri":"/zz","status":201}`)
	f.Fuzz(func(t *testing.T, line []byte) {
		orig := bytes.Clone(line)
		for i, p := range parsers {
			var h Hit
			o := p.Parse(line, &h)
			if !bytes.Equal(line, orig) {
				t.Fatalf("%s: Parse modified the line", fuzzConfigs[i].Format)
			}
			if o == OK {
				if len(h.Page) == 0 || (h.Page[0] != '/') || len(h.Page) > p.maxPageLen || !utf8.Valid(h.Page) {
					t.Fatalf("%s: Parse(%q): page %q", fuzzConfigs[i].Format, line, h.Page)
				}
				if len(h.Site) == 0 || !utf8.Valid(h.Site) || h.Time < 0 || h.Status < 100 || h.Status > 599 || !isToken(h.Method) {
					t.Fatalf("%s: Parse(%q): hit %+v", fuzzConfigs[i].Format, line, h)
				}
				checkMeasures(t, line, &h)
				checkClientUA(t, p, line, &h)
			} else if !o.Malformed() && !o.Filtered() || h.Site != nil || h.Page != nil || h.Method != nil || h.Time != 0 || h.Status != 0 || h.Bytes != 0 || h.RT != 0 || h.Bot != 0 || h.Client != nil || h.UA != nil {
				t.Fatalf("%s: Parse(%q) = %v, hit %+v", fuzzConfigs[i].Format, line, o, h)
			}
			first := cloneHit(h)
			p.Parse(other, &h)
			if o2 := p.Parse(line, &h); o2 != o || !sameHit(first, h) || !bytes.Equal(first.Site, h.Site) {
				t.Fatalf("%s: Parse(%q) = %v %+v, then %v %+v", fuzzConfigs[i].Format, line, o, first, o2, h)
			}
		}
	})
}
