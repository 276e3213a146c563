package geo

import (
	"fmt"
	"net/netip"
	"testing"
)

// A warm lookup allocates nothing: DB.Lookup on records already decoded
// (MMDB and Tor).
func TestLookupAllocatesNothing(t *testing.T) {
	country, asn := geolite2(t, t.TempDir())
	mm, err := Open(country, asn)
	if err != nil {
		t.Fatal(err)
	}
	tor, err := Open("testdata/tor/geoip", "")
	if err != nil {
		t.Fatal(err)
	}
	addrs := []netip.Addr{addr("81.2.69.142"), addr("::ffff:81.2.69.142"), addr("2a02:ff0::1"), addr("8.8.8.8"), addr("198.51.100.7")}
	for name, db := range map[string]*DB{"mmdb": mm, "tor": tor} {
		for _, a := range addrs {
			db.Lookup(a) // decode the records once
		}
		if n := testing.AllocsPerRun(200, func() {
			for _, a := range addrs {
				db.Lookup(a)
			}
		}); n != 0 {
			t.Errorf("%s: DB.Lookup allocates %v times per %d warm lookups", name, n, len(addrs))
		}
	}
	// The strings are the interned ones: the same bytes each time.
	p1, p2 := mm.Lookup(addrs[0]), mm.Lookup(addrs[1])
	if unsafeData(p1.Org) != unsafeData(p2.Org) || unsafeData(p1.Country) != unsafeData(Country("GB")) {
		t.Error("the strings returned are not interned")
	}
}

// Many distinct records through the direct-mapped record cache: every
// answer is right whether the record was cached, evicted or new.
func TestRecordCacheEvictions(t *testing.T) {
	dir := t.TempDir()
	var nets []network
	for i := range 3000 {
		nets = append(nets, network{fmt.Sprintf("10.%d.%d.0/24", i/256, i%256), asnRecord(uint32(100000+i), fmt.Sprintf("Org %d", i))})
	}
	asn := writeMMDB(t, dir, "asn.mmdb", "GeoLite2-ASN", false, false, nets)
	db, err := Open("", asn)
	if err != nil {
		t.Fatal(err)
	}
	db.asn.records = db.asn.records[:256] // a small cache: many collisions
	db.asn.shift = 64 - 8
	for round := range 3 {
		for i := range 3000 {
			p := db.Lookup(netip.AddrFrom4([4]byte{10, byte(i / 256), byte(i % 256), byte(round)}))
			if p.ASN != uint32(100000+i) || p.Org != fmt.Sprintf("Org %d", i) {
				t.Fatalf("round %d, network %d: %+v", round, i, p)
			}
		}
	}
}

// Lookups from several goroutines at once (one DB), with a small record
// cache so that slots are replaced while read: every answer right, the
// same twice (run with -race).
func TestConcurrentLookups(t *testing.T) {
	dir := t.TempDir()
	var nets []network
	for i := range 500 {
		nets = append(nets, network{fmt.Sprintf("10.1.%d.0/24", i%256), asnRecord(uint32(7000+i%256), fmt.Sprintf("Org %d", i%256))})
	}
	db, err := Open("", writeMMDB(t, dir, "asn.mmdb", "GeoLite2-ASN", false, false, nets))
	if err != nil {
		t.Fatal(err)
	}
	db.asn.records = db.asn.records[:16]
	db.asn.shift = 64 - 4
	done := make(chan error)
	for g := range 4 {
		go func() {
			for i := range 5000 {
				n := (i*7 + g) % 256
				a := netip.AddrFrom4([4]byte{10, 1, byte(n), byte(i)})
				p := db.Lookup(a)
				q := db.Lookup(a)
				if p != q || p.ASN != uint32(7000+n) || p.Org != fmt.Sprintf("Org %d", n) {
					done <- fmt.Errorf("goroutine %d: %s: %+v, then %+v", g, a, p, q)
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
