package visitor

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// splitmix64 is a bijection of uint64: distinct counters give distinct,
// uniformly spread keys.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// seeded returns the key of counter i in run seed: runs do not share keys.
func seeded(seed, i uint64) uint64 { return splitmix64(seed<<40 | i) }

func fill(s *Sketch, seed, from, to uint64) *Sketch {
	for i := from; i < to; i++ {
		s.Add(seeded(seed, i))
	}
	return s
}

// registers returns every register of s, whatever its form.
func registers(s *Sketch) []uint8 {
	r := make([]uint8, s.M())
	for i := range r {
		r[i] = s.Get(i)
	}
	return r
}

// The estimate of n distinct keys lies within 3 standard errors of n, at
// both precisions, for several runs of keys; the sparse form gives the
// same estimate. The observed errors are logged.
func TestEstimateAccuracy(t *testing.T) {
	const seeds = 5
	for _, p := range []uint8{SitePrecision, PagePrecision} {
		se := StdError(p)
		for _, n := range []uint64{1_000, 10_000, 100_000, 1_000_000} {
			var errs []float64
			for seed := range uint64(seeds) {
				s := fill(NewSketch(p), seed+1, 0, n)
				e := s.Estimate()
				rel := (e - float64(n)) / float64(n)
				errs = append(errs, rel)
				if math.Abs(rel) > 3*se {
					t.Errorf("p=%d n=%d seed %d: estimate %.0f, error %+.2f%%, beyond 3 standard errors (%.2f%%)", p, n, seed, e, 100*rel, 300*se)
				}
				if n <= 10_000 {
					sp := fill(NewSparse(p), seed+1, 0, n)
					if es := sp.Estimate(); es != e {
						t.Errorf("p=%d n=%d seed %d: sparse estimate %v, dense %v", p, n, seed, es, e)
					}
				}
			}
			t.Logf("p=%d (σ %.2f%%) n=%-8d errors %s", p, 100*se, n, pct(errs))
		}
	}
}

func pct(xs []float64) string {
	s := ""
	for _, x := range xs {
		s += fmt.Sprintf(" %+.2f%%", 100*x)
	}
	return s
}

// Registers drawn as n keys would leave them (Poisson model: a register's
// rank is at most k with probability exp(-n/m · 2^-k)), for n far beyond
// what a test can add: the estimator stays unbiased up to 10^19, near
// 2^64, where about half the registers are at MaxRank (the τ term). Past
// 2^64 the registers saturate and the error grows (not tested).
func TestEstimateLargeRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range []uint8{SitePrecision, PagePrecision} {
		m, q := 1<<p, int(64-p)
		for _, n := range []float64{1e9, 1e12, 1e15, 1e18, 1e19} {
			var errs []float64
			for range 5 {
				s := NewSketch(p)
				for i := range s.R {
					u := rng.Float64()
					k := 0
					for k <= q && math.Exp(-n/float64(m)*math.Pow(2, -float64(k))) < u {
						k++
					}
					s.R[i] = uint8(k)
				}
				rel := (s.Estimate() - n) / n
				errs = append(errs, rel)
				if math.Abs(rel) > 3*StdError(p) {
					t.Errorf("p=%d n=%.0e: error %+.2f%% beyond 3 standard errors", p, n, 100*rel)
				}
			}
			t.Logf("p=%d n=%.0e errors %s", p, n, pct(errs))
		}
	}
}

