package parser

import (
	"strings"
	"testing"
)

const ngxDefault = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`

type fmtCase struct {
	name string
	line string
	want Outcome
	site string // "" means example.com
	page string
	time int64
	st   int
	meth string
}

func runFormatCases(t *testing.T, cfg Config, cases []fmtCase) {
	t.Helper()
	p := mustNew(t, cfg)
	for _, tc := range cases {
		var h Hit
		o := p.Parse([]byte(tc.line), &h)
		if o != tc.want {
			t.Errorf("%s: Parse(%q) = %v, want %v", tc.name, tc.line, o, tc.want)
			continue
		}
		if o != OK {
			continue
		}
		site := tc.site
		if site == "" {
			site = "example.com"
		}
		meth := tc.meth
		if meth == "" {
			meth = "GET"
		}
		st := tc.st
		if st == 0 {
			st = 200
		}
		if string(h.Site) != site || string(h.Page) != tc.page || h.Time != tc.time || h.Status != st || string(h.Method) != meth {
			t.Errorf("%s: Parse(%q)\n got %s %s %d %d %s\nwant %s %s %d %d %s", tc.name, tc.line,
				h.Site, h.Page, h.Time, h.Status, h.Method, site, tc.page, tc.time, st, meth)
		}
	}
}

func TestVhostCombined(t *testing.T) {
	aliases := map[string]string{"www.example.com": "example.com", "Blog.Example.com": "blog"}
	cases := []fmtCase{
		{name: "vhost", line: "example.com:80 " + apacheExample, page: "/apache_pb.gif", time: tAp},
		{name: "alias", line: "www.example.com:443 " + apacheExample, page: "/apache_pb.gif", time: tAp},
		{name: "alias key lowercased", line: "blog.example.com:443 " + apacheExample, site: "blog", page: "/apache_pb.gif", time: tAp},
		{name: "upper case host", line: "WWW.Example.COM:443 " + apacheExample, page: "/apache_pb.gif", time: tAp},
		{name: "no port, trailing dot", line: "other.org. " + apacheExample, site: "other.org", page: "/apache_pb.gif", time: tAp},
		{name: "ipv6 host", line: "[2001:db8::1]:80 " + apacheExample, site: "[2001:db8::1]", page: "/apache_pb.gif", time: tAp},
		{name: "bad host", line: "exa/mple.com:80 " + apacheExample, want: MalformedHost},
		{name: "dash host", line: "- " + apacheExample, want: MalformedHost},
		{name: "missing vhost", line: apacheExample, want: MalformedFields},
		{name: "one word", line: "example.com:80", want: MalformedFields},
		{name: "cut short", line: "example.com:80 " + apacheExample[:40], want: MalformedTime},
	}
	runFormatCases(t, Config{Format: "vhost_combined", Site: SiteFromLine, SiteAliases: aliases}, cases)
	// A fixed site ignores the vhost.
	runFormatCases(t, Config{Format: "vhost_combined", Site: "example.com"}, []fmtCase{
		{name: "fixed site", line: "other.org:80 " + apacheExample, page: "/apache_pb.gif", time: tAp},
		{name: "fixed site, bad host", line: "- " + apacheExample, page: "/apache_pb.gif", time: tAp},
	})
}

func TestNginxFormat(t *testing.T) {
	// The nginx default "combined" log_format plus $request_time.
	runFormatCases(t, Config{Format: "nginx", Site: "example.com", LogFormat: ngxDefault + ` $request_time`}, []fmtCase{
		{name: "default", line: `203.0.113.5 - - [10/Oct/2000:13:55:36 -0700] "GET /a/b?x=1 HTTP/1.1" 200 612 "-" "curl/8.0" 0.004`, page: "/a/b", time: tAp},
		{name: "user with space", line: `203.0.113.5 - bob smith [10/Oct/2000:13:55:36 -0700] "POST /a HTTP/1.1" 201 612 "-" "curl/8.0" 0.004`, page: "/a", time: tAp, st: 201, meth: "POST"},
		{name: "hex escapes", line: `::1 - - [10/Oct/2000:13:55:36 -0700] "GET /caf\xC3\xA9\x22 HTTP/1.1" 200 0 "-" "a\x22b" 0.000`, page: `/café"`, time: tAp},
		{name: "tls garbage", line: `::1 - - [10/Oct/2000:13:55:36 -0700] "\x16\x03\x01\x00\xF7\x01" 400 157 "-" "-" 0.001`, want: MalformedRequest},
		{name: "dash request", line: `::1 - - [10/Oct/2000:13:55:36 -0700] "-" 400 0 "-" "-" 0.001`, want: MalformedRequest},
		{name: "bad time", line: `::1 - - [31/Feb/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 0 "-" "-" 0.001`, want: MalformedTime},
		{name: "short time", line: `::1 - - [31/Feb/2000] "GET / HTTP/1.1" 200 0 "-" "-" 0.001`, want: MalformedFields},
		{name: "bad status", line: `::1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 2000 0 "-" "-" 0.001`, want: MalformedStatus},
		{name: "unbalanced quote", line: `::1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1 200 0`, want: MalformedFields},
		{name: "truncated", line: `::1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200`, want: MalformedFields},
		{name: "wrong prefix", line: `::1 [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 0 "-" "-" 0.1`, want: MalformedFields},
		{name: "binary", line: "\x00\xff\xfe", want: MalformedFields},
	})
	// Host, ISO time, separate method and URI, unquoted fields, ${var}.
	runFormatCases(t, Config{Format: "nginx", Site: SiteFromLine, SiteAliases: map[string]string{"www.example.com": "example.com"},
		LogFormat: `${host}|$time_iso8601|$request_method|$request_uri|$status|$body_bytes_sent|$http_user_agent`}, []fmtCase{
		{name: "iso", line: `www.example.com|2000-10-10T13:55:36-07:00|GET|/x?y=1|304|0|curl`, page: "/x", time: tAp, st: 304},
		{name: "iso Z fraction", line: `example.com|2000-10-10T20:55:36.123Z|HEAD|http://example.com/z|200|0|-`, page: "/z", time: tAp, meth: "HEAD"},
		{name: "no host", line: `-|2000-10-10T20:55:36Z|GET|/|200|0|-`, want: MalformedHost},
		{name: "bad iso", line: `a.b|2000-13-10T20:55:36Z|GET|/|200|0|-`, want: MalformedTime},
		{name: "bad method", line: `a.b|2000-10-10T20:55:36Z|G(T|/|200|0|-`, want: MalformedRequest},
		{name: "star uri", line: `a.b|2000-10-10T20:55:36Z|OPTIONS|*|200|0|-`, want: MalformedRequest},
	})
	// $msec and $uri, $http_host with a port; the method is not logged.
	runFormatCases(t, Config{Format: "nginx", Site: SiteFromLine, LogFormat: `$msec $http_host "$uri" $status`}, []fmtCase{
		{name: "msec", line: `971211336.123 Example.com:8080 "/a b" 200`, page: "/a%20b", time: tAp, meth: "-"},
		{name: "msec no fraction", line: `971211336 example.com "/" 200`, page: "/", time: tAp, meth: "-"},
		{name: "msec garbage", line: `97121x336 example.com "/" 200`, want: MalformedTime},
	})
}

