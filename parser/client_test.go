package parser

import (
	"errors"
	"strings"
	"testing"
	"unsafe"
)

// noClient stands for "Hit.Client is nil" in clientCase.client.
const noClient = "<nil>"

type clientCase struct {
	name   string
	line   string
	client string // noClient: nil
	ua     string // noClient: nil
}

func runClientCases(t *testing.T, cfg Config, cases []clientCase) {
	t.Helper()
	p := mustNew(t, cfg)
	for _, tc := range cases {
		var h Hit
		line := []byte(tc.line)
		if o := p.Parse(line, &h); o != OK {
			t.Errorf("%s %s: %s: Parse(%q) = %v", cfg.Format, cfg.Client, tc.name, tc.line, o)
			continue
		}
		if got := showBytes(h.Client); got != tc.client {
			t.Errorf("%s %s: %s: Parse(%q): client %q, want %q", cfg.Format, cfg.Client, tc.name, tc.line, got, tc.client)
		}
		if got := showBytes(h.UA); got != tc.ua {
			t.Errorf("%s %s: %s: Parse(%q): ua %q, want %q", cfg.Format, cfg.Client, tc.name, tc.line, got, tc.ua)
		}
		checkClientUA(t, p, line, &h)
	}
}

func showBytes(b []byte) string {
	if b == nil {
		return noClient
	}
	return string(b)
}

// clients are the addresses every format is tried with, and the Client
// each gives.
var clients = []struct{ logged, want string }{
	{"203.0.113.5", "203.0.113.5"},
	{"2001:db8::1", "2001:db8::1"},
	{"fe80::1%eth0", "fe80::1%eth0"},
	{"proxy-7.internal.example", "proxy-7.internal.example"},
	{strings.Repeat("a", maxClientLen), strings.Repeat("a", maxClientLen)},
	{strings.Repeat("a", maxClientLen+1), noClient},
	{"-", noClient},
}

func clfWith(client string) string {
	return client + ` - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 1 "-" "` + uaBrowser + `"`
}

