package geo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// geolite2 writes a GeoLite2-Country and a GeoLite2-ASN database.
func geolite2(t testing.TB, dir string) (country, asn string) {
	country = writeMMDB(t, dir, "GeoLite2-Country.mmdb", "GeoLite2-Country", false, true, []network{
		{"81.2.69.0/24", geolite2Country("GB")},
		{"2a02:ff0::/32", geolite2Country("DE")},
		{"198.51.100.0/24", geolite2Country("fr")}, // lower case: read as FR
		{"192.0.2.0/24", geolite2Country("EU")},    // a region: unknown
		// No country, a registered country only (anycast, satellite).
		{"203.0.113.0/24", mmdbtype.Map{"registered_country": mmdbtype.Map{"iso_code": mmdbtype.String("JP")}}},
	})
	asn = writeMMDB(t, dir, "GeoLite2-ASN.mmdb", "GeoLite2-ASN", false, true, []network{
		{"81.2.69.0/24", asnRecord(20712, "Andrews & Arnold Ltd")},
		{"2a02:ff0::/32", asnRecord(24940, "Hetzner Online GmbH")},
		{"198.51.100.0/24", asnRecord(64500, " Bad\x01Org\xff"+strings.Repeat("é", 60))},
	})
	return country, asn
}

// The GeoLite2 layout: country.iso_code (else registered_country),
// autonomous_system_number and _organization; IPv4, IPv6 and IPv4-mapped
// addresses; unknown addresses give ""/0.
func TestGeoLite2Layout(t *testing.T) {
	country, asn := geolite2(t, t.TempDir())
	db, err := Open(country, asn)
	if err != nil {
		t.Fatal(err)
	}
	long := "Bad Org\uFFFD" + strings.Repeat("é", 43) // cut at 96 bytes, at a character boundary
	for _, tc := range []struct {
		addr string
		want Place
	}{
		{"81.2.69.142", Place{"GB", 20712, "Andrews & Arnold Ltd"}},
		{"::ffff:81.2.69.142", Place{"GB", 20712, "Andrews & Arnold Ltd"}},
		{"2a02:ff0:1::7", Place{"DE", 24940, "Hetzner Online GmbH"}},
		{"2a02:ff0:1::7%eth0", Place{"DE", 24940, "Hetzner Online GmbH"}},
		{"198.51.100.1", Place{"FR", 64500, long}},
		{"192.0.2.1", Place{}},
		{"203.0.113.9", Place{Country: "JP"}},
		{"8.8.8.8", Place{}},
		{"2001:4860::8888", Place{}},
	} {
		if got := db.Lookup(addr(tc.addr)); got != tc.want {
			t.Errorf("Lookup(%s) = %+v, want %+v", tc.addr, got, tc.want)
		}
	}
	if got := db.Lookup(netipZero); got != (Place{}) {
		t.Errorf("Lookup(invalid) = %+v", got)
	}
	if !db.Hosting(24940) || db.Hosting(20712) {
		t.Errorf("Hosting: Hetzner %v, Andrews & Arnold %v", db.Hosting(24940), db.Hosting(20712))
	}
	c, a := db.Built()
	if want := time.Unix(testBuildEpoch, 0).UTC(); !c.Equal(want) || !a.Equal(want) {
		t.Errorf("Built() = %v, %v, want %v", c, a, want)
	}
	if got := db.Attribution(); len(got) != 1 || got[0] != attrMaxMind {
		t.Errorf("Attribution() = %q, want the MaxMind line once", got)
	}
	infos := db.Databases()
	if len(infos) != 2 || infos[0].Role != "country" || infos[0].Type != "GeoLite2-Country" || infos[1].Role != "asn" ||
		infos[1].Format != FormatMMDB || !slices.Equal(infos[1].Files, []string{asn}) {
		t.Errorf("Databases() = %+v", infos)
	}
	if db.Errors() != 0 {
		t.Errorf("Errors() = %d", db.Errors())
	}
}

