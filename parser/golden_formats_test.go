package parser

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The real Apache log converted to every format (convertReal) must give
// the same hits as the combined golden file, and each format has a small
// fixture in ../testdata/formats: converted real lines plus hand-written
// odd ones, with a golden file of what they give.

// combinedRe splits a combined line of the real log (whose request and
// user agent are Apache-escaped; line 8899's user agent is cut short).
var combinedRe = regexp.MustCompile(`^(\S+) (\S+) (\S+) \[([^\]]+)\] "((?:[^"\\]|\\.)*)" (\d{3}) (\S+)(?: "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)"?)?$`)

const realRegex = `^(?P<client>\S+) \S+ \S+ \[(?P<time>[^\]]+)\] "(?P<request>(?:[^"\\]|\\.)*)" (?P<status>\d{3}) (?P<bytes>\S+)(?: "(?:[^"\\]|\\.)*" "(?P<user_agent>(?:[^"\\]|\\.)*))?`

// formatCase is a format, the config that reads it and how real combined
// lines are written in it.
type formatCase struct {
	name    string
	cfg     Config
	convert func(i int, m []string) string
	extra   []string // hand-written lines for the fixture
	noUA    bool     // the format logs no user agent: every hit is a person
}

// apacheUnescape undoes the escapes of the real log's request field.
func apacheUnescape(s string) string {
	var b []byte
	for i := 0; i < len(s); {
		c, next := unescape([]byte(s), i)
		b = append(b, c)
		i = next
	}
	return string(b)
}

// hostOf gives every third line a www. host, to exercise aliases.
func hostOf(i int) string {
	if i%3 == 0 {
		return "WWW.semicomplete.com"
	}
	return "semicomplete.com"
}

func isoTime(clf string) string {
	t, err := time.Parse("02/Jan/2006:15:04:05 -0700", clf)
	if err != nil {
		panic(err)
	}
	return t.Format(time.RFC3339)
}

func epoch(clf string) string {
	t, _ := time.Parse("02/Jan/2006:15:04:05 -0700", clf)
	return fmt.Sprintf("%d.%03d", t.Unix(), 123)
}

func splitReq(req string) (method, uri string) {
	method, uri, _ = strings.Cut(req, " ")
	if i := strings.LastIndex(uri, " HTTP/"); i >= 0 {
		uri = uri[:i]
	}
	return method, uri
}

var aliases = map[string]string{"www.semicomplete.com": "semicomplete.com"}