// TestClientFormats checks Hit.Client and Hit.UA in every format: the
// address as logged, nil for "-" and for more than maxClientLen bytes,
// nil when the format has none.
func TestClientFormats(t *testing.T) {
	var combined, common, vhost, ngx, ngxMid, js, rx []clientCase
	for _, c := range clients {
		l := clfWith(c.logged)
		combined = append(combined, clientCase{c.logged, l, c.want, uaBrowser})
		common = append(common, clientCase{c.logged, l, c.want, noClient})
		vhost = append(vhost, clientCase{c.logged, "www.example.com:443 " + l, c.want, uaBrowser})
		ngx = append(ngx, clientCase{c.logged, l, c.want, uaBrowser})
		ngxMid = append(ngxMid, clientCase{c.logged, `2000-10-10T13:55:36-07:00|` + c.logged + `|/a|200`, c.want, noClient})
		js = append(js, clientCase{c.logged, `{"time":"2000-10-10T13:55:36-07:00","request_uri":"/a","status":200,"remote_addr":"` + c.logged + `","http_user_agent":"curl/8.0"}`, c.want, "curl/8.0"})
		rx = append(rx, clientCase{c.logged, l, c.want, uaBrowser})
	}
	runClientCases(t, Config{Format: "combined", Site: "example.com"}, append(combined,
		clientCase{"common line", strings.TrimSuffix(clfWith("203.0.113.5"), ` "-" "`+uaBrowser+`"`), "203.0.113.5", noClient},
		clientCase{"empty user agent", strings.TrimSuffix(clfWith("203.0.113.5"), uaBrowser+`"`) + `"`, "203.0.113.5", ""},
		clientCase{"escaped user agent", strings.TrimSuffix(clfWith("203.0.113.5"), uaBrowser+`"`) + `a \"b\""`, "203.0.113.5", `a \"b\"`},
		clientCase{"cut user agent", strings.TrimSuffix(clfWith("203.0.113.5"), `"`), "203.0.113.5", uaBrowser},
	))
	runClientCases(t, Config{Format: "common", Site: "example.com"}, common)
	runClientCases(t, Config{Format: "vhost_combined", Site: SiteFromLine}, vhost)
	runClientCases(t, Config{Format: "nginx", Site: "example.com", LogFormat: ngxDefault}, ngx)
	runClientCases(t, Config{Format: "nginx", Site: "example.com", LogFormat: `$time_iso8601|$remote_addr|$request_uri|$status`}, ngxMid)
	runClientCases(t, Config{Format: "nginx", Site: "example.com", LogFormat: `$time_iso8601|$binary_remote_addr|$request_uri|$status`}, []clientCase{
		{"binary_remote_addr is not read", `2000-10-10T13:55:36-07:00|\xCB\x00q\x05|/a|200`, noClient, noClient},
	})
	runClientCases(t, Config{Format: "nginx", Site: "example.com", LogFormat: `[$time_local] "$request" $status`}, []clientCase{
		{"no $remote_addr", `[10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200`, noClient, noClient},
	})
	const jsLine = `{"time":"2000-10-10T13:55:36-07:00","request_uri":"/a","status":200`
	runClientCases(t, Config{Format: "json", Site: "example.com"}, append(js,
		clientCase{"escaped", jsLine + `,"remote_addr":"2001:db8::\u0031","http_user_agent":"a \"b\" \u00e9"}`, "2001:db8::1", `a "b" é`},
		clientCase{"not a string", jsLine + `,"remote_addr":12}`, noClient, noClient},
		clientCase{"null", jsLine + `,"remote_addr":null,"http_user_agent":null}`, noClient, noClient},
		clientCase{"empty", jsLine + `,"remote_addr":"","http_user_agent":""}`, noClient, ""},
		clientCase{"bad escape", jsLine + `,"remote_addr":"10.0.0.\x"}`, noClient, noClient},
		clientCase{"escaped, too long", jsLine + `,"remote_addr":"` + strings.Repeat(`\u0041`, maxClientLen+1) + `"}`, noClient, noClient},
		clientCase{"escaped, long before decoding", jsLine + `,"remote_addr":"` + strings.Repeat(`\u0041`, maxClientLen) + `"}`, strings.Repeat("A", maxClientLen), noClient},
		clientCase{"absent", jsLine + `}`, noClient, noClient},
		clientCase{"x-forwarded-for not read", jsLine + `,"remote_addr":"10.0.0.1","http_x_forwarded_for":"198.51.100.7"}`, "10.0.0.1", noClient},
	))
	runClientCases(t, Config{Format: "json", Site: "example.com", JSON: JSONFields{Client: "request.remote_ip", UserAgent: "request.ua"}}, []clientCase{
		{"nested", `{"ts":"2000-10-10T13:55:36-07:00","time":"2000-10-10T13:55:36-07:00","request":{"remote_ip":"2001:db8::1","ua":"x"},"request_uri":"/a","status":200,"remote_addr":"10.0.0.1"}`, "2001:db8::1", "x"},
	})
	runClientCases(t, Config{Format: "regex", Site: "example.com", Regex: realRegex}, rx)
	runClientCases(t, Config{Format: "regex", Site: "example.com", Regex: `^\S+ \S+ \S+ \[(?P<time>[^\]]+)\] "(?P<request>[^"]*)" (?P<status>\d{3})`}, []clientCase{
		{"no client group", clfWith("203.0.113.5"), noClient, noClient},
	})
	runClientCases(t, Config{Format: "regex", Site: "example.com", Regex: `^(?:(?P<client>\d\S*)|\S+) \S+ \S+ \[(?P<time>[^\]]+)\] "(?P<request>[^"]*)" (?P<status>\d{3})`}, []clientCase{
		{"group matched nothing", clfWith("name.example"), noClient, noClient},
		{"group matched", clfWith("10.0.0.1"), "10.0.0.1", noClient},
	})
}

