package geo

import (
	"net/netip"
	"os"
	"testing"
)

// FuzzParseTor: parseTor never panics; what it accepts is sorted, does
// not overlap, and country answers as a scan of the ranges does.
func FuzzParseTor(f *testing.F) {
	for _, p := range []string{"testdata/tor/geoip", "testdata/tor/geoip6"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint32(134744072), []byte{0x20, 0x01, 0x48, 0x60, 15: 1})
	}
	f.Add([]byte("1,10,US\n20,30,fr\n# x\n\n11,19,??\n::1,::5,DE\n"), uint32(5), []byte{15: 3})
	f.Add([]byte("0,4294967295,AU\n"), uint32(0), []byte{})
	f.Fuzz(func(t *testing.T, data []byte, x uint32, a6 []byte) {
		tdb, err := parseTor(data)
		if err != nil {
			return
		}
		for i := 1; i < len(tdb.v4); i++ {
			if tdb.v4[i].first <= tdb.v4[i-1].last {
				t.Fatalf("IPv4 ranges %d and %d overlap or are not sorted", i-1, i)
			}
		}
		for i := 1; i < len(tdb.v6); i++ {
			if tdb.v6[i].first.cmp(tdb.v6[i-1].last) <= 0 {
				t.Fatalf("IPv6 ranges %d and %d overlap or are not sorted", i-1, i)
			}
		}
		want := ""
		for _, r := range tdb.v4 {
			if r.first <= x && x <= r.last {
				want = countries[r.country]
			}
		}
		a := netip.AddrFrom4([4]byte{byte(x >> 24), byte(x >> 16), byte(x >> 8), byte(x)})
		if got := tdb.country(a); got != want {
			t.Fatalf("country(%s) = %q, a scan says %q", a, got, want)
		}
		var b16 [16]byte
		copy(b16[:], a6)
		a = netip.AddrFrom16(b16)
		if a.Is4In6() {
			return // looked up unmapped by DB.Lookup
		}
		x6 := toU128(a)
		want = ""
		for _, r := range tdb.v6 {
			if r.first.cmp(x6) <= 0 && x6.cmp(r.last) <= 0 {
				want = countries[r.country]
			}
		}
		if got := tdb.country(a); got != want {
			t.Fatalf("country(%s) = %q, a scan says %q", a, got, want)
		}
	})
}
