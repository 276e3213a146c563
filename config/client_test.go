package config

import (
	"strings"
	"testing"

	"github.com/logtally/logtally/parser"
)

// issue19 holds the source keys of the visitor's address: client and the
// json fields client and forwarded_for.
const issue19 = `
[[source]]
site = "a.example.com"
paths = ["/a"]
format = "nginx"
log_format = '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" "$http_x_forwarded_for"'
client = "x_forwarded_for"

[[source]]
name = "traefik"
site = "t.example.com"
paths = ["/t"]
format = "json"
client = "x_forwarded_for"

[source.json]
time = "StartUTC"
uri = "RequestPath"
status = "DownstreamStatus"
client = "ClientHost"
forwarded_for = "request_X-Forwarded-For"

[[source]]
name = "plain"
site = "p.example.com"
paths = ["/p"]
format = "combined"
`

func TestIssue19Keys(t *testing.T) {
	c, err := Parse("t.toml", []byte(issue19))
	if err != nil {
		t.Fatal(err)
	}
	if pc := c.Sources[0].Parser(); pc.Client != parser.ClientForwardedFor {
		t.Fatalf("client %q", pc.Client)
	}
	p, err := parser.New(c.Sources[0].Parser())
	if err != nil {
		t.Fatal(err)
	}
	var h parser.Hit
	line := `10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 5 "-" "curl/8.0" "198.51.100.7, 10.0.0.2"`
	if o := p.Parse([]byte(line), &h); o != parser.OK || string(h.Client) != "198.51.100.7" || string(h.UA) != "curl/8.0" {
		t.Fatalf("Parse = %v client %q ua %q", o, h.Client, h.UA)
	}
	j := c.Sources[1].Parser().JSON
	if j.Client != "ClientHost" || j.ForwardedFor != "request_X-Forwarded-For" {
		t.Fatalf("json: %+v", j)
	}
	p, err = parser.New(c.Sources[1].Parser())
	if err != nil {
		t.Fatal(err)
	}
	line = `{"RequestPath":"/t","DownstreamStatus":200,"StartUTC":"2000-10-10T13:55:36Z","ClientHost":"10.0.0.1","request_X-Forwarded-For":"-"}`
	if o := p.Parse([]byte(line), &h); o != parser.OK || string(h.Client) != "10.0.0.1" {
		t.Fatalf("Parse = %v client %q", o, h.Client)
	}
	if pc := c.Sources[2].Parser(); pc.Client != "" {
		t.Fatalf("default client %q", pc.Client)
	}
}

func TestIssue19Errors(t *testing.T) {
	for _, tc := range []struct {
		old, new string
		want     string
	}{
		{`client = "x_forwarded_for"`, `client = "xff"`, `t.toml:7: source[0].client: "xff": must be "remote_addr" or "x_forwarded_for"`},
		{` "$http_x_forwarded_for"'`, `'`, `t.toml:7: source[0].client: "x_forwarded_for": log_format has no $http_x_forwarded_for`},
		{`format = "combined"`, `format = "combined"` + "\nclient = \"x_forwarded_for\"", `t.toml:28: source[2].client: "x_forwarded_for": format combined logs no X-Forwarded-For`},
		{`client = "x_forwarded_for"

[source.json]`, `
[source.json]`, `t.toml:20: source[1].json.forwarded_for: only with client = "x_forwarded_for"`},
		{`forwarded_for =`, `forwarded_from =`, `source.json.forwarded_from: unknown key`},
	} {
		src := strings.Replace(issue19, tc.old, tc.new, 1)
		if src == issue19 {
			t.Fatalf("%q not in the config", tc.old)
		}
		_, err := Parse("t.toml", []byte(src))
		if err == nil {
			t.Errorf("%s: no error", tc.new)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %q\ndoes not contain %q", err, tc.want)
		}
		if n := len(unjoin(err)); n != 1 {
			t.Errorf("%s: %d errors: %v", tc.new, n, err)
		}
	}
}
