package config

import (
	"strings"
	"testing"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/parser"
)

// issue18 holds the source keys of the measures: bots and the json
// fields of bytes and response times.
const issue18 = `
[[source]]
site = "a.example.com"
paths = ["/a"]
format = "combined"
bots = [
  { class = "ai", match = '^acme-llm/' },
  { class = "tool", match = 'internal-probe' },
]

[[source]]
name = "traefik"
site = "t.example.com"
paths = ["/t"]
format = "json"
time_layout = "unix_ms"

[source.json]
time = "StartUTC"
uri = "RequestPath"
status = "DownstreamStatus"
bytes = "DownstreamContentSize"
request_time = "Duration"
upstream_response_time = "OriginDuration"
time_unit = "ns"
`

func TestIssue18Keys(t *testing.T) {
	c, err := Parse("t.toml", []byte(issue18))
	if err != nil {
		t.Fatal(err)
	}
	pc := c.Sources[0].Parser()
	want := []botclass.Pattern{{Class: botclass.AI, Match: "^acme-llm/"}, {Class: botclass.Tool, Match: "internal-probe"}}
	if len(pc.Bots) != 2 || pc.Bots[0] != want[0] || pc.Bots[1] != want[1] {
		t.Fatalf("bots: %+v", pc.Bots)
	}
	p, err := parser.New(pc)
	if err != nil {
		t.Fatal(err)
	}
	var h parser.Hit
	line := `10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 5 "-" "ACME-LLM/1.2"`
	if o := p.Parse([]byte(line), &h); o != parser.OK || h.Bot != botclass.AI || h.Bytes != 5 {
		t.Fatalf("Parse = %v %+v", o, h)
	}
	j := c.Sources[1].Parser().JSON
	if j.Bytes != "DownstreamContentSize" || j.RequestTime != "Duration" || j.UpstreamResponseTime != "OriginDuration" || j.TimeUnit != "ns" {
		t.Fatalf("json: %+v", j)
	}
	p, err = parser.New(c.Sources[1].Parser())
	if err != nil {
		t.Fatal(err)
	}
	line = `{"RequestPath":"/t","DownstreamStatus":200,"StartUTC":971211336999,"DownstreamContentSize":1024,"Duration":1234567}`
	if o := p.Parse([]byte(line), &h); o != parser.OK || h.Bytes != 1024 || h.RT != 1234 {
		t.Fatalf("Parse = %v %+v", o, h)
	}
}

func TestIssue18Errors(t *testing.T) {
	for _, tc := range []struct {
		old, new string
		want     []string
	}{
		{`class = "ai"`, `class = "robot"`, []string{`t.toml:6: source[0].bots[0].class: "robot": must be search, ai, tool, bot or suspect`}},
		{`class = "tool"`, `class = "people"`, []string{`t.toml:6: source[0].bots[1].class: "people": must be search, ai, tool, bot or suspect`}},
		{`match = 'internal-probe'`, `match = 'internal-(probe'`, []string{`t.toml:6: source[0].bots[1].match: "internal-(probe": error parsing regexp`}},
		{`match = 'internal-probe'`, `match = ''`, []string{`t.toml:6: source[0].bots[1].match: must not be empty`}},
		{`format = "combined"`, `format = "common"`, []string{`t.toml:6: source[0].bots: the format does not log the user agent`}},
		{`time_unit = "ns"`, `time_unit = "nanoseconds"`, []string{`t.toml:25: source[1].json.time_unit: "nanoseconds": must be s, ms, us or ns`}},
		{`class = "ai", match`, `klass = "ai", match`, []string{`source.bots.klass: unknown key`}},
	} {
		src := strings.Replace(issue18, tc.old, tc.new, 1)
		if src == issue18 {
			t.Fatalf("%q not in the config", tc.old)
		}
		_, err := Parse("t.toml", []byte(src))
		if err == nil {
			t.Errorf("%s: no error", tc.new)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q\ndoes not contain %q", err, w)
			}
		}
		// One problem, named once.
		if n := len(unjoin(err)); n != 1 {
			t.Errorf("%s: %d errors: %v", tc.new, n, err)
		}
	}
}
