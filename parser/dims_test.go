package parser

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/internal/loggeo"
	"github.com/logtally/logtally/referrer"
	"github.com/maxmind/mmdbwriter/mmdbtype"
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

// asnMMDB writes an ASN database: 3.5.0.0/16 in AS16509 (Amazon, a
// hosting network on geo's pinned list), 80.128.0.0/11 in AS3320 (Deutsche
// Telekom, not one).
func asnMMDB(t *testing.T) string {
	t.Helper()
	rec := func(asn uint32, org string) mmdbtype.Map {
		return mmdbtype.Map{"autonomous_system_number": mmdbtype.Uint32(asn), "autonomous_system_organization": mmdbtype.String(org)}
	}
	return loggeo.WriteMMDB(t, filepath.Join(t.TempDir(), "asn.mmdb"), loggeo.MMDB{Type: "GeoLite2-ASN", IPv4: true, Alias: true}, []loggeo.Record{
		{Prefix: netip.MustParsePrefix("3.5.0.0/16"), Data: rec(16509, "AMAZON-02")},
		{Prefix: netip.MustParsePrefix("80.128.0.0/11"), Data: rec(3320, "Deutsche Telekom AG")},
	})
}

// TestHostingNetworkIsSuspect: a browser's user agent from a hosting
// network is a suspected bot (class suspect, crawler "(hosting
// network)"); from another network, a person; a declared bot keeps its
// class and name.
func TestHostingNetworkIsSuspect(t *testing.T) {
	h, err := geo.OpenHolder("", asnMMDB(t))
	if err != nil {
		t.Fatal(err)
	}
	p := mustNew(t, Config{Format: "combined", Site: "example.com", Dims: &DimsConfig{Geo: h}})
	for _, tc := range []struct {
		client, ua string
		class      botclass.Class
		asn, cr    string
	}{
		{"3.5.1.2", uaFirefox, botclass.Suspect, "AS16509 AMAZON-02", Hosting},
		{"80.130.1.2", uaFirefox, botclass.Person, "AS3320 Deutsche Telekom AG", People},
		{"3.5.1.3", uaGooglebot, botclass.Search, "AS16509 AMAZON-02", "Googlebot"},
		{"3.5.1.3", uaFirefox, botclass.Suspect, "AS16509 AMAZON-02", Hosting}, // after a bot of the same address
	} {
		var hit Hit
		if o := p.Parse([]byte(dimsLine(tc.client, "-", tc.ua)), &hit); o != OK {
			t.Fatalf("%s: %v", tc.client, o)
		}
		if hit.Bot != tc.class || hit.Dims[dims.ASN] != tc.asn || hit.Dims[dims.Crawler] != tc.cr {
			t.Errorf("%s %.20s: class %v, asn %q, crawler %q; want %v, %q, %q", tc.client, tc.ua, hit.Bot, hit.Dims[dims.ASN], hit.Dims[dims.Crawler], tc.class, tc.asn, tc.cr)
		}
	}
}

