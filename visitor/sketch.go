package visitor

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Precisions: a sketch of precision p has 2^p registers and a standard
// error of StdError(p). SitePrecision is a site's per-day sketch (4,096
// registers, 1.6 %); PagePrecision is a page's (1,024 registers, 3.3 %;
// the sizes behind the choice are in the package doc).
const (
	SitePrecision uint8 = 12
	PagePrecision uint8 = 10
)

// MinPrecision and MaxPrecision bound the precisions a Sketch takes.
const (
	MinPrecision uint8 = 4
	MaxPrecision uint8 = 18
)

// MaxRank returns the largest register value of precision p: 64-p+1 (the
// rank of a key whose 64-p bits after the index are all zero).
func MaxRank(p uint8) uint8 { return 65 - p }

// StdError returns the relative standard error of a sketch of precision
// p: 1.04/sqrt(2^p).
func StdError(p uint8) float64 { return 1.04 / math.Sqrt(float64(uint64(1)<<p)) }

// Sketch is a HyperLogLog sketch of precision P: 2^P registers, each the
// largest rank of the keys that fell in it (0: none). Merging two sketches
// is the register-wise maximum, so it is commutative, associative and
// idempotent: the same keys added on several hosts, or a batch sent twice,
// merge to the sketch of their union.
//
// A sketch is dense (R holds the 2^P registers) or sparse (R is nil; the
// non-zero registers are kept as a sorted list, 4 bytes each), made by
// NewSparse for the many small sketches of pages. A sparse sketch turns
// dense by itself once the list would outgrow R. Every method works on
// both forms and gives the same results; only code reading R directly
// must call Dense first.
//
// A Sketch is not safe for concurrent use.
type Sketch struct {
	P uint8
	R []uint8

	sp []uint32 // sparse form: index<<8 | rank, sorted by index, rank > 0
}

// NewSketch returns an empty dense sketch of precision p. It panics if p
// is outside MinPrecision..MaxPrecision (a programming error: precisions
// are the package's constants).
func NewSketch(p uint8) *Sketch {
	checkP(p)
	return &Sketch{P: p, R: make([]uint8, 1<<p)}
}

// NewSparse returns an empty sparse sketch of precision p (see Sketch).
// It panics as NewSketch does.
func NewSparse(p uint8) *Sketch {
	checkP(p)
	return &Sketch{P: p}
}

func checkP(p uint8) {
	if p < MinPrecision || p > MaxPrecision {
		panic(fmt.Sprintf("visitor: precision %d outside %d..%d", p, MinPrecision, MaxPrecision))
	}
}

// M returns the number of registers, 2^P.
func (s *Sketch) M() int { return 1 << s.P }

// IsSparse reports whether s is in the sparse form.
func (s *Sketch) IsSparse() bool { return s.R == nil }

// sparseMax is the longest sparse list: past it the list (4 bytes an
// entry) would be as large as the dense registers.
func (s *Sketch) sparseMax() int { return s.M() / 4 }

// Add adds a key: the top P bits pick the register, the rank is the
// number of leading zeros of the other 64-P bits plus one (at most
// MaxRank). It reports whether the register rose. On a dense sketch it
// does not allocate; on a sparse one it may grow the list.
func (s *Sketch) Add(key uint64) (changed bool) {
	i := key >> (64 - s.P)
	// A sentinel bit just below the shifted-in zeros caps the rank.
	r := uint8(bits.LeadingZeros64(key<<s.P|1<<(s.P-1))) + 1
	if s.R != nil {
		if r > s.R[i] {
			s.R[i] = r
			return true
		}
		return false
	}
	return s.setMaxSparse(uint32(i), r)
}

// Get returns register i.
func (s *Sketch) Get(i int) uint8 {
	if s.R != nil {
		return s.R[i]
	}
	if i < 0 || i >= s.M() {
		panic(fmt.Sprintf("visitor: register %d of a sketch of %d", i, s.M()))
	}
	if j, ok := s.find(uint32(i)); ok {
		return uint8(s.sp[j])
	}
	return 0
}

