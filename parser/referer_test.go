package parser

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// refCase is a line and the Hit.Referer it gives (noClient: nil).
type refCase struct {
	name, line, ref string
}

func runRefCases(t *testing.T, cfg Config, cases []refCase) {
	t.Helper()
	p := mustNew(t, cfg)
	for _, tc := range cases {
		var h Hit
		if o := p.Parse([]byte(tc.line), &h); o != OK {
			t.Errorf("%s: %s: Parse(%q) = %v", cfg.Format, tc.name, tc.line, o)
			continue
		}
		if got := showBytes(h.Referer); got != tc.ref {
			t.Errorf("%s: %s: Parse(%q): referer %q, want %q", cfg.Format, tc.name, tc.line, got, tc.ref)
		}
	}
}

// clfRef is a combined line with referer ref (written as is).
func clfRef(ref string) string {
	return `203.0.113.5 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 1 ` + ref + ` "` + uaBrowser + `"`
}

// TestRefererFormats checks Hit.Referer in every format that logs one,
// with Config.Referer: as logged ("-" too), nil when the line has none,
// at most MaxRefererLen bytes; and nil without Config.Referer.
func TestRefererFormats(t *testing.T) {
	const url = "https://www.google.com/search?q=a+b&hl=en"
	long := "https://example.org/" + strings.Repeat("p", MaxRefererLen)
	clfCases := []refCase{
		{"none", clfRef(`"-"`), "-"},
		{"url", clfRef(`"` + url + `"`), url},
		{"empty", clfRef(`""`), ""},
		{"escaped quote", clfRef(`"http://a.example/\"x\""`), `http://a.example/\"x\"`},
		{"long", clfRef(`"` + long + `"`), long[:MaxRefererLen]},
		{"common line", strings.TrimSuffix(clfRef(`"-"`), ` "-" "`+uaBrowser+`"`), noClient},
		{"cut referer", `203.0.113.5 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 1 "http://a.example/`, noClient},
		{"no user agent", `203.0.113.5 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 1 "http://a.example/"`, "http://a.example/"},
	}
	runRefCases(t, Config{Format: "combined", Site: "example.com", Referer: true}, clfCases)
	var vhost []refCase
	for _, c := range clfCases {
		vhost = append(vhost, refCase{c.name, "www.example.com:443 " + c.line, c.ref})
	}
	runRefCases(t, Config{Format: "vhost_combined", Site: SiteFromLine, Referer: true}, vhost)
	runRefCases(t, Config{Format: "nginx", Site: "example.com", LogFormat: ngxDefault, Referer: true}, clfCases[:5])
	runRefCases(t, Config{Format: "nginx", Site: "example.com", LogFormat: `$time_iso8601|$request_uri|$status|$http_referer`, Referer: true}, []refCase{
		{"last", `2000-10-10T13:55:36-07:00|/a|200|` + url, url},
		{"dash", `2000-10-10T13:55:36-07:00|/a|200|-`, "-"},
	})
	runRefCases(t, Config{Format: "nginx", Site: "example.com", LogFormat: `$time_iso8601|$request_uri|$status|"$http_referer"|$request_time`, Referer: true}, []refCase{
		{"cut, after what a hit needs", `2000-10-10T13:55:36-07:00|/a|200|"http://a.example/x`, "http://a.example/x"},
	})
	const js = `{"time":"2000-10-10T13:55:36-07:00","request_uri":"/a","status":200`
	runRefCases(t, Config{Format: "json", Site: "example.com", Referer: true}, []refCase{
		{"url", js + `,"http_referer":"` + url + `"}`, url},
		{"escaped", js + `,"http_referer":"https:\/\/a.example\/?q=\u00e9\u0026x"}`, "https://a.example/?q=é&x"},
		{"dash", js + `,"http_referer":"-"}`, "-"},
		{"absent", js + `}`, noClient},
		{"null", js + `,"http_referer":null}`, noClient},
		{"not a string", js + `,"http_referer":12}`, noClient},
		{"bad escape", js + `,"http_referer":"http://a\x"}`, noClient},
		{"long", js + `,"http_referer":"` + long + `"}`, long[:MaxRefererLen]},
		{"escaped, too long to decode", js + `,"http_referer":"` + strings.Repeat(`\u0041`, MaxRefererLen+1) + `"}`, noClient},
	})
	runRefCases(t, Config{Format: "json", Site: "example.com", Referer: true, JSON: JSONFields{Referer: "request.headers.Referer"}}, []refCase{
		{"nested", js + `,"request":{"headers":{"Referer":"` + url + `"}},"http_referer":"x"}`, url},
	})
	refRegex := `^\S+ \S+ \S+ \[(?P<time>[^\]]+)\] "(?P<request>[^"]*)" (?P<status>\d{3}) \S+ "(?P<referer>[^"]*)"`
	runRefCases(t, Config{Format: "regex", Site: "example.com", Regex: refRegex, Referer: true}, []refCase{
		{"url", clfRef(`"` + url + `"`), url},
		{"dash", clfRef(`"-"`), "-"},
	})
	// Without Config.Referer, no format reads it.
	for _, cfg := range []Config{
		{Format: "combined", Site: "example.com"},
		{Format: "nginx", Site: "example.com", LogFormat: ngxDefault},
		{Format: "regex", Site: "example.com", Regex: refRegex},
	} {
		runRefCases(t, cfg, []refCase{{"not asked for", clfRef(`"` + url + `"`), noClient}})
	}
	runRefCases(t, Config{Format: "json", Site: "example.com"}, []refCase{{"not asked for", js + `,"http_referer":"` + url + `"}`, noClient}})
}

