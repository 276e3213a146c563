package parser

import (
	"path/filepath"
	"testing"

	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/geo"
)

const (
	uaFirefox = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0"
)

func torHolder(t testing.TB) *geo.Holder {
	t.Helper()
	h, err := geo.OpenHolder(filepath.Join("..", "geo", "testdata", "tor", "geoip"), "")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func dimsLine(client, ref, ua string) string {
	return client + ` - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 1 "` + ref + `" "` + ua + `"`
}

// TestDimsValues: each hit's value in every dimension, from the line's
// referrer, client address and user agent; unknown where the line or the
// format has none.
func TestDimsValues(t *testing.T) {
	geoDB := torHolder(t)
	v := func(ref, ch, cc, asn, br, os, dev, cr string) dims.Values {
		return dims.Values{dims.Referrer: ref, dims.Channel: ch, dims.Country: cc, dims.ASN: asn, dims.Browser: br, dims.OS: os, dims.Device: dev, dims.Crawler: cr}
	}
	const u = dims.Unknown
	for _, tc := range []struct {
		name string
		cfg  Config
		line string
		want dims.Values
	}{
		{"search, Firefox", Config{Format: "combined", Site: "example.com"}, dimsLine("1.0.0.5", "https://www.google.com/search?q=x", uaFirefox),
			v("google.com", "search", "AU", u, "Firefox", "Windows", "desktop", People)},
		{"Googlebot, direct", Config{Format: "combined", Site: "example.com"}, dimsLine("6.1.2.3", "-", uaGooglebot),
			v("(direct)", "direct", "US", u, "(bot)", "(bot)", "(bot)", "Googlebot")},
		{"self", Config{Format: "combined", Site: "example.com"}, dimsLine("1.0.1.9", "https://www.example.com/b", uaFirefox),
			v("(self)", "internal", "CN", u, "Firefox", "Windows", "desktop", People)},
		{"alias is self", Config{Format: "combined", Site: "example.com", SiteAliases: nil, Dims: &DimsConfig{Self: []string{"example.net"}}}, dimsLine("1.0.1.9", "http://example.net/", uaFirefox),
			v("(self)", "internal", "CN", u, "Firefox", "Windows", "desktop", People)},
		{"the line's host is self", Config{Format: "vhost_combined", Site: SiteFromLine}, "blog.example.org:443 " + dimsLine("1.0.1.9", "http://blog.example.org/x", uaFirefox),
			v("(self)", "internal", "CN", u, "Firefox", "Windows", "desktop", People)},
		{"no client", Config{Format: "combined", Site: "example.com"}, dimsLine("-", "-", uaFirefox),
			v("(direct)", "direct", u, u, "Firefox", "Windows", "desktop", People)},
		{"a name, no address", Config{Format: "combined", Site: "example.com"}, dimsLine("proxy.internal", "-", uaFirefox),
			v("(direct)", "direct", u, u, "Firefox", "Windows", "desktop", People)},
		{"common", Config{Format: "common", Site: "example.com"}, `6.1.2.3 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 1`,
			v(u, u, "US", u, u, u, u, u)},
	} {
		cfg := tc.cfg
		if cfg.Dims == nil {
			cfg.Dims = &DimsConfig{}
		}
		cfg.Dims.Geo = geoDB
		p := mustNew(t, cfg)
		var h Hit
		if o := p.Parse([]byte(tc.line), &h); o != OK {
			t.Errorf("%s: Parse = %v", tc.name, o)
			continue
		}
		if h.Dims != tc.want {
			t.Errorf("%s: %q\n want %q", tc.name, h.Dims, tc.want)
		}
	}
	// Without Config.Dims: no values.
	p := mustNew(t, Config{Format: "combined", Site: "example.com"})
	var h Hit
	p.Parse([]byte(dimsLine("1.0.0.5", "https://www.google.com/", uaFirefox)), &h)
	if h.Dims != (dims.Values{}) {
		t.Errorf("values without Config.Dims: %q", h.Dims)
	}
}

// TestDimsAllocs: giving a warm line its values allocates nothing.
func TestDimsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are counted without -race")
	}
	p := mustNew(t, Config{Format: "combined", Site: "example.com", Dims: &DimsConfig{Geo: torHolder(t)}})
	lines := [][]byte{
		[]byte(dimsLine("1.0.0.5", "https://www.google.com/search?q=x", uaFirefox)),
		[]byte(dimsLine("6.1.2.3", "-", uaGooglebot)),
		[]byte(dimsLine("2001:4860::1", "https://news.ycombinator.com/", uaFirefox)),
	}
	var h Hit
	for _, l := range lines {
		if o := p.Parse(l, &h); o != OK {
			t.Fatal(o)
		}
	}
	if n := testing.AllocsPerRun(50, func() {
		for _, l := range lines {
			p.Parse(l, &h)
		}
	}); n != 0 {
		t.Errorf("%v allocations per run of %d warm lines", n, len(lines))
	}
}
