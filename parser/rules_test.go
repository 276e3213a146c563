package parser

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func reqLine(target string) []byte {
	return []byte(pre + `"GET ` + target + ` HTTP/1.1" 200 1` + post)
}

func TestPageRules(t *testing.T) {
	cfg := Config{Format: "combined", Page: PageConfig{
		KeepQuery:          []string{"page", "id"},
		Rewrite:            []Rewrite{{Match: `^/user/[0-9]+`, Replace: "/user/:id"}, {Match: `^/user/:id/(\w+)$`, Replace: "/user/:id/$1"}, {Match: `^/old/(.*)`, Replace: "/new/$1"}},
		Lowercase:          true,
		StripTrailingSlash: true,
		IndexFiles:         []string{"index.html", "index.php"},
	}}
	p := mustNew(t, cfg)
	for _, tc := range []struct{ target, want string }{
		{"/", "/"},
		{"/A/B/", "/a/b"},
		{"/a//", "/a"},
		{"/docs/index.html", "/docs"},
		{"/index.php?id=3", "/?id=3"},
		{"/Docs/INDEX.HTML", "/docs"},
		{"/user/123", "/user/:id"},
		{"/user/123/posts?page=2&x=1", "/user/:id/posts?page=2"},
		{"/list?z=1&page=2&id=7&page=1&ID=9", "/list?id=7&page=2&page=1"},
		{"/list?x=1", "/list"},
		{"/list?page=a%20b&id=\xff", "/list?id=%FF&page=a%20b"},
		{"/list?page=\\x41#id=1", "/list?page=A"},
		{"/list?pageX=1", "/list"},
		{"/old/a/b", "/new/a/b"},
		{"/Caf\\xC3\\xA9/", "/café"},
		{"http://Host/X?id=1", "/x?id=1"},
	} {
		var h Hit
		if o := p.Parse(reqLine(tc.target), &h); o != OK {
			t.Errorf("%q: %v", tc.target, o)
			continue
		}
		if string(h.Page) != tc.want {
			t.Errorf("%q: page %q, want %q", tc.target, h.Page, tc.want)
		}
	}
}

func TestPageRulesLongPages(t *testing.T) {
	p := mustNew(t, Config{Format: "combined", MaxPageLen: 64, Page: PageConfig{KeepQuery: []string{"q"}, Lowercase: true}})
	seen := map[string]string{}
	for _, target := range []string{
		"/" + strings.Repeat("a", 100),
		"/" + strings.Repeat("a", 99) + "b",
		"/a?q=" + strings.Repeat("x", 100),
		"/a?q=" + strings.Repeat("x", 99) + "y",
		"/" + strings.Repeat("é", 5000), // longer than the rule buffer
		"/" + strings.Repeat("é", 4999) + "e",
	} {
		var h Hit
		if o := p.Parse(reqLine(target), &h); o != OK {
			t.Fatalf("%v", o)
		}
		if len(h.Page) > 64 || !utf8.Valid(h.Page) || h.Page[0] != '/' || !strings.Contains(string(h.Page), "~") {
			t.Errorf("page %q", h.Page)
		}
		if prev, dup := seen[string(h.Page)]; dup {
			t.Errorf("%q and %q give the same page %q", prev[:20], target[:20], h.Page)
		}
		seen[string(h.Page)] = target
	}
	// Pages that differ only in case merge, long or not.
	var h1, h2 Hit
	p.Parse(reqLine("/"+strings.Repeat("A", 100)), &h1)
	a := string(h1.Page)
	p.Parse(reqLine("/"+strings.Repeat("a", 100)), &h2)
	if a != string(h2.Page) {
		t.Errorf("lowercase long pages differ: %q %q", a, h2.Page)
	}
}

