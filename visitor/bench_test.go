package visitor

import (
	"strconv"
	"testing"
)

var benchSink uint64

// Key on realistic sizes: a 15-byte site, an IPv4 or IPv6 client and a
// 120-byte user agent (a current Chrome's), and the same with the
// reference SipHash-2-4 for comparison.
func BenchmarkKey(b *testing.B) {
	s := testSalt(0)
	for _, c := range []struct {
		name   string
		client []byte
		c, d   int
	}{
		{"ipv4", tIPv4, 1, 3}, {"ipv6", tIPv6, 1, 3},
		{"ipv4_siphash24", tIPv4, 2, 4}, {"ipv6_siphash24", tIPv6, 2, 4},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tSite) + len(c.client) + len(tUA)))
			for b.Loop() {
				benchSink += key(s, tSite, c.client, tUA, c.c, c.d)
			}
		})
	}
}

func BenchmarkAdd(b *testing.B) {
	for _, c := range []struct {
		name string
		p    uint8
	}{{"dense_p12", SitePrecision}, {"dense_p10", PagePrecision}} {
		b.Run(c.name, func(b *testing.B) {
			s := NewSketch(c.p)
			b.ReportAllocs()
			i := uint64(0)
			for b.Loop() {
				s.Add(seeded(1, i))
				i++
			}
		})
	}
	// A page's sparse sketch: new keys until it holds n registers (then
	// emptied, keeping its room), and a visitor seen before.
	for _, n := range []uint64{16, 200} {
		b.Run("sparse_p10_new_to_"+strconv.FormatUint(n, 10), func(b *testing.B) {
			s := NewSparse(PagePrecision)
			b.ReportAllocs()
			i := uint64(0)
			for b.Loop() {
				if i%n == 0 {
					s.sp = s.sp[:0]
				}
				s.Add(seeded(1, i))
				i++
			}
		})
		b.Run("sparse_p10_seen_of_"+strconv.FormatUint(n, 10), func(b *testing.B) {
			s := fill(NewSparse(PagePrecision), 1, 0, n)
			b.ReportAllocs()
			i := uint64(0)
			for b.Loop() {
				s.Add(seeded(1, i%n))
				i++
			}
		})
	}
}

func BenchmarkEstimate(b *testing.B) {
	for _, c := range []struct {
		name string
		s    *Sketch
	}{
		{"p12_1M", fill(NewSketch(SitePrecision), 1, 0, 1_000_000)},
		{"p10_1k", fill(NewSketch(PagePrecision), 1, 0, 1_000)},
		{"p10_sparse_100", fill(NewSparse(PagePrecision), 1, 0, 100)},
	} {
		b.Run(c.name, func(b *testing.B) {
			var e float64
			for b.Loop() {
				e += c.s.Estimate()
			}
			benchSink += uint64(e)
		})
	}
}
