package config

import (
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/visitor"
)

const visitorsBase = `
state_dir = "/var/lib/logtally"
[mongo]
uri = "mongodb://localhost"
[[source]]
name = "web"
paths = ["/var/log/nginx/access.log"]
format = "combined"
site = "example.com"
`

func TestVisitorsKeys(t *testing.T) {
	c, err := Parse("t.toml", []byte(visitorsBase))
	if err != nil {
		t.Fatal(err)
	}
	if v := c.Visitors; !v.Enabled || !v.Pages || v.Period() != visitor.Day || v.SaltGrace.D() != 2*time.Hour || c.Buckets.Visitors != "visitors" {
		t.Errorf("defaults %+v, buckets.visitors %q: want on, day, 2h, visitors", v, c.Buckets.Visitors)
	}
	c, err = Parse("t.toml", []byte(visitorsBase+"[visitors]\nenabled = false\nsalt_period = \"month\"\nsalt_grace = \"30m\"\npages = false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v := c.Visitors; v.Enabled || v.Pages || v.Period() != visitor.Month || v.SaltGrace.D() != 30*time.Minute {
		t.Errorf("set %+v: want off, month, 30m", v)
	}
	for _, tc := range []struct{ add, want string }{
		{"[visitors]\nsalt_period = \"week\"\n", `visitors.salt_period: "week": must be "day" or "month"`},
		{"[visitors]\nsalt_grace = \"-1h\"\n", `visitors.salt_grace`},
		{"[visitors]\nsalt = \"x\"\n", `visitors.salt: unknown key`},
	} {
		_, err := Parse("t.toml", []byte(visitorsBase+tc.add))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.add, err, tc.want)
		}
	}
}