// The @ip-location-db layout: country_code and the ASN fields, without
// IPv4 aliases in the IPv6 tree, IPv4-only files, source by file name.
func TestIPLocationDBLayout(t *testing.T) {
	dir := t.TempDir()
	country := writeMMDB(t, dir, "dbip-country.mmdb", "country ipvAll", false, false, []network{
		{"8.8.8.0/24", ipLocationCountry("US")},
		{"2001:4860::/32", ipLocationCountry("US")},
		{"1.0.0.0/24", ipLocationCountry("AU")},
		{"5.0.0.0/8", ipLocationCountry("ZZ")},
	})
	asn := writeMMDB(t, dir, "asn.mmdb", "asn ipvAll", false, false, []network{
		{"8.8.8.0/24", asnRecord(15169, "Google LLC")},
		{"2001:4860::/32", asnRecord(15169, "Google LLC")},
	})
	db, err := Open(country, asn)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		addr string
		want Place
	}{
		{"8.8.8.8", Place{"US", 15169, "Google LLC"}},
		{"::ffff:8.8.8.8", Place{"US", 15169, "Google LLC"}}, // the file has no ::ffff:0:0/96 alias
		{"2001:4860::8888", Place{"US", 15169, "Google LLC"}},
		{"1.0.0.1", Place{Country: "AU"}},
		{"5.1.2.3", Place{}},
		{"9.9.9.9", Place{}},
	} {
		if got := db.Lookup(addr(tc.addr)); got != tc.want {
			t.Errorf("Lookup(%s) = %+v, want %+v", tc.addr, got, tc.want)
		}
	}
	if got := db.Attribution(); !slices.Equal(got, []string{attrDBIP, attrASN}) {
		t.Errorf("Attribution() = %q", got)
	}

	// An IPv4-only file: IPv6 addresses are unknown, not errors.
	v4 := writeMMDB(t, dir, "geo-whois-asn-country-ipv4.mmdb", "country ipv4", true, false, []network{
		{"8.8.8.0/24", ipLocationCountry("US")},
	})
	db, err = Open(v4, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := db.Lookup(addr("::ffff:8.8.8.8")); got.Country != "US" {
		t.Errorf("IPv4-only: ::ffff:8.8.8.8 = %+v", got)
	}
	if got := db.Lookup(addr("2001:4860::1")); got != (Place{}) || db.Errors() != 0 {
		t.Errorf("IPv4-only: 2001:4860::1 = %+v, %d errors", got, db.Errors())
	}
	if got := db.Attribution(); !slices.Equal(got, []string{attrNRO}) {
		t.Errorf("Attribution() = %q", got)
	}

	// Unrecognised sources: a line naming the database type.
	other := writeMMDB(t, dir, "mine.mmdb", "country ipv4", true, false, []network{{"8.8.8.0/24", ipLocationCountry("US")}})
	custom := writeMMDB(t, dir, "x.mmdb", "Custom-ASN", false, false, []network{{"8.8.8.0/24", asnRecord(1, "One")}})
	if db, err = Open(other, custom); err != nil {
		t.Fatal(err)
	}
	if got, want := db.Attribution(), []string{`Country data: MMDB database "country ipv4".`, `ASN data: MMDB database "Custom-ASN".`}; !slices.Equal(got, want) {
		t.Errorf("Attribution() = %q, want %q", got, want)
	}
}