// TestDimsClientsTable: more clients than the parser's table of recent
// clients holds, in turns and runs, each get the country its address has
// in the database (geo.DB.Lookup, the oracle); after a reload that
// changes the database, the addresses seen before get the new one's, the
// line before's client too.
func TestDimsClientsTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "geoip")
	write := func(cc string) {
		// 16777216-16777471 is 1.0.0.0/24, 100663296-135630591 6.0.0.0-8.21.255.255.
		if err := os.WriteFile(path, []byte("16777216,16777471,"+cc+"\n100663296,135630591,US\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("AU")
	h, err := geo.OpenHolder(path, "")
	if err != nil {
		t.Fatal(err)
	}
	p := mustNew(t, Config{Format: "combined", Site: "example.com", Dims: &DimsConfig{Geo: h}})
	addrs := make([]string, 3*recentClients)
	for i := range addrs {
		switch i % 3 {
		case 0:
			addrs[i] = fmt.Sprintf("1.0.0.%d", i%256)
		case 1:
			addrs[i] = fmt.Sprintf("6.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		default:
			addrs[i] = fmt.Sprintf("9.%d.%d.%d", i>>16&255, i>>8&255, i&255) // in no range
		}
	}
	check := func(round string) {
		t.Helper()
		db := h.DB()
		var hit Hit
		for turn := range 3 {
			for i, a := range addrs {
				if (i+turn)%7 == 0 { // a run of lines from one client
					continue
				}
				if o := p.Parse([]byte(dimsLine(a, "-", uaFirefox)), &hit); o != OK {
					t.Fatalf("%s: %v", a, o)
				}
				want := db.Lookup(netip.MustParseAddr(a)).Country
				if want == "" {
					want = dims.Unknown
				}
				if hit.Dims[dims.Country] != want {
					t.Fatalf("%s, turn %d, %s: country %q, want %q", round, turn, a, hit.Dims[dims.Country], want)
				}
			}
		}
	}
	country := func(a string) string {
		var hit Hit
		if o := p.Parse([]byte(dimsLine(a, "-", uaFirefox)), &hit); o != OK {
			t.Fatalf("%s: %v", a, o)
		}
		return hit.Dims[dims.Country]
	}
	check("before the reload")
	if c := country("1.0.0.7"); c != "AU" {
		t.Fatalf("1.0.0.7 before the reload: %q, want AU", c)
	}
	write("NZ")
	if err := h.Reload(); err != nil {
		t.Fatal(err)
	}
	// The same client as the line before's: the reloaded database's
	// country, not the line before's.
	if c := country("1.0.0.7"); c != "NZ" {
		t.Errorf("1.0.0.7 right after the reload (the line before's client): %q, want NZ", c)
	}
	check("after the reload")
}

// TestDimsSelfIsTheSitesOwn: a referrer is internal when it names the
// hit's own site: its host, or a [site_aliases] name mapped to it; the
// aliases of the other sites are other sites (referral), whether the site
// is configured or taken from the line.
func TestDimsSelfIsTheSitesOwn(t *testing.T) {
	aliases := map[string]string{"www.b.example": "b.example", "shop.a.example": "a.example", "www.c.example": "a.example"}
	const self = referrer.HostSelf
	for _, tc := range []struct {
		name        string
		cfg         Config
		host, ref   string // host: the line's (vhost_combined)
		refHost, ch string
	}{
		{"configured: the site", Config{Format: "combined", Site: "a.example"}, "", "https://www.a.example/", self, "internal"},
		{"configured: its alias", Config{Format: "combined", Site: "a.example"}, "", "https://shop.a.example/x", self, "internal"},
		{"configured: its www. alias", Config{Format: "combined", Site: "a.example"}, "", "https://www.c.example/x", self, "internal"},
		{"configured: another site", Config{Format: "combined", Site: "a.example"}, "", "https://b.example/", "b.example", "referral"},
		{"configured: another site's alias", Config{Format: "combined", Site: "a.example"}, "", "https://www.b.example/", "b.example", "referral"},
		{"line: the site", Config{Format: "vhost_combined", Site: SiteFromLine}, "a.example", "https://www.a.example/", self, "internal"},
		{"line: its alias", Config{Format: "vhost_combined", Site: SiteFromLine}, "a.example", "https://shop.a.example/", self, "internal"},
		{"line: its www. alias", Config{Format: "vhost_combined", Site: SiteFromLine}, "a.example", "https://www.c.example/", self, "internal"},
		{"line: from an alias to the site", Config{Format: "vhost_combined", Site: SiteFromLine}, "shop.a.example", "https://a.example/", self, "internal"},
		{"line: another site", Config{Format: "vhost_combined", Site: SiteFromLine}, "a.example", "https://b.example/", "b.example", "referral"},
		{"line: another site's alias", Config{Format: "vhost_combined", Site: SiteFromLine}, "a.example", "https://www.b.example/", "b.example", "referral"},
		{"line: that site from this one", Config{Format: "vhost_combined", Site: SiteFromLine}, "www.b.example", "https://shop.a.example/", "shop.a.example", "referral"},
		{"line: www. and no dot after", Config{Format: "vhost_combined", Site: SiteFromLine}, "www.localhost", "http://www.localhost/", self, "internal"},
	} {
		cfg := tc.cfg
		cfg.SiteAliases, cfg.Dims = aliases, &DimsConfig{}
		p := mustNew(t, cfg)
		line := dimsLine("1.0.1.9", tc.ref, uaFirefox)
		if tc.host != "" {
			line = tc.host + ":443 " + line
		}
		var h Hit
		if o := p.Parse([]byte(line), &h); o != OK {
			t.Errorf("%s: Parse = %v", tc.name, o)
			continue
		}
		if got := [2]string{h.Dims[dims.Referrer], h.Dims[dims.Channel]}; got != [2]string{tc.refHost, tc.ch} {
			t.Errorf("%s: site %q, referrer %q: %q, want %q %q", tc.name, h.Site, tc.ref, got, tc.refHost, tc.ch)
		}
	}
}
