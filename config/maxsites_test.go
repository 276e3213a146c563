package config

import (
	"strings"
	"testing"
)

// [[source]] max_sites: default DefaultMaxSites, 0 no bound, negative an
// error naming the key; it reaches the parser's config.
func TestMaxSites(t *testing.T) {
	src := func(extra string) string {
		return "[[source]]\nsite = \"{host}\"\nformat = \"vhost_combined\"\npaths = [\"/x\"]\n" + extra
	}
	for _, tc := range []struct {
		extra string
		want  int
	}{{"", DefaultMaxSites}, {"max_sites = 5\n", 5}, {"max_sites = 0\n", 0}} {
		c, err := Parse("t.toml", []byte(src(tc.extra)))
		if err != nil {
			t.Fatalf("%q: %v", tc.extra, err)
		}
		if got := c.Sources[0].Parser().MaxSites; got != tc.want {
			t.Errorf("%q: MaxSites %d, want %d", tc.extra, got, tc.want)
		}
	}
	_, err := Parse("t.toml", []byte(src("max_sites = -1\n")))
	if err == nil || !strings.Contains(err.Error(), "source[0].max_sites") || !strings.Contains(err.Error(), "must not be negative") {
		t.Errorf("max_sites = -1: %v", err)
	}
}
