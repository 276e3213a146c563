package geo

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"testing"
	"time"
)

var (
	benchPlace Place
	benchAddr  netip.Addr
)

// benchDB returns a country and an ASN database: those named by
// LOGTALLY_GEO_BENCH_COUNTRY and LOGTALLY_GEO_BENCH_ASN (real files), or
// else GeoLite2-layout files of 20,000 IPv4 and 5,000 IPv6 networks (the
// real ones hold about a million).
func benchDB(b *testing.B) *DB {
	country, asn := os.Getenv("LOGTALLY_GEO_BENCH_COUNTRY"), os.Getenv("LOGTALLY_GEO_BENCH_ASN")
	if country == "" && asn == "" {
		dir := b.TempDir()
		codes := []string{"US", "DE", "FR", "GB", "JP", "CN", "BR", "IN", "NL", "SE"}
		var cn, an []network
		for i := range 20000 {
			cidr := fmt.Sprintf("%d.%d.%d.0/24", 1+i/4000, (i/16)%250, (i*7)%256)
			cn = append(cn, network{cidr, geolite2Country(codes[i%len(codes)])})
			an = append(an, network{cidr, asnRecord(uint32(1000+i%3000), fmt.Sprintf("Network %d", i%3000))})
		}
		for i := range 5000 {
			cidr := fmt.Sprintf("2a%02x:%x::/32", i%200, i)
			cn = append(cn, network{cidr, geolite2Country(codes[i%len(codes)])})
			an = append(an, network{cidr, asnRecord(uint32(5000+i%1000), fmt.Sprintf("Network6 %d", i%1000))})
		}
		country = writeMMDB(b, dir, "GeoLite2-Country.mmdb", "GeoLite2-Country", false, true, cn)
		asn = writeMMDB(b, dir, "GeoLite2-ASN.mmdb", "GeoLite2-ASN", false, true, an)
	}
	db, err := Open(country, asn)
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// benchAddrs returns n random public-looking addresses (one in five
// IPv6) and their text.
func benchAddrs(n int) ([]netip.Addr, []string) {
	r := rand.New(rand.NewPCG(1, 2))
	addrs, texts := make([]netip.Addr, n), make([]string, n)
	for i := range addrs {
		if i%5 == 4 {
			var b [16]byte
			b[0], b[1], b[2], b[3] = 0x2a, byte(r.IntN(200)), byte(r.IntN(20)), byte(r.IntN(256))
			for j := 4; j < 16; j++ {
				b[j] = byte(r.Uint32())
			}
			addrs[i] = netip.AddrFrom16(b)
		} else {
			addrs[i] = netip.AddrFrom4([4]byte{byte(1 + r.IntN(5)), byte(r.IntN(250)), byte(r.Uint32()), byte(r.Uint32())})
		}
		texts[i] = addrs[i].String()
	}
	return addrs, texts
}

// parseCost returns the time of n netip.ParseAddr calls over texts: the
// baseline, measured in the same run.
func parseCost(texts []string, n int) time.Duration {
	start := time.Now()
	for i := range n {
		benchAddr, _ = netip.ParseAddr(texts[i%len(texts)])
	}
	return time.Since(start)
}

// report reports the cost per address and its ratio to parsing the same
// address's text.
func report(b *testing.B, texts []string) {
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	base := float64(parseCost(texts, b.N).Nanoseconds()) / float64(b.N)
	b.ReportMetric(per, "ns/addr")
	b.ReportMetric(per/base, "x-ParseAddr")
}

// BenchmarkLookup is a cache miss: DB.Lookup of 4,096 distinct addresses
// in turn (the MMDB search trees walked, their records found in the
// record cache), against netip.ParseAddr of the same addresses' text.
func BenchmarkLookup(b *testing.B) {
	db := benchDB(b)
	addrs, texts := benchAddrs(4096)
	for _, a := range addrs {
		db.Lookup(a)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		benchPlace = db.Lookup(addrs[i%len(addrs)])
		i++
	}
	report(b, texts)
}

// BenchmarkLookupTor is DB.Lookup on Debian's Tor geoip files (binary
// search of the ranges), where installed.
func BenchmarkLookupTor(b *testing.B) {
	db, err := Open("/usr/share/tor/geoip", "")
	if err != nil {
		b.Skip(err)
	}
	addrs, texts := benchAddrs(4096)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		benchPlace = db.Lookup(addrs[i%len(addrs)])
		i++
	}
	report(b, texts)
}