// TestClientForwardedFor checks client = "x_forwarded_for": the leftmost
// address of the list, trimmed, else $remote_addr.
func TestClientForwardedFor(t *testing.T) {
	ngxXFFFormat := ngxDefault + ` "$http_x_forwarded_for"`
	ngxLine := func(xff string) string { return clfWith("10.0.0.1") + ` "` + xff + `"` }
	cases := []struct{ name, xff, want string }{
		{"one", "198.51.100.7", "198.51.100.7"},
		{"list", "198.51.100.7, 10.0.0.2, 10.0.0.3", "198.51.100.7"},
		{"spaces", "  198.51.100.7 ,10.0.0.2", "198.51.100.7"},
		{"tab", "\t2001:db8::1\t, 10.0.0.2", "2001:db8::1"},
		{"ipv6", "2001:db8::1", "2001:db8::1"},
		{"name", "unknown, 10.0.0.2", "unknown"},
		{"dash", "-", "10.0.0.1"},
		{"empty", "", "10.0.0.1"},
		{"spaces only", "  ", "10.0.0.1"},
		{"empty leftmost", ", 10.0.0.2", "10.0.0.1"},
		{"dash leftmost", " - , 10.0.0.2", "10.0.0.1"},
		{"too long", strings.Repeat("1", maxClientLen+1) + ", 10.0.0.2", noClient},
	}
	var ngx, ngxRemote, js []clientCase
	for _, c := range cases {
		ngx = append(ngx, clientCase{c.name, ngxLine(c.xff), c.want, uaBrowser})
		ngxRemote = append(ngxRemote, clientCase{c.name, ngxLine(c.xff), "10.0.0.1", uaBrowser})
		js = append(js, clientCase{c.name, `{"time":"2000-10-10T13:55:36-07:00","request_uri":"/a","status":200,"remote_addr":"10.0.0.1","http_x_forwarded_for":"` + strings.ReplaceAll(c.xff, "\t", `\t`) + `"}`, c.want, noClient})
	}
	runClientCases(t, Config{Format: "nginx", Site: "example.com", LogFormat: ngxXFFFormat, Client: ClientForwardedFor}, append(ngx,
		clientCase{"missing field", clfWith("10.0.0.1"), "10.0.0.1", uaBrowser + `"`},
		clientCase{"cut field", clfWith("10.0.0.1") + ` "198.51.100.7, 10.0`, "10.0.0.1", uaBrowser},
		clientCase{"both dash", clfWith("-") + ` "-"`, noClient, uaBrowser},
	))
	runClientCases(t, Config{Format: "nginx", Site: "example.com", LogFormat: ngxXFFFormat, Client: ClientRemoteAddr}, ngxRemote)
	runClientCases(t, Config{Format: "nginx", Site: "example.com", LogFormat: ngxXFFFormat}, ngxRemote)
	// X-Forwarded-For before $remote_addr, and no $remote_addr at all.
	runClientCases(t, Config{Format: "nginx", Site: "example.com", Client: ClientForwardedFor, LogFormat: `$time_iso8601|$http_x_forwarded_for|$remote_addr|$request_uri|$status`}, []clientCase{
		{"first", `2000-10-10T13:55:36-07:00|198.51.100.7, 10.0.0.2|10.0.0.1|/a|200`, "198.51.100.7", noClient},
		{"dash", `2000-10-10T13:55:36-07:00|-|10.0.0.1|/a|200`, "10.0.0.1", noClient},
	})
	runClientCases(t, Config{Format: "nginx", Site: "example.com", Client: ClientForwardedFor, LogFormat: `$time_iso8601|$http_x_forwarded_for|$request_uri|$status`}, []clientCase{
		{"no remote_addr", `2000-10-10T13:55:36-07:00|198.51.100.7|/a|200`, "198.51.100.7", noClient},
		{"no remote_addr, dash", `2000-10-10T13:55:36-07:00|-|/a|200`, noClient, noClient},
	})
	const jsLine = `{"time":"2000-10-10T13:55:36-07:00","request_uri":"/a","status":200,"remote_addr":"10.0.0.1"`
	runClientCases(t, Config{Format: "json", Site: "example.com", Client: ClientForwardedFor}, append(js,
		clientCase{"missing field", jsLine + `}`, "10.0.0.1", noClient},
		clientCase{"null", jsLine + `,"http_x_forwarded_for":null}`, "10.0.0.1", noClient},
		clientCase{"escaped comma", jsLine + `,"http_x_forwarded_for":"198.51.100.7\u002c 10.0.0.2"}`, "198.51.100.7", noClient},
		clientCase{"escaped", jsLine + `,"http_x_forwarded_for":"\u0032001:db8::1, 10.0.0.2"}`, "2001:db8::1", noClient},
		clientCase{"bad escape", jsLine + `,"http_x_forwarded_for":"\x, 10.0.0.2"}`, "10.0.0.1", noClient},
	))
	runClientCases(t, Config{Format: "json", Site: "example.com", Client: ClientForwardedFor,
		JSON: JSONFields{Client: "ClientHost", ForwardedFor: "request_X-Forwarded-For"}}, []clientCase{
		{"named fields", `{"time":"2000-10-10T13:55:36-07:00","request_uri":"/a","status":200,"ClientHost":"10.0.0.1","http_x_forwarded_for":"10.9.9.9","request_X-Forwarded-For":"198.51.100.7, 10.0.0.2"}`, "198.51.100.7", noClient},
		{"named fields, none", `{"time":"2000-10-10T13:55:36-07:00","request_uri":"/a","status":200,"ClientHost":"10.0.0.1","http_x_forwarded_for":"10.9.9.9"}`, "10.0.0.1", noClient},
	})
}

