package loggeo

import (
	"net/netip"
	"testing"

	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/internal/loggen"
)

// TestDatabasesHoldNetworks opens the databases with package geo: every
// network's first, last and a middle address have its country and AS,
// addresses in no network neither.
func TestDatabasesHoldNetworks(t *testing.T) {
	cc, asn := Write(t, t.TempDir())
	db, err := geo.Open(cc, asn)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range loggen.Networks {
		first := n.Prefix.Addr()
		last := first
		for range 1 << min(n.Prefix.Addr().BitLen()-n.Prefix.Bits(), 16) {
			last = last.Next()
		}
		for _, a := range []netip.Addr{first, last.Prev()} {
			pl := db.Lookup(a)
			if pl.Country != n.Country || pl.ASN != n.ASN || pl.Org != n.Org {
				t.Errorf("%v (%v): %q AS%d %q, want %q AS%d %q", a, n.Prefix, pl.Country, pl.ASN, pl.Org, n.Country, n.ASN, n.Org)
			}
		}
	}
	for _, s := range []string{"1.2.3.4", "198.51.99.255", "203.0.114.0", "2001:db8:1:2::3", "3fff:500::1"} {
		a := netip.MustParseAddr(s)
		if _, in := loggen.NetworkOf(a); in {
			t.Fatalf("%s is in a network", s)
		}
		if pl := db.Lookup(a); pl != (geo.Place{}) {
			t.Errorf("%s: %+v, want nothing", s, pl)
		}
	}
}

// TestNetworksNotHosting: no network's AS is in geo's pinned list of
// hosting networks, so a person's user agent from loggen's clients stays
// a person.
func TestNetworksNotHosting(t *testing.T) {
	var db *geo.DB
	if !db.Hosting(16509) {
		t.Fatal("AS16509 (Amazon) is not a hosting network: the check cannot fail")
	}
	for _, n := range loggen.Networks {
		if n.ASN != 0 && db.Hosting(n.ASN) {
			t.Errorf("AS%d (%v) is a hosting network", n.ASN, n.Prefix)
		}
	}
}