func TestJSONFormat(t *testing.T) {
	// nginx escape=json with the default field names.
	runFormatCases(t, Config{Format: "json", Site: SiteFromLine}, []fmtCase{
		{name: "nginx", line: `{"time":"2000-10-10T13:55:36-07:00","host":"example.com","request_uri":"/a/b?x=1","request_method":"GET","status":"200","http_user_agent":"curl"}`, page: "/a/b", time: tAp},
		{name: "status number, spaces", line: ` { "time" : "2000-10-10T13:55:36-07:00" , "host" : "example.com", "request_uri" : "/a" , "status" : 404 , "x": [1, {"y": "}"}], "n": null } `, page: "/a", time: tAp, st: 404, meth: "-"},
		{name: "escapes", line: `{"time":"2000-10-10T13:55:36-07:00","host":"example.com","request_uri":"/caf\u00e9\/\"q\\\ud83d\ude00\u0001","status":200}`, page: `/café/"q\😀%01`, time: tAp, meth: "-"},
		{name: "raw invalid utf-8", line: "{\"time\":\"2000-10-10T13:55:36-07:00\",\"host\":\"example.com\",\"request_uri\":\"/a\xff\",\"status\":200}", page: "/a%FF", time: tAp, meth: "-"},
		{name: "request field", line: `{"time":"2000-10-10T13:55:36-07:00","host":"example.com","request":"POST /p HTTP/1.1","status":200}`, page: "/p", time: tAp, meth: "POST"},
		{name: "no uri", line: `{"time":"2000-10-10T13:55:36-07:00","host":"example.com","status":200}`, want: MalformedRequest},
		{name: "no time", line: `{"host":"example.com","request_uri":"/","status":200}`, want: MalformedTime},
		{name: "no status", line: `{"time":"2000-10-10T13:55:36-07:00","host":"example.com","request_uri":"/"}`, want: MalformedStatus},
		{name: "no host", line: `{"time":"2000-10-10T13:55:36-07:00","request_uri":"/","status":200}`, want: MalformedHost},
		{name: "truncated", line: `{"time":"2000-10-10T13:55:36-07:00","host":"example.com","request_uri":"/","status":20`, want: MalformedFields},
		{name: "bad escape", line: `{"time":"2000-10-10T13:55:36-07:00","host":"example.com","request_uri":"/\q","status":200}`, want: MalformedFields},
		{name: "not an object", line: `["time"]`, want: MalformedFields},
		{name: "trailing garbage", line: `{"time":"2000-10-10T13:55:36-07:00","host":"example.com","request_uri":"/","status":200} x`, want: MalformedFields},
		{name: "deep", line: strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40), want: MalformedFields},
		{name: "text", line: `10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 1`, want: MalformedFields},
	})
	// Caddy: nested fields, epoch seconds as a float.
	caddy := JSONFields{Time: "ts", URI: "request.uri", Method: "request.method", Host: "request.host", Status: "status"}
	runFormatCases(t, Config{Format: "json", Site: SiteFromLine, JSON: caddy, TimeLayout: "unix"}, []fmtCase{
		{name: "caddy", line: `{"level":"info","ts":971211336.5,"logger":"http.log.access","msg":"handled request","request":{"remote_ip":"::1","proto":"HTTP/2.0","method":"GET","host":"example.com","uri":"/docs/?q=1","headers":{"User-Agent":["curl/8"]}},"duration":0.001,"size":12,"status":200}`, page: "/docs/", time: tAp},
	})
	// Traefik: flat fields, milliseconds.
	traefik := JSONFields{Time: "StartUTC", URI: "RequestPath", Method: "RequestMethod", Host: "RequestHost", Status: "DownstreamStatus"}
	runFormatCases(t, Config{Format: "json", Site: "example.com", JSON: traefik, TimeLayout: "unix_ms"}, []fmtCase{
		{name: "traefik", line: `{"RequestHost":"x","RequestMethod":"GET","RequestPath":"/t","DownstreamStatus":301,"StartUTC":971211336999}`, page: "/t", time: tAp, st: 301},
	})
	// Time as CLF and as a Go layout.
	runFormatCases(t, Config{Format: "json", Site: "example.com", TimeLayout: "02/Jan/2006:15:04:05 -0700"}, []fmtCase{
		{name: "clf", line: `{"time":"10/Oct/2000:13:55:36 -0700","request_uri":"/","status":200}`, page: "/", time: tAp, meth: "-"},
	})
	runFormatCases(t, Config{Format: "json", Site: "example.com", TimeLayout: "2006-01-02 15:04:05 MST"}, []fmtCase{
		{name: "go layout", line: `{"time":"2000-10-10 20:55:36 UTC","request_uri":"/","status":200}`, page: "/", time: tAp, meth: "-"},
		{name: "go layout bad", line: `{"time":"2000-10-10","request_uri":"/","status":200}`, want: MalformedTime},
	})
}