// TestClientConfig checks that a bad client setting is an error naming
// its key.
func TestClientConfig(t *testing.T) {
	ngxXFFFormat := ngxDefault + ` "$http_x_forwarded_for"`
	for _, tc := range []struct {
		cfg    Config
		fields []string
	}{
		{Config{Format: "combined", Site: "a", Client: ClientForwardedFor}, []string{"client"}},
		{Config{Format: "common", Site: "a", Client: ClientForwardedFor}, []string{"client"}},
		{Config{Format: "vhost_combined", Site: SiteFromLine, Client: ClientForwardedFor}, []string{"client"}},
		{Config{Format: "regex", Site: "a", Regex: realRegex, Client: ClientForwardedFor}, []string{"client"}},
		{Config{Format: "nginx", Site: "a", LogFormat: ngxDefault, Client: ClientForwardedFor}, []string{"client"}},
		{Config{Format: "nginx", Site: "a", LogFormat: ngxXFFFormat, Client: "xff"}, []string{"client"}},
		{Config{Format: "combined", Site: "a", Client: "Remote_Addr"}, []string{"client"}},
		{Config{Format: "json", Site: "a", JSON: JSONFields{ForwardedFor: "xff"}}, []string{"json.forwarded_for"}},
		{Config{Format: "json", Site: "a", Client: ClientRemoteAddr, JSON: JSONFields{ForwardedFor: "xff"}}, []string{"json.forwarded_for"}},
		{Config{Format: "nginx", Site: "a", LogFormat: ngxXFFFormat, Client: ClientForwardedFor}, nil},
		{Config{Format: "nginx", Site: "a", LogFormat: ngxDefault, Client: ClientRemoteAddr}, nil},
		{Config{Format: "json", Site: "a", Client: ClientForwardedFor, JSON: JSONFields{ForwardedFor: "xff"}}, nil},
		{Config{Format: "json", Site: "a", Client: ClientForwardedFor}, nil},
		{Config{Format: "combined", Site: "a", Client: ClientRemoteAddr}, nil},
	} {
		_, err := New(tc.cfg)
		var got []string
		for _, e := range unjoinErr(err) {
			var ce *ConfigError
			if errors.As(e, &ce) {
				got = append(got, ce.Field)
			} else {
				got = append(got, e.Error())
			}
		}
		if strings.Join(got, " ") != strings.Join(tc.fields, " ") {
			t.Errorf("%s %q: errors %v, want fields %v", tc.cfg.Format, tc.cfg.Client, err, tc.fields)
		}
	}
}

// TestUABound checks that Hit.UA is the first maxUALen bytes of a long
// user agent, the bytes the class was decided on.
func TestUABound(t *testing.T) {
	long := strings.Repeat("b", maxUALen) + "TestCrawler/1.0"
	for _, tc := range []struct {
		cfg  Config
		line string
	}{
		{Config{Format: "combined", Site: "example.com"}, clf("1", ` "-" "`+long+`"`)},
		{Config{Format: "nginx", Site: "example.com", LogFormat: ngxDefault}, clf("1", ` "-" "`+long+`"`)},
		{Config{Format: "json", Site: "example.com"}, `{"time":"2000-10-10T13:55:36-07:00","request_uri":"/a","status":200,"remote_addr":"203.0.113.5","http_user_agent":"` + long + `"}`},
		{Config{Format: "regex", Site: "example.com", Regex: realRegex}, clf("1", ` "-" "`+long+`"`)},
	} {
		runClientCases(t, tc.cfg, []clientCase{{"long user agent", tc.line, "203.0.113.5", long[:maxUALen]}})
	}
}