var formatCases = []formatCase{
	{
		name: "common", cfg: Config{Format: "common", Site: "semicomplete.com"}, noUA: true,
		convert: func(i int, m []string) string {
			return fmt.Sprintf(`%s %s %s [%s] "%s" %s %s`, m[1], m[2], m[3], m[4], m[5], m[6], m[7])
		},
		extra: []string{
			`192.0.2.1 - - [17/May/2015:10:05:03 +0000] "GET /a?b=1 HTTP/1.1" 200 -`,
			`192.0.2.1 - - [17/May/2015:10:05:03 +0000] "GET /cut`,
			`192.0.2.1 - - [30/Feb/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 1`,
			`192.0.2.1 - - [17/May/2015:10:05:03 +0000] "GET /m HTTP/1.1" 200 4096 "-" "TestCrawler/1.0"`,
		},
	},
	{
		name: "vhost_combined", cfg: Config{Format: "vhost_combined", Site: SiteFromLine, SiteAliases: aliases, Bots: testBots},
		convert: func(i int, m []string) string { return hostOf(i) + ":443 " + m[0] },
		extra: []string{
			`Example.org:80 192.0.2.1 - - [17/May/2015:10:05:03 +0000] "GET /x/ HTTP/1.1" 200 1 "-" "-"`,
			`- 192.0.2.1 - - [17/May/2015:10:05:03 +0000] "GET /x/ HTTP/1.1" 200 1 "-" "-"`,
			`semicomplete.com:443 192.0.2.1 - - [17/May/2015:10:05:03 +0000] "\x16\x03\x01" 400 0 "-" "-"`,
			`example.org:80 192.0.2.1 - - [17/May/2015:10:05:03 +0000] "GET /m HTTP/1.1" 200 4096 "-" "TestCrawler/1.0"`,
		},
	},
	{
		name: "nginx", cfg: Config{Format: "nginx", Site: "semicomplete.com", LogFormat: ngxDefault, Bots: testBots},
		convert: func(i int, m []string) string { return m[0] },
		extra: []string{
			`2001:db8::2 - - [17/May/2015:10:05:03 +0000] "GET /caf\xC3\xA9?q HTTP/2.0" 200 5 "-" "Mozilla/5.0"`,
			`2001:db8::2 - - [17/May/2015:10:05:03 +0000] "GET /a HTTP/1.1" 200 5 "-" "Mozilla/5.0` + "\r",
			`2001:db8::2 - - [17/May/2015:10:05:03 +0000] "-" 400 0 "-" "-"`,
			`2001:db8::2 - - [17/May/2015:10:05:03 +0000] "GET /m HTTP/1.1" 200 - "-" "TestCrawler/1.0 (+https://example.org/)"`,
		},
	},
	{
		name: "nginx_iso_host", cfg: Config{Format: "nginx", Site: SiteFromLine, SiteAliases: aliases,
			LogFormat: `$time_iso8601|$http_host|$request_method|$request_uri|$status|$body_bytes_sent|$msec|$request_time|$http_user_agent`, Bots: testBots},
		convert: func(i int, m []string) string {
			method, uri := splitReq(m[5])
			return strings.Join([]string{isoTime(m[4]), hostOf(i) + ":443", method, uri, m[6], m[7], epoch(m[4]), "-", m[9]}, "|")
		},
		extra: []string{
			`2015-05-17T10:05:03.5+02:00|example.org|GET|http://example.org/abs?x|200|0|1431850503.500|-|-`,
			`2015-05-17T10:05:03+02:00|-|GET|/|200|0|1431850503.500|-|-`,
			`2015-05-17T10:05:03+02:00|example.org|GET|/|20|0|1431850503.500|-|-`,
			`2015-05-17T10:05:03+02:00|example.org|GET|/m|200|612|1431850503.500|0.250|TestCrawler/1.0`,
			`2015-05-17T10:05:03+02:00|example.org|GET|/m|200|x|1431850503.500|0,25|TestCrawler/1.0`,
		},
	},
	{
		name: "json", cfg: Config{Format: "json", Site: SiteFromLine, SiteAliases: aliases, Bots: testBots},
		convert: func(i int, m []string) string {
			method, uri := splitReq(apacheUnescape(m[5]))
			b, err := json.Marshal(struct {
				Time   string `json:"time"`
				Host   string `json:"host"`
				URI    string `json:"request_uri"`
				Method string `json:"request_method"`
				Status json.RawMessage
				Bytes  any    `json:"body_bytes_sent"`
				UA     string `json:"http_user_agent"`
			}{isoTime(m[4]), hostOf(i), uri, method, json.RawMessage(m[6]), jsonSize(m[7]), apacheUnescape(m[9])})
			if err != nil {
				panic(err)
			}
			return strings.Replace(string(b), `"Status"`, `"status"`, 1)
		},
		extra: []string{
			`{"time":"2015-05-17T10:05:03Z","host":"example.org","request_uri":"/\u00e9t\u00e9\/x?y","request_method":"GET","status":"301"}`,
			`{"time":"2015-05-17T10:05:03Z","host":"example.org","request_uri":"/x","request_method":"GET","status":301`,
			`{"time":"yesterday","host":"example.org","request_uri":"/x","request_method":"GET","status":301}`,
			`{"time":"2015-05-17T10:05:03Z","host":"example.org","request_uri":"/m","status":200,"body_bytes_sent":"612","request_time":"-","upstream_response_time":"0.012, 0.030","http_user_agent":"TestCrawler/1.0"}`,
		},
	},
	{
		name: "regex", cfg: Config{Format: "regex", Site: "semicomplete.com", Regex: realRegex, Bots: testBots},
		convert: func(i int, m []string) string { return m[0] },
		extra: []string{
			`192.0.2.1 - - [17/May/2015:10:05:03 +0000] "OPTIONS * HTTP/1.1" 200 0`,
			`not a log line`,
			`192.0.2.1 - - [17/May/2015:10:05:03 +0000] "GET /m HTTP/1.1" 200 612 "-" "TestCrawler/1.0"`,
		},
	},
}

// jsonSize is a logged size as nginx's escape=json writes it: a number,
// or the string "-".
func jsonSize(s string) any {
	if s == "-" {
		return s
	}
	return json.RawMessage(s)
}

// realLines returns the lines of the real combined log and their matches.
func realLines(t *testing.T) ([]string, [][]string) {
	t.Helper()
	data, err := os.ReadFile(realLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var ms [][]string
	for i, l := range lines {
		m := combinedRe.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %d does not split: %q", i+1, l)
		}
		ms = append(ms, m)
	}
	return lines, ms
}