func TestFilters(t *testing.T) {
	cfg := Config{Format: "combined", Filter: FilterConfig{
		Methods:           []string{"get", "HEAD"},
		Status:            []string{"2xx", "3XX", "404"},
		ExcludeExtensions: []string{"png", ".CSS"},
		ExcludePaths:      []string{"/admin/", `^/api/v[0-9]+/health$`},
		ExcludeUserAgents: []string{"bots", "Nagios"},
	}, Page: PageConfig{Rewrite: []Rewrite{{Match: "^/secret", Replace: "/admin/x"}}}}
	p := mustNew(t, cfg)
	line := func(method, target string, status int, ua string) []byte {
		return []byte(pre + `"` + method + ` ` + target + ` HTTP/1.1" ` + itoa(status) + ` 5 "-" "` + ua + `"`)
	}
	for _, tc := range []struct {
		line []byte
		want Outcome
	}{
		{line("GET", "/a", 200, "Mozilla/5.0"), OK},
		{line("HEAD", "/a", 304, "Mozilla/5.0"), OK},
		{line("GET", "/a", 404, "Mozilla/5.0"), OK},
		{line("POST", "/a", 200, "Mozilla/5.0"), FilteredMethod},
		{line("get", "/a", 200, "Mozilla/5.0"), FilteredMethod},
		{line("GET", "/a", 500, "Mozilla/5.0"), FilteredStatus},
		{line("GET", "/a", 403, "Mozilla/5.0"), FilteredStatus},
		{line("POST", "/a", 500, "Mozilla/5.0"), FilteredMethod}, // first filter wins
		{line("GET", "/a", 200, "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"), FilteredUserAgent},
		{line("GET", "/a", 200, "check_http/v2.3 (nagios-plugins 2.3)"), FilteredUserAgent},
		{line("GET", "/a", 200, "curl/8.5.0"), FilteredUserAgent},
		{line("GET", "/a", 200, `Mozilla \"bingbot/2.0\"`), FilteredUserAgent},
		{line("GET", "/img/logo.PNG?v=1", 200, "Mozilla/5.0"), FilteredExtension},
		{line("GET", "/s/app.css", 200, "Mozilla/5.0"), FilteredExtension},
		{line("GET", "/s.png/app", 200, "Mozilla/5.0"), OK},
		{line("GET", "/s/app.css2", 200, "Mozilla/5.0"), OK},
		{line("GET", "/admin/users", 200, "Mozilla/5.0"), FilteredPath},
		{line("GET", "/admin", 200, "Mozilla/5.0"), OK},
		{line("GET", "/api/v2/health", 200, "Mozilla/5.0"), FilteredPath},
		{line("GET", "/api/v2/health/x", 200, "Mozilla/5.0"), OK},
		{line("GET", "/secret", 200, "Mozilla/5.0"), OK}, // rewritten to /admin/x after the path filter
	} {
		var h Hit
		if o := p.Parse(tc.line, &h); o != tc.want {
			t.Errorf("Parse(%q) = %v, want %v", tc.line, o, tc.want)
		}
	}
	c := p.Counts()
	if c.Lines() != 21 || c[OK] != 8 || c.Filtered() != 13 || c.Malformed() != 0 || c[FilteredUserAgent] != 4 {
		t.Errorf("counts %v", c)
	}
	// A broken user agent is read as far as it goes; a missing one is not
	// filtered.
	var h Hit
	if o := p.Parse([]byte(pre+`"GET /a HTTP/1.1" 200 5 "-" "Googlebot/2.1`), &h); o != FilteredUserAgent {
		t.Errorf("cut user agent: %v", o)
	}
	if o := p.Parse([]byte(pre+`"GET /a HTTP/1.1" 200 5`), &h); o != OK {
		t.Errorf("no user agent: %v", o)
	}
}

func itoa(n int) string {
	return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
}

// TestAllocsAllFormats checks that the built-in formats and nginx
// log_format parse without allocating, filters and rules (that do not
// rewrite) included.
func TestAllocsAllFormats(t *testing.T) {
	combined := benchLines(64, false)
	var vhost, ngx [][]byte
	for _, l := range combined {
		vhost = append(vhost, append([]byte("WWW.example.com:443 "), l...))
		ngx = append(ngx, append(append([]byte(nil), l...), " 0.004 www.example.com"...))
	}
	rules := PageConfig{KeepQuery: []string{"page", "id"}, Lowercase: true, StripTrailingSlash: true, IndexFiles: []string{"index.html"}}
	filter := FilterConfig{Methods: []string{"GET", "POST"}, Status: []string{"2xx", "3xx"}, ExcludeExtensions: []string{"png"}, ExcludePaths: []string{"/admin", "^/api/"}, ExcludeUserAgents: []string{"bots"}}
	for _, tc := range []struct {
		cfg   Config
		lines [][]byte
	}{
		{Config{Format: "combined", Page: rules, Filter: filter}, combined},
		{Config{Format: "vhost_combined", Site: SiteFromLine, SiteAliases: map[string]string{"www.example.com": "example.com"}, Page: rules, Filter: filter}, vhost},
		{Config{Format: "nginx", Site: SiteFromLine, LogFormat: ngxDefault + " $request_time $host", Page: rules, Filter: filter}, ngx},
	} {
		p := mustNew(t, tc.cfg)
		var h Hit
		ok := 0
		for _, l := range tc.lines {
			if p.Parse(l, &h) == OK {
				ok++
			}
		}
		if ok < len(tc.lines)/4 {
			t.Errorf("%s: only %d hits of %d", tc.cfg.Format, ok, len(tc.lines))
		}
		if raceEnabled {
			continue
		}
		if n := testing.AllocsPerRun(10, func() {
			for _, l := range tc.lines {
				p.Parse(l, &h)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocs per run", tc.cfg.Format, n)
		}
	}
}