// TestClientAllocs checks that reading the client and the user agent
// allocates nothing, X-Forwarded-For included.
func TestClientAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are counted without -race")
	}
	var lines [][]byte
	for _, l := range benchLines(64, false) {
		lines = append(lines, append(append([]byte(nil), l...), ` "198.51.100.7, 10.0.0.2"`...))
	}
	for _, cfg := range []Config{
		{Format: "combined", Site: "example.com"},
		{Format: "nginx", Site: "example.com", LogFormat: ngxDefault + ` "$http_x_forwarded_for"`, Client: ClientForwardedFor},
	} {
		p := mustNew(t, cfg)
		var h Hit
		clients, uas := 0, 0
		for _, l := range lines {
			if p.Parse(l, &h) == OK {
				if h.Client != nil {
					clients++
				}
				if h.UA != nil {
					uas++
				}
			}
		}
		if clients == 0 || uas == 0 {
			t.Errorf("%s: %d clients, %d user agents", cfg.Format, clients, uas)
		}
		if n := testing.AllocsPerRun(20, func() {
			for _, l := range lines {
				p.Parse(l, &h)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocs per run of %d lines", cfg.Format, n, len(lines))
		}
	}
}

// TestRealLogClientUA checks Client and UA over the 10,000 real lines in
// the formats that carry them as the combined log has them.
func TestRealLogClientUA(t *testing.T) {
	_, ms := realLines(t)
	for _, fc := range formatCases {
		var hasClient, hasUA bool
		switch fc.name {
		case "common":
			hasClient = true
		case "vhost_combined", "nginx", "regex":
			hasClient, hasUA = true, true
		default:
			continue
		}
		t.Run(fc.name, func(t *testing.T) {
			p := mustNew(t, fc.cfg)
			var h Hit
			bad := 0
			for i, m := range ms {
				line := []byte(fc.convert(i, m))
				if p.Parse(line, &h) != OK {
					continue
				}
				client, ua := noClient, noClient
				if hasClient && m[1] != "-" && len(m[1]) <= maxClientLen {
					client = m[1]
				}
				if hasUA {
					ua = m[9][:min(len(m[9]), maxUALen)]
				}
				if (showBytes(h.Client) != client || showBytes(h.UA) != ua) && bad < 5 {
					bad++
					t.Errorf("line %d: client %q ua %q, want %q %q", i+1, h.Client, h.UA, client, ua)
				}
				checkClientUA(t, p, line, &h)
			}
		})
	}
}

// checkClientUA checks that a hit's Client and UA are within their
// bounds and point into the line or the Parser's own buffers.
func checkClientUA(t *testing.T, p *Parser, line []byte, h *Hit) {
	t.Helper()
	if h.Client != nil && (len(h.Client) == 0 || len(h.Client) > maxClientLen || string(h.Client) == "-") {
		t.Fatalf("Parse(%q): client %q", line, h.Client)
	}
	if len(h.UA) > maxUALen {
		t.Fatalf("Parse(%q): user agent of %d bytes", line, len(h.UA))
	}
	areas := [][]byte{line}
	if p.js != nil {
		for _, b := range p.js.bufs {
			areas = append(areas, b[:cap(b)])
		}
	}
	for _, b := range [][]byte{h.Client, h.UA} {
		if !within(b, areas) {
			t.Fatalf("Parse(%q): %q is not in the line or the parser's buffers", line, b)
		}
	}
}

// within reports whether b lies inside one of areas (an empty b
// anywhere).
func within(b []byte, areas [][]byte) bool {
	if len(b) == 0 {
		return true
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	for _, a := range areas {
		if len(a) == 0 {
			continue
		}
		base := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
		if start >= base && start+uintptr(len(b)) <= base+uintptr(len(a)) {
			return true
		}
	}
	return false
}