// TestRealLogAllFormats converts all 10,000 real lines to every format:
// each gives the combined golden results, and the site (with aliases).
func TestRealLogAllFormats(t *testing.T) {
	want, err := os.ReadFile(realGolden)
	if err != nil {
		t.Fatal(err)
	}
	wantLines := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	_, ms := realLines(t)
	for _, fc := range formatCases {
		t.Run(fc.name, func(t *testing.T) {
			p := mustNew(t, fc.cfg)
			var h Hit
			bad := 0
			for i, m := range ms {
				line := fc.convert(i, m)
				o := p.Parse([]byte(line), &h)
				if o == OK && string(h.Site) != "semicomplete.com" {
					t.Errorf("line %d: site %q", i+1, h.Site)
				}
				want := wantLines[i]
				if fc.noUA {
					want = want[:strings.LastIndexByte(want, ' ')] + " people"
				}
				if got := goldenLine(o, &h); got != want && bad < 5 {
					bad++
					t.Errorf("line %d: %q\n got %q\nwant %q", i+1, line, got, want)
				}
			}
			if c := p.Counts(); c[OK] != 10000 {
				t.Errorf("counts %v", c)
			}
		})
	}
}

// TestFormatFixtures parses testdata/formats/<format>.log and compares the
// results with the .golden file next to it (regenerate both with -update
// and review the diff).
func TestFormatFixtures(t *testing.T) {
	_, ms := realLines(t)
	for _, fc := range formatCases {
		t.Run(fc.name, func(t *testing.T) {
			logName := filepath.Join("..", "testdata", "formats", fc.name+".log")
			goldName := filepath.Join("..", "testdata", "formats", fc.name+".golden")
			if *update {
				var b strings.Builder
				for i, m := range ms[:20] {
					b.WriteString(fc.convert(i, m) + "\n")
				}
				for _, l := range fc.extra {
					b.WriteString(l + "\n")
				}
				if err := os.MkdirAll(filepath.Dir(logName), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(logName, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(logName)
			if err != nil {
				t.Fatalf("%v (run go test -run TestFormatFixtures -update)", err)
			}
			p := mustNew(t, fc.cfg)
			var out bytes.Buffer
			var got []string
			sc := bufio.NewScanner(bytes.NewReader(data))
			var h Hit
			for sc.Scan() {
				o := p.Parse(sc.Bytes(), &h)
				g := goldenLine(o, &h)
				if o == OK {
					g = string(h.Site) + " " + g
				}
				got = append(got, g)
				out.WriteString(g + "\n")
			}
			if *update {
				if err := os.WriteFile(goldName, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(goldName)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != string(want) {
				t.Errorf("%s differs from %s:\n%s", logName, goldName, out.String())
			}
			// Explicit expectations: the first real line, and the
			// hand-written lines.
			if !matchGolden(got[0], "semicomplete.com 1431857103 /presentations/logstash-monitorama-2013/images/kibana-search.png 200 GET 203023 -1 *") {
				t.Errorf("line 1: %q", got[0])
			}
			if exp := fixtureExpect[fc.name]; len(got) != 20+len(exp) {
				t.Errorf("%d lines", len(got))
			} else {
				for i, w := range exp {
					if !matchGolden(got[20+i], w) {
						t.Errorf("line %d = %q, want %q", 21+i, got[20+i], w)
					}
				}
			}
		})
	}
}

// 1431857103 is 17/May/2015:10:05:03 +0000. A line ending in " *" has
// any bot class (see matchGolden); "TestCrawler/" is testBots' ai.
var fixtureExpect = map[string][]string{
	"common": {"semicomplete.com 1431857103 /a 200 GET 0 -1 people", "malformed: bad fields", "malformed: bad time",
		"semicomplete.com 1431857103 /m 200 GET 4096 -1 people"},
	"vhost_combined": {"example.org 1431857103 /x/ 200 GET 1 -1 suspect", "malformed: bad host", "malformed: bad request",
		"example.org 1431857103 /m 200 GET 4096 -1 ai"},
	"nginx": {"semicomplete.com 1431857103 /café 200 GET 5 -1 *", "semicomplete.com 1431857103 /a 200 GET 5 -1 *", "malformed: bad request",
		"semicomplete.com 1431857103 /m 200 GET 0 -1 ai"},
	"nginx_iso_host": {"example.org 1431849903 /abs 200 GET 0 -1 suspect", "malformed: bad host", "malformed: bad status",
		"example.org 1431849903 /m 200 GET 612 250000 ai", "example.org 1431849903 /m 200 GET 0 -1 ai"},
	"json": {"example.org 1431857103 /été/x 301 GET 0 -1 people", "malformed: bad fields", "malformed: bad time",
		"example.org 1431857103 /m 200 - 612 42000 ai"},
	"regex": {"malformed: bad request", "malformed: bad fields", "semicomplete.com 1431857103 /m 200 GET 612 -1 ai"},
}