func TestRegexFormat(t *testing.T) {
	re := `^(?P<site>\S+) \[(?P<time>[^\]]+)\] (?P<method>\S+) (?P<path>\S+) (?P<status>\d+) "(?P<user_agent>[^"]*)"`
	runFormatCases(t, Config{Format: "regex", Site: SiteFromLine, Regex: re, Filter: FilterConfig{ExcludeUserAgents: []string{"bots"}}}, []fmtCase{
		{name: "ok", line: `example.com [10/Oct/2000:13:55:36 -0700] GET /a?b 200 "Mozilla"`, page: "/a", time: tAp},
		{name: "bot", line: `example.com [10/Oct/2000:13:55:36 -0700] GET /a?b 200 "Googlebot/2.1"`, want: FilteredUserAgent},
		{name: "no match", line: `example.com GET /a 200`, want: MalformedFields},
		{name: "bad time", line: `example.com [10/Oct/2000] GET /a 200 ""`, want: MalformedTime},
		{name: "bad path", line: `example.com [10/Oct/2000:13:55:36 -0700] GET a 200 ""`, want: MalformedRequest},
		{name: "bad status", line: `example.com [10/Oct/2000:13:55:36 -0700] GET /a 2000 ""`, want: MalformedStatus},
	})
	runFormatCases(t, Config{Format: "regex", Site: "example.com", TimeLayout: "rfc3339", Regex: `^(?P<time>\S+) "(?P<request>[^"]*)" (?P<status>\d+)`}, []fmtCase{
		{name: "request", line: `2000-10-10T20:55:36Z "PUT /r HTTP/1.1" 204`, page: "/r", time: tAp, st: 204, meth: "PUT"},
		{name: "bad request", line: `2000-10-10T20:55:36Z "-" 400`, want: MalformedRequest},
	})
}

