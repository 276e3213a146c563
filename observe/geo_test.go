package observe

import (
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/maxmind/mmdbwriter/mmdbtype"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/internal/loggeo"
)

// writeTor writes a Tor geoip file at path: with a "Generated:" header
// when generated is not zero, else with no date and its modification
// time set to mtime.
func writeTor(t *testing.T, path string, generated, mtime time.Time) {
	t.Helper()
	var b strings.Builder
	if !generated.IsZero() {
		fmt.Fprintf(&b, "# Generated: %s\n", generated.Format(time.RFC1123))
	}
	b.WriteString("16777216,16777471,AU\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if generated.IsZero() {
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// writeASN writes an ASN MMDB built at built to path (written beside
// and renamed, as updaters do).
func writeASN(t *testing.T, path string, built time.Time) {
	t.Helper()
	loggeo.WriteMMDB(t, path, loggeo.MMDB{Type: "GeoLite2-ASN", Built: built}, []loggeo.Record{{Prefix: netip.MustParsePrefix("8.8.8.0/24"),
		Data: mmdbtype.Map{"autonomous_system_number": mmdbtype.Uint32(15169), "autonomous_system_organization": mmdbtype.String("GOOGLE")}}})
}

// The [geo] databases' build times and ages are gauges read at the
// scrape: the age from the injected clock, and after a reload (SIGHUP)
// the new databases' at once; a Tor file with no "Generated:" header
// has its modification time.
func TestMetricsGeoDatabases(t *testing.T) {
	dir := t.TempDir()
	country, asn := filepath.Join(dir, "geoip"), filepath.Join(dir, "asn.mmdb")
	countryBuilt := t0.Add(-30 * 24 * time.Hour).Truncate(time.Second)
	asnBuilt := t0.Add(-3 * 24 * time.Hour).Truncate(time.Second)
	writeTor(t, country, countryBuilt, time.Time{})
	writeASN(t, asn, asnBuilt)
	h, err := geo.OpenHolder(country, asn)
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(t0)
	s, err := New(Config{Listen: "127.0.0.1:0", Source: sampleFake(), Geo: h, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string, built map[string]time.Time) {
		t.Helper()
		_, body, _ := get(t, s.Handler(), "/metrics")
		for db, b := range built {
			for _, want := range []string{
				fmt.Sprintf("logtally_geo_database_build_timestamp_seconds{database=%q} %v", db, float64(b.Unix())),
				fmt.Sprintf("logtally_geo_database_age_seconds{database=%q} %v", db, clk.Now().Sub(b).Seconds()),
			} {
				if !strings.Contains(body, want+"\n") {
					t.Errorf("%s: no line %q in:\n%s", when, want, grepLines(body, "logtally_geo_"))
				}
			}
		}
	}
	check("at start", map[string]time.Time{"country": countryBuilt, "asn": asnBuilt})
	clk.Advance(90 * time.Minute)
	check("90 minutes later", map[string]time.Time{"country": countryBuilt, "asn": asnBuilt})

	// New files: the country one newer, with no date of its own (its
	// modification time), the ASN one older.
	newCountry := t0.Add(-2 * time.Hour).Truncate(time.Second)
	oldASN := t0.Add(-400 * 24 * time.Hour).Truncate(time.Second)
	writeTor(t, country, time.Time{}, newCountry)
	writeASN(t, asn, oldASN)
	check("files replaced, not reloaded", map[string]time.Time{"country": countryBuilt, "asn": asnBuilt})
	if err := h.Reload(); err != nil {
		t.Fatal(err)
	}
	check("reloaded", map[string]time.Time{"country": newCountry, "asn": oldASN})

	problems, err := testutil.CollectAndLint(newCollector(sampleFake(), "v", h, clk, slog.New(slog.DiscardHandler)))
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
}

// Without [geo] databases, there is no geo series.
func TestMetricsNoGeo(t *testing.T) {
	_, body, _ := get(t, newServer(t, sampleFake(), Config{}).Handler(), "/metrics")
	if strings.Contains(body, "logtally_geo_") {
		t.Errorf("geo series without databases:\n%s", grepLines(body, "logtally_geo_"))
	}
}

// grepLines returns body's lines that start with prefix.
func grepLines(body, prefix string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
