package visitor

import (
	"strconv"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// registerDoc is a bucket-like document holding the registers of s as
// one int32 field per register, named by its index, under "v"; with
// zeros, every register, else only the non-zero ones (what $max on
// missing fields leaves).
func registerDoc(tb testing.TB, s *Sketch, zeros bool) int {
	tb.Helper()
	regs := bson.D{}
	for i := range s.M() {
		if r := s.Get(i); r != 0 || zeros {
			regs = append(regs, bson.E{Key: strconv.Itoa(i), Value: int32(r)})
		}
	}
	b, err := bson.Marshal(bson.D{
		{Key: "_id", Value: "example.com|2026-05-14"},
		{Key: "v", Value: regs},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return len(b)
}

// TestSizes logs the figures behind PagePrecision and the sparse form
// (the table in doc.go): the BSON size of a document of registers, and
// how many registers are non-zero after n distinct keys.
func TestSizes(t *testing.T) {
	for _, p := range []uint8{8, 10, 12, 14} {
		t.Logf("p=%-2d %6d registers: zero-filled document %7d bytes", p, 1<<p, registerDoc(t, NewSketch(p), true))
	}
	for _, p := range []uint8{PagePrecision, SitePrecision} {
		for _, n := range []uint64{10, 100, 1_000, 10_000, 100_000} {
			s := fill(NewSketch(p), 11, 0, n)
			enc, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("p=%-2d n=%-6d non-zero %5d (%4.1f%%): document of non-zero registers %6d bytes, buffer encoding %5d bytes",
				p, n, s.NonZero(), 100*float64(s.NonZero())/float64(s.M()), registerDoc(t, s, false), len(enc))
		}
	}
}