// Debian's tor-geoipdb files: the IPv4 file and its geoip6 beside it,
// unknown "??" ranges, the header's build date and the IPFire line.
func TestTorGeoIP(t *testing.T) {
	for _, path := range []string{"testdata/tor/geoip", "testdata/tor/geoip6"} {
		db, err := Open(path, "")
		if err != nil {
			t.Fatal(err)
		}
		for a, want := range map[string]string{
			"1.0.0.1": "AU", "1.0.2.1": "CN", "1.0.4.1": "AU", "8.8.8.8": "US", "::ffff:8.8.8.8": "US", "81.3.69.142": "GB",
			"0.250.0.150": "", // a "??" range
			"6.0.0.0":     "US", "8.21.142.255": "US", "8.21.143.0": "", "0.0.0.0": "", "255.255.255.255": "",
			"2001:4860::8888": "US", "2a02:ff0::1": "TR", "2a02:ff7:ffff::1": "TR",
			"2a02:ff08::1": "", // EU: a region
			"2001::1":      "", "::": "", "ffff::1": "",
		} {
			if got := db.Lookup(addr(a)).Country; got != want {
				t.Errorf("%s: Lookup(%s) = %q, want %q", path, a, got, want)
			}
		}
		i := db.Databases()
		if len(i) != 1 || i[0].Format != FormatTor || len(i[0].Files) != 2 {
			t.Errorf("%s: Databases() = %+v, want both files", path, i)
		}
		if c, _ := db.Built(); !c.Equal(time.Date(2026, 6, 25, 4, 33, 59, 0, time.UTC)) {
			t.Errorf("%s: Built() = %v, want the header's Generated date", path, c)
		}
		if got := db.Attribution(); !slices.Equal(got, []string{attrIPFire}) {
			t.Errorf("%s: Attribution() = %q", path, got)
		}
	}

	// No header: the file's modification time; no companion file.
	dir := t.TempDir()
	p := filepath.Join(dir, "ranges")
	os.WriteFile(p, []byte("# Vendor: Someone\n# License: CC0\n134744064,134744319,us\n"), 0o644)
	mt := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	os.Chtimes(p, mt, mt)
	db, err := Open(p, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := db.Lookup(addr("8.8.8.8")).Country; got != "US" {
		t.Errorf("lower-case code: %q", got)
	}
	if c, _ := db.Built(); !c.Equal(mt) {
		t.Errorf("Built() = %v, want the modification time %v", c, mt)
	}
	if got := db.Attribution(); !slices.Equal(got, []string{"Country data: Tor geoip file, Someone, licensed under CC0."}) {
		t.Errorf("Attribution() = %q", got)
	}
}

// Every bad file gives an error naming the file and what is wrong,
// without its content.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	country, asn := geolite2(t, dir)
	good, _ := os.ReadFile(country)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The data section (after the search tree and 16 zero bytes) garbled.
	corrupt := append([]byte(nil), good...)
	i := strings.Index(string(corrupt), strings.Repeat("\x00", 16)) + 16
	for j := i; j < i+64 && j < len(corrupt); j++ {
		corrupt[j] = 0xff
	}
	missing := filepath.Join(dir, "missing.mmdb")
	for _, tc := range []struct {
		name, country, asn, want string
		is                       error
	}{
		{"missing", missing, "", "geo: country database " + missing + ": not found", fs.ErrNotExist},
		{"missing asn", "", missing, "geo: ASN database " + missing + ": not found", fs.ErrNotExist},
		{"directory", dir, "", "geo: country database " + dir + ": not a regular file", nil},
		{"empty", write("empty", nil), "", ": empty file", nil},
		{"text", write("text.mmdb", []byte("secret-log-content\nmore\n")), "", "text.mmdb: neither an MMDB file (no MMDB metadata at its end: truncated?) nor a Tor geoip file", nil},
		{"truncated", write("trunc.mmdb", good[:len(good)/2]), "", "trunc.mmdb: neither an MMDB file", nil},
		{"truncated asn", "", write("trunc-asn.mmdb", good[:len(good)/2]), "trunc-asn.mmdb: not an MMDB file", nil},
		{"corrupt", write("corrupt.mmdb", corrupt), "", "corrupt.mmdb: a record does not decode (corrupt or truncated file)", nil},
		{"asn as country", asn, "", `GeoLite2-ASN.mmdb: no field: an ASN database (type "GeoLite2-ASN"), not a country database`, errNoField},
		{"country as asn", "", country, `GeoLite2-Country.mmdb: no field: a country database (type "GeoLite2-Country"), not an ASN database`, errNoField},
		{"no field", write("nofield.mmdb", nil), "", "", nil}, // replaced below
		{"tor as asn", "", "testdata/tor/geoip", "testdata/tor/geoip: a Tor geoip file holds countries only", nil},
		{"tor bad line", write("geoip-bad", []byte("# c\n1,2,US\n3,4,USA-secret\n")), "", "geoip-bad: Tor geoip file: line 3: the country is not a two-letter code", nil},
		{"tor bad range", write("geoip-range", []byte("5,4,US\n")), "", "geoip-range: Tor geoip file: line 1: the range ends before it starts", nil},
		{"tor overlap", write("geoip-overlap", []byte("1,10,US\n5,20,FR\n")), "", "geoip-overlap: Tor geoip file: IPv4 ranges overlap", nil},
		{"tor bad v6", write("geoip-v6", []byte("::1,::2,US\n::3,secret-x,US\n")), "", "geoip-v6: Tor geoip file: line 2: want two IPv6 addresses", nil},
	} {
		if tc.name == "no field" {
			tc.country = writeMMDB(t, dir, "nofield.mmdb", "Weird", false, false, []network{{"8.8.8.0/24", mmdbtype.Map{"city": mmdbtype.String("x")}}})
			tc.want = `nofield.mmdb: no field: no country field (country.iso_code or country_code) in its records (type "Weird")`
		}
		db, err := Open(tc.country, tc.asn)
		if err == nil || db != nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Open = %v, %v; want an error containing %q", tc.name, db, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows the file's content: %v", tc.name, err)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: %v is not %v", tc.name, err, tc.is)
		}
	}
	// Both empty: a DB that knows nothing.
	db, err := Open("", "")
	if err != nil || db.Lookup(addr("8.8.8.8")) != (Place{}) || len(db.Attribution()) != 0 {
		t.Errorf("Open(\"\", \"\") = %v, %v", db, err)
	}
	var nilDB *DB
	if nilDB.Lookup(addr("8.8.8.8")) != (Place{}) || nilDB.Errors() != 0 || nilDB.Attribution() != nil {
		t.Error("a nil DB knows something")
	}
}