// TestRefererConfig: Config.Referer with a format that logs no referer
// is an error naming the field "referer"; with one that does, none.
func TestRefererConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg    Config
		fields []string
	}{
		{Config{Format: "common", Site: "a", Referer: true}, []string{"referer"}},
		{Config{Format: "nginx", Site: "a", LogFormat: `[$time_local] "$request" $status`, Referer: true}, []string{"referer"}},
		{Config{Format: "regex", Site: "a", Regex: realRegex, Referer: true}, []string{"referer"}},
		{Config{Format: "nginx", Site: "a", LogFormat: `$status`, Referer: true}, []string{"log_format"}},
		{Config{Format: "combined", Site: "a", Referer: true}, nil},
		{Config{Format: "vhost_combined", Site: SiteFromLine, Referer: true}, nil},
		{Config{Format: "nginx", Site: "a", LogFormat: ngxDefault, Referer: true}, nil},
		{Config{Format: "json", Site: "a", Referer: true}, nil},
		{Config{Format: "common", Site: "a"}, nil},
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
			t.Errorf("%s: errors %v, want fields %v", tc.cfg.Format, err, tc.fields)
		}
	}
}

// TestRefererAllocs: reading the referer allocates nothing.
func TestRefererAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are counted without -race")
	}
	lines := benchLines(64, false)
	for _, cfg := range []Config{
		{Format: "combined", Site: "example.com", Referer: true},
		{Format: "nginx", Site: "example.com", LogFormat: ngxDefault, Referer: true},
	} {
		p := mustNew(t, cfg)
		var h Hit
		refs := 0
		for _, l := range lines {
			if p.Parse(l, &h) == OK && h.Referer != nil {
				refs++
			}
		}
		if refs == 0 {
			t.Errorf("%s: no referer in %d lines", cfg.Format, len(lines))
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

// TestRealLogReferer: every real line's referer, as the combined log has
// it, in the formats that carry it as logged.
func TestRealLogReferer(t *testing.T) {
	_, ms := realLines(t)
	for _, cfg := range []Config{
		{Format: "combined", Site: "semicomplete.com", Referer: true},
		{Format: "nginx", Site: "semicomplete.com", LogFormat: ngxDefault, Referer: true},
	} {
		p := mustNew(t, cfg)
		var h Hit
		n, with := 0, 0
		for i, m := range ms {
			if p.Parse([]byte(m[0]), &h) != OK {
				continue
			}
			n++
			want := noClient // a common line
			if head := fmt.Sprintf(`%s %s %s [%s] "%s" %s %s`, m[1], m[2], m[3], m[4], m[5], m[6], m[7]); len(m[0]) > len(head) {
				want = m[8]
			}
			if got := showBytes(h.Referer); got != want {
				t.Errorf("%s: line %d: referer %q, want %q", cfg.Format, i+1, got, want)
			}
			if want != noClient && want != "-" {
				with++
			}
		}
		if n < 9000 || with < 1000 {
			t.Errorf("%s: %d lines parsed, %d with a referer", cfg.Format, n, with)
		}
		t.Logf("%s: %d lines, %d with a referer", cfg.Format, n, with)
	}
}