func TestEstimateSmall(t *testing.T) {
	for _, p := range []uint8{MinPrecision, PagePrecision, SitePrecision, MaxPrecision} {
		if e := NewSketch(p).Estimate(); e != 0 {
			t.Errorf("empty sketch p=%d estimates %v", p, e)
		}
		s := NewSketch(p)
		s.Add(seeded(9, 0))
		if e := s.Estimate(); math.Abs(e-1) > 0.05 {
			t.Errorf("one key at p=%d estimates %v", p, e)
		}
	}
	// Every register at MaxRank but one (a state no key set leaves):
	// finite; all of them: +Inf (saturated).
	s := NewSketch(PagePrecision)
	for i := range s.R[1:] {
		s.R[i+1] = MaxRank(PagePrecision)
	}
	if e := s.Estimate(); math.IsInf(e, 0) || math.IsNaN(e) || e <= 0 {
		t.Errorf("nearly saturated sketch estimates %v", e)
	}
	s.R[0] = MaxRank(PagePrecision)
	if e := s.Estimate(); !math.IsInf(e, 1) {
		t.Errorf("saturated sketch estimates %v, want +Inf", e)
	}
}

func TestAddRank(t *testing.T) {
	p := SitePrecision
	// Index = top p bits; rank = leading zeros of the rest + 1.
	cases := []struct {
		key  uint64
		i    int
		rank uint8
	}{
		{0, 0, MaxRank(p)},                        // the rest all zero: capped
		{1, 0, 64 - p},                            // only the last bit set
		{1<<63 | 1<<(63-p), 1 << (p - 1), 1},      // first bit after the index set
		{^uint64(0), 1<<p - 1, 1},                 //
		{uint64(5)<<(64-p) | 1<<(60-p), 5, 4},     // three zeros then a one
		{uint64(7)<<(64-p) | 1<<(63-p-20), 7, 21}, //
	}
	for _, c := range cases {
		s := NewSketch(p)
		s.Add(c.key)
		if got := s.R[c.i]; got != c.rank {
			t.Errorf("Add(%#x): register %d = %d, want %d", c.key, c.i, got, c.rank)
		}
	}
}

func TestAddTwiceChangesNothing(t *testing.T) {
	for _, s := range []*Sketch{NewSketch(PagePrecision), NewSparse(PagePrecision)} {
		for i := range uint64(5000) {
			k := seeded(3, i)
			s.Add(k)
			before := registers(s)
			if s.Add(k) {
				t.Fatalf("sparse %v: adding key %d again reports a change", s.IsSparse(), i)
			}
			if !slices.Equal(before, registers(s)) {
				t.Fatalf("sparse %v: adding key %d again changed the registers", s.IsSparse(), i)
			}
		}
	}
}

func TestAddNoAlloc(t *testing.T) {
	s := NewSketch(SitePrecision)
	i := uint64(0)
	if n := testing.AllocsPerRun(1000, func() { s.Add(seeded(1, i)); i++ }); n != 0 {
		t.Errorf("Add allocates %v times, want 0", n)
	}
}

// Merging the sketches of two overlapping key sets gives exactly the
// sketch of their union (so it estimates the union), and Merge is
// commutative and idempotent, in either form.
func TestMergeUnion(t *testing.T) {
	for _, p := range []uint8{SitePrecision, PagePrecision} {
		a := fill(NewSketch(p), 7, 0, 600_000)
		b := fill(NewSketch(p), 7, 400_000, 1_000_000)
		all := fill(NewSketch(p), 7, 0, 1_000_000)
		ab := a.Clone()
		ab.Merge(b)
		ba := b.Clone()
		ba.Merge(a)
		if !slices.Equal(ab.R, all.R) {
			t.Errorf("p=%d: merge of the halves differs from the sketch of the union", p)
		}
		if !slices.Equal(ab.R, ba.R) {
			t.Errorf("p=%d: merge is not commutative", p)
		}
		abb := ab.Clone()
		abb.Merge(b)
		abb.Merge(ab)
		if !slices.Equal(abb.R, ab.R) {
			t.Errorf("p=%d: merging again changed the registers", p)
		}
		rel := (ab.Estimate() - 1e6) / 1e6
		if math.Abs(rel) > 3*StdError(p) {
			t.Errorf("p=%d: union of 1,000,000 estimated with error %+.2f%%", p, 100*rel)
		}
		t.Logf("p=%d: union of 600k and 600k keys sharing 200k: error %+.2f%%", p, 100*rel)
	}
	// Mixed forms, small and large.
	for _, n := range []uint64{10, 200, 3000} {
		p := PagePrecision
		want := fill(NewSketch(p), 8, 0, 2*n)
		for _, mk := range [][2]func(uint8) *Sketch{{NewSparse, NewSparse}, {NewSparse, NewSketch}, {NewSketch, NewSparse}} {
			a := fill(mk[0](p), 8, 0, n+n/2)
			b := fill(mk[1](p), 8, n/2, 2*n)
			a.Merge(b)
			if !slices.Equal(registers(a), want.R) {
				t.Errorf("n=%d: merge of sparse %v into sparse %v differs from the union", n, b.IsSparse(), mk[0](p).IsSparse())
			}
		}
	}
}

func TestMergeMismatchPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("merge of precisions 10 and 12 did not panic")
		}
	}()
	NewSketch(SitePrecision).Merge(NewSketch(PagePrecision))
}

// A sparse sketch holds the same registers as a dense one fed the same
// keys, before and after it turns dense by itself.
func TestSparseEqualsDense(t *testing.T) {
	p := PagePrecision
	d, s := NewSketch(p), NewSparse(p)
	for i := range uint64(5000) {
		k := seeded(4, i)
		if cd, cs := d.Add(k), s.Add(k); cd != cs {
			t.Fatalf("key %d: dense changed %v, sparse %v", i, cd, cs)
		}
		if i%97 == 0 || i < 300 {
			if !slices.Equal(registers(s), d.R) {
				t.Fatalf("after %d keys (sparse %v) the registers differ", i+1, s.IsSparse())
			}
			if s.NonZero() != d.NonZero() || s.Estimate() != d.Estimate() {
				t.Fatalf("after %d keys: non-zero %d/%d, estimate %v/%v", i+1, s.NonZero(), d.NonZero(), s.Estimate(), d.Estimate())
			}
		}
	}
	if s.IsSparse() {
		t.Error("a sparse sketch of 5,000 keys at p=10 did not turn dense")
	}
}

// Risen reports exactly the registers above what was sent; applying them
// with max to what was sent rebuilds the sketch.
func TestRisen(t *testing.T) {
	for _, mk := range []func(uint8) *Sketch{NewSketch, NewSparse} {
		p := PagePrecision
		s := fill(mk(p), 5, 0, 50)
		var sent []uint8
		got := map[int]uint8{}
		s.Risen(nil, func(i int, r uint8) { got[i] = r })
		if len(got) != s.NonZero() {
			t.Errorf("Risen(nil) reported %d registers, %d are non-zero", len(got), s.NonZero())
		}
		sent = make([]uint8, s.M())
		for i, r := range got {
			sent[i] = r
		}
		sentSketch := s.Clone()
		fill(s, 5, 50, 120)
		var want []int
		for i := range s.M() {
			if s.Get(i) > sent[i] {
				want = append(want, i)
			}
		}
		var risen, risenFrom []int
		s.Risen(sent, func(i int, r uint8) {
			risen = append(risen, i)
			if r <= sent[i] || r != s.Get(i) {
				t.Errorf("Risen reported register %d = %d, sent %d, holds %d", i, r, sent[i], s.Get(i))
			}
		})
		s.RisenFrom(sentSketch, func(i int, _ uint8) { risenFrom = append(risenFrom, i) })
		if !slices.Equal(risen, want) || !slices.Equal(risenFrom, want) {
			t.Errorf("sparse %v: Risen %v, RisenFrom %v, want %v", mk(p).IsSparse(), risen, risenFrom, want)
		}
		if len(want) == 0 {
			t.Error("no register rose: the test adds too few keys")
		}
		s.Risen(sent, func(i int, r uint8) { sent[i] = max(sent[i], r) })
		if !slices.Equal(sent, registers(s)) {
			t.Error("sent + risen registers differ from the sketch")
		}
		s.Risen(sent, func(i int, _ uint8) { t.Errorf("register %d reported after everything was sent", i) })
	}
}