// Reload takes new files and keeps the old DB on any error; the Holder
// then answers from the new one.
func TestReload(t *testing.T) {
	dir := t.TempDir()
	path := writeMMDB(t, dir, "country.mmdb", "GeoLite2-Country", false, true, []network{{"8.8.8.0/24", geolite2Country("US")}})
	h, err := OpenHolder(path, "")
	if err != nil {
		t.Fatal(err)
	}
	first := h.DB()
	if got := h.DB().Lookup(addr("8.8.8.8")).Country; got != "US" {
		t.Fatalf("before: %q", got)
	}

	// A garbled file: the error names it, the DB stays.
	os.WriteFile(path, []byte("garbage"), 0o644)
	if err := h.Reload(); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Reload of a garbled file: %v", err)
	}
	os.Remove(path)
	if err := h.Reload(); err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Reload of a missing file: %v", err)
	}
	if h.DB() != first || h.DB().Lookup(addr("8.8.8.8")).Country != "US" {
		t.Error("a failed Reload replaced the DB")
	}

	// A new file (written beside and renamed, as updaters do): taken.
	next := writeMMDB(t, dir, "next.mmdb", "GeoLite2-Country", false, true, []network{{"8.8.8.0/24", geolite2Country("CA")}})
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	if err := h.Reload(); err != nil {
		t.Fatal(err)
	}
	if h.DB() == first {
		t.Error("Reload kept the old DB")
	}
	if got := h.DB().Lookup(addr("8.8.8.8")).Country; got != "CA" {
		t.Errorf("after: the Holder's DB says %q, want CA", got)
	}
	if got := first.Lookup(addr("8.8.8.8")).Country; got != "US" {
		t.Errorf("the old DB, still in use, says %q", got)
	}
}

// Country: upper case from either case, interned, "" for non-countries.
func TestCountry(t *testing.T) {
	codes := strings.Fields(isoCodes)
	if len(codes) != 250 {
		t.Errorf("%d codes, want 249 ISO 3166-1 and XK", len(codes))
	}
	for _, c := range codes {
		if Country(c) != c || Country(strings.ToLower(c)) != c || Country([]byte(c)) != c {
			t.Errorf("Country(%q) = %q", c, Country(c))
		}
	}
	for in, want := range map[string]string{"UK": "GB", "uk": "GB", "??": "", "ZZ": "", "XX": "", "EU": "", "AP": "", "A1": "",
		"AN": "", "SU": "", "": "", "U": "", "USA": "", "U\x00": "", "\xc1S": ""} {
		if got := Country(in); got != want {
			t.Errorf("Country(%q) = %q, want %q", in, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Country([]byte{'d', 'e'}) }); n != 0 {
		t.Errorf("Country allocates %v times", n)
	}
}