func TestTimeLayouts(t *testing.T) {
	for _, tc := range []struct {
		layout, in string
		want       int64
		ok         bool
	}{
		{"rfc3339", "2000-10-10T13:55:36-07:00", tAp, true},
		{"rfc3339", "2000-10-10T13:55:36-0700", tAp, true},
		{"rfc3339", "2000-10-10 20:55:36Z", tAp, true},
		{"rfc3339", "2000-10-10T20:55:36.999999999Z", tAp, true},
		{"rfc3339", "2000-10-10T20:55:36.Z", 0, false},
		{"rfc3339", "2000-02-30T20:55:36Z", 0, false},
		{"rfc3339", "1969-12-31T23:59:59Z", 0, false},
		{"rfc3339", "2000-10-10T20:55:36", 0, false},
		{"rfc3339", "2000-10-10T20:55:36+24:00", 0, false},
		{"clf", "[10/Oct/2000:13:55:36 -0700]", tAp, true},
		{"unix", "971211336", tAp, true},
		{"unix", "971211336.", tAp, true},
		{"unix", "-1", 0, false},
		{"unix", "1e9", 0, false},
		{"unix", "99999999999999", 0, false},
		{"unix_ms", "971211336000", tAp, true},
		{"unix_ms", "", 0, false},
	} {
		l, err := parseTimeLayout(tc.layout, "")
		if err != nil {
			t.Fatal(err)
		}
		got, ok := l.parse([]byte(tc.in))
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s %q = %d %v, want %d %v", tc.layout, tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