func TestSetMax(t *testing.T) {
	for _, s := range []*Sketch{NewSketch(PagePrecision), NewSparse(PagePrecision)} {
		if ch, err := s.SetMax(7, 3); !ch || err != nil {
			t.Errorf("SetMax(7, 3) = %v, %v", ch, err)
		}
		if ch, err := s.SetMax(7, 2); ch || err != nil || s.Get(7) != 3 {
			t.Errorf("SetMax(7, 2) = %v, %v, register %d", ch, err, s.Get(7))
		}
		if _, err := s.SetMax(7, MaxRank(PagePrecision)+1); !errors.Is(err, ErrDamaged) {
			t.Errorf("SetMax above MaxRank: %v", err)
		}
		if _, err := s.SetMax(1<<PagePrecision, 1); !errors.Is(err, ErrDamaged) {
			t.Errorf("SetMax out of range: %v", err)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, p := range []uint8{PagePrecision, SitePrecision} {
		for _, n := range []uint64{0, 1, 30, 300, 3000, 100_000} {
			for _, mk := range []func(uint8) *Sketch{NewSketch, NewSparse} {
				s := fill(mk(p), 6, 0, n)
				b, err := s.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				d, err := Decode(b)
				if err != nil {
					t.Fatalf("p=%d n=%d: %v", p, n, err)
				}
				if d.P != p || !slices.Equal(registers(d), registers(s)) {
					t.Fatalf("p=%d n=%d: decoded registers differ", p, n)
				}
				if mk(p).IsSparse() && p == PagePrecision {
					t.Logf("p=%d n=%-6d: %d non-zero, %d bytes (%s)", p, n, s.NonZero(), len(b), map[byte]string{encDense: "dense", encSparse: "sparse"}[b[0]])
				}
				// Every truncation is an error, never a sketch.
				for cut := range len(b) {
					if _, err := Decode(b[:cut]); !errors.Is(err, ErrDamaged) {
						t.Fatalf("p=%d n=%d: Decode of %d of %d bytes: %v, want ErrDamaged", p, n, cut, len(b), err)
					}
				}
				if _, err := Decode(append(b, 0)); !errors.Is(err, ErrDamaged) {
					t.Fatalf("p=%d n=%d: a trailing byte: %v, want ErrDamaged", p, n, err)
				}
			}
		}
	}
}

func TestDecodeDamaged(t *testing.T) {
	dense := func(p uint8, set func([]byte)) []byte {
		b := append([]byte{encDense, p}, make([]byte, 1<<p)...)
		set(b[2:])
		return b
	}
	for name, b := range map[string][]byte{
		"version 0":            {0, 10},
		"version 9":            append([]byte{9, 4}, make([]byte, 16)...),
		"precision 3":          append([]byte{encDense, 3}, make([]byte, 8)...),
		"precision 19":         {encDense, 19},
		"dense rank too high":  dense(10, func(r []byte) { r[5] = 56 }),
		"sparse rank zero":     {encSparse, 10, 1, 0, 0},
		"sparse rank too high": {encSparse, 10, 1, 0, 56},
		"sparse index 1024":    {encSparse, 10, 1, 0x80, 0x08, 1},
		"sparse index past":    {encSparse, 10, 2, 0xff, 0x07, 1, 0, 1},
		"sparse count 1025":    {encSparse, 10, 0x81, 0x08},
		"sparse count short":   {encSparse, 10, 2, 0, 1},
	} {
		if s, err := Decode(b); !errors.Is(err, ErrDamaged) {
			t.Errorf("%s: Decode = %v, %v; want ErrDamaged", name, s, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	// The largest valid values decode.
	if _, err := Decode(dense(10, func(r []byte) { r[1023] = 55 })); err != nil {
		t.Errorf("rank 55 at p=10: %v", err)
	}
	if s, err := Decode([]byte{encSparse, 10, 1, 0xff, 0x07, 55}); err != nil || s.Get(1023) != 55 {
		t.Errorf("sparse register 1023 = 55: %v", err)
	}
}