// SetMax raises register i to r if r is larger, and reports whether it
// did: a register read back from the database is loaded so. It panics if
// i is out of range; a rank above MaxRank(P) is an error (damaged data).
func (s *Sketch) SetMax(i int, r uint8) (changed bool, err error) {
	if i < 0 || i >= s.M() {
		return false, fmt.Errorf("visitor: register %d of a sketch of %d registers: %w", i, s.M(), ErrDamaged)
	}
	if r > MaxRank(s.P) {
		return false, fmt.Errorf("visitor: register %d rank %d above %d at precision %d: %w", i, r, MaxRank(s.P), s.P, ErrDamaged)
	}
	if s.R != nil {
		if r > s.R[i] {
			s.R[i] = r
			return true, nil
		}
		return false, nil
	}
	return s.setMaxSparse(uint32(i), r), nil
}

// find returns the position of index i in the sparse list, or where it
// would go.
func (s *Sketch) find(i uint32) (int, bool) {
	// Entries compare by index: i<<8 is at most any entry of index i and
	// above every entry of a smaller index.
	sp, x := s.sp, i<<8
	lo, hi := 0, len(sp)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if sp[h] < x {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo, lo < len(sp) && sp[lo]>>8 == i
}

func (s *Sketch) setMaxSparse(i uint32, r uint8) bool {
	if r == 0 {
		return false
	}
	j, ok := s.find(i)
	if ok {
		if r > uint8(s.sp[j]) {
			s.sp[j] = i<<8 | uint32(r)
			return true
		}
		return false
	}
	if len(s.sp) >= s.sparseMax() {
		s.Dense()
		s.R[i] = r
		return true
	}
	s.sp = slices.Insert(s.sp, j, i<<8|uint32(r))
	return true
}

// Dense turns s into the dense form (R holds every register); a dense
// sketch is left as it is.
func (s *Sketch) Dense() {
	if s.R != nil {
		return
	}
	s.R = make([]uint8, s.M())
	for _, e := range s.sp {
		s.R[e>>8] = uint8(e)
	}
	s.sp = nil
}

// NonZero returns the number of registers above zero.
func (s *Sketch) NonZero() int {
	if s.R == nil {
		return len(s.sp)
	}
	n := 0
	for _, r := range s.R {
		if r != 0 {
			n++
		}
	}
	return n
}

// Clone returns a copy of s in the same form.
func (s *Sketch) Clone() *Sketch {
	return &Sketch{P: s.P, R: slices.Clone(s.R), sp: slices.Clone(s.sp)}
}

// Merge raises each register of s to o's when o's is larger: s becomes
// the sketch of the union of both key sets. Merging sketches of different
// precisions is a programming error (the precisions are constants), so it
// panics rather than returning an error.
func (s *Sketch) Merge(o *Sketch) {
	if s.P != o.P {
		panic(fmt.Sprintf("visitor: merge of a precision %d sketch into a precision %d one", o.P, s.P))
	}
	if o.R == nil {
		for _, e := range o.sp {
			if s.R != nil {
				s.R[e>>8] = max(s.R[e>>8], uint8(e))
			} else {
				s.setMaxSparse(e>>8, uint8(e))
			}
		}
		return
	}
	s.Dense()
	if len(o.R) != len(s.R) {
		panic(fmt.Sprintf("visitor: merge of %d registers into %d", len(o.R), len(s.R)))
	}
	r := s.R[:len(o.R)]
	for i, v := range o.R {
		r[i] = max(r[i], v)
	}
}

// Risen calls f, in index order, for each register of s above sent[i]:
// what a flush must send ($max) when sent holds what was sent before.
// sent nil means all zero (nothing sent yet); otherwise it must have 2^P
// registers (Risen panics if not).
func (s *Sketch) Risen(sent []uint8, f func(i int, r uint8)) {
	if sent != nil && len(sent) != s.M() {
		panic(fmt.Sprintf("visitor: Risen with %d sent registers for %d", len(sent), s.M()))
	}
	if s.R == nil {
		for _, e := range s.sp {
			i, r := int(e>>8), uint8(e)
			if sent == nil || r > sent[i] {
				f(i, r)
			}
		}
		return
	}
	if sent == nil {
		for i, r := range s.R {
			if r != 0 {
				f(i, r)
			}
		}
		return
	}
	sent = sent[:len(s.R)]
	for i, r := range s.R {
		if r > sent[i] {
			f(i, r)
		}
	}
}

// RisenFrom is Risen with what was sent kept as a sketch (of either form,
// same precision; nil means nothing sent): a page's sent registers can
// stay sparse.
func (s *Sketch) RisenFrom(sent *Sketch, f func(i int, r uint8)) {
	switch {
	case sent == nil:
		s.Risen(nil, f)
		return
	case sent.P != s.P:
		panic(fmt.Sprintf("visitor: Risen from a precision %d sketch for a precision %d one", sent.P, s.P))
	case sent.R != nil:
		s.Risen(sent.R, f)
		return
	}
	// sent is sparse: walk both sorted lists.
	j := 0
	visit := func(i int, r uint8) {
		for j < len(sent.sp) && int(sent.sp[j]>>8) < i {
			j++
		}
		if j < len(sent.sp) && int(sent.sp[j]>>8) == i && uint8(sent.sp[j]) >= r {
			return
		}
		f(i, r)
	}
	s.Risen(nil, visit)
}

// Estimate returns the estimated number of distinct keys added: Ertl's
// improved raw estimator ("New cardinality estimation algorithms for
// HyperLogLog sketches", 2017, algorithm 6), computed from the histogram
// of register values. It needs no bias table and no switch between small-
// and large-range corrections: it is close to unbiased from 0 to about
// 10^19 keys (near 2^64, where the registers saturate). Registers above
// MaxRank count as MaxRank. It is 0 for an empty sketch and +Inf only
// when every register is at MaxRank (no real key set comes near).
func (s *Sketch) Estimate() float64 {
	var c [66]int // c[k]: registers of value k, k = 0 … q+1 (q = 64-P ≤ 60)
	q := int(64 - s.P)
	if s.R == nil {
		c[0] = s.M() - len(s.sp)
		for _, e := range s.sp {
			c[min(int(uint8(e)), q+1)]++
		}
	} else {
		for _, r := range s.R {
			c[min(int(r), q+1)]++
		}
	}
	m := float64(s.M())
	z := m * tau(1-float64(c[q+1])/m)
	for k := q; k >= 1; k-- {
		z = 0.5 * (z + float64(c[k]))
	}
	z += m * sigma(float64(c[0])/m)
	const alphaInf = 1 / (2 * math.Ln2)
	return alphaInf * m * m / z
}

// sigma is Ertl's σ(x) = x + Σ_{k≥1} x^(2^k) 2^(k-1), for x in [0, 1].
func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		z0 := z
		z += x * y
		y += y
		if z == z0 {
			return z
		}
	}
}

// tau is Ertl's τ(x) = (1 - x - Σ_{k≥1} (1 - x^(2^-k))² 2^-k) / 3, for x
// in [0, 1].
func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		z0 := z
		y *= 0.5
		z -= (1 - x) * (1 - x) * y
		if z == z0 {
			return z / 3
		}
	}
}

// Equal reports whether s and o hold the same registers (whatever their
// forms); nil equals nothing.
func (s *Sketch) Equal(o *Sketch) bool {
	if s == nil || o == nil || s.P != o.P {
		return false
	}
	for i := range s.M() {
		if s.Get(i) != o.Get(i) {
			return false
		}
	}
	return true
}
