package visitor

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrDamaged is wrapped by every error of Decode and SetMax: the bytes or
// the register are not a sketch this package wrote.
var ErrDamaged = errors.New("damaged sketch")

// The encodings' version bytes. Dense: version, P, the 2^P registers.
// Sparse: version, P, uvarint count, then per non-zero register in index
// order uvarint(its index minus the previous one's minus 1; the first's
// index itself) and its rank (1 byte).
const (
	encDense  byte = 1
	encSparse byte = 2
)

// AppendBinary appends the encoding of s to b and returns it: whichever of
// the dense and sparse encodings is shorter (the form of s in memory does
// not matter; Decode restores the form the encoding had).
func (s *Sketch) AppendBinary(b []byte) ([]byte, error) {
	n := s.NonZero()
	// A sparse entry costs at most 1 byte of rank and up to 3 of gap; count
	// it as 3 to decide (precise enough: the choice only costs bytes).
	if 3*n+2+binary.MaxVarintLen32 < s.M() {
		b = append(b, encSparse, s.P)
		b = binary.AppendUvarint(b, uint64(n))
		prev := -1
		s.Risen(nil, func(i int, r uint8) {
			b = binary.AppendUvarint(b, uint64(i-prev-1))
			b = append(b, r)
			prev = i
		})
		return b, nil
	}
	b = append(b, encDense, s.P)
	if s.R != nil {
		return append(b, s.R...), nil
	}
	start := len(b)
	b = append(b, make([]byte, s.M())...)
	for _, e := range s.sp {
		b[start+int(e>>8)] = uint8(e)
	}
	return b, nil
}

// MarshalBinary returns the encoding of s (see AppendBinary).
func (s *Sketch) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }

// Decode returns the sketch b encodes. Damaged bytes (unknown version,
// precision out of range, wrong length, a rank above MaxRank, indexes out
// of order or range, trailing bytes) give an error wrapping ErrDamaged
// that says what is wrong and where.
func Decode(b []byte) (*Sketch, error) {
	if len(b) < 2 {
		return nil, fmt.Errorf("visitor: sketch of %d bytes, want at least 2: %w", len(b), ErrDamaged)
	}
	v, p := b[0], b[1]
	if p < MinPrecision || p > MaxPrecision {
		return nil, fmt.Errorf("visitor: sketch precision %d outside %d..%d: %w", p, MinPrecision, MaxPrecision, ErrDamaged)
	}
	m, top := 1<<p, MaxRank(p)
	switch v {
	case encDense:
		if len(b)-2 != m {
			return nil, fmt.Errorf("visitor: dense sketch of precision %d has %d registers, want %d: %w", p, len(b)-2, m, ErrDamaged)
		}
		s := NewSketch(p)
		copy(s.R, b[2:])
		for i, r := range s.R {
			if r > top {
				return nil, fmt.Errorf("visitor: dense sketch register %d rank %d above %d: %w", i, r, top, ErrDamaged)
			}
		}
		return s, nil
	case encSparse:
		rest := b[2:]
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(m) {
			return nil, fmt.Errorf("visitor: sparse sketch count at offset 2 is damaged or above %d: %w", m, ErrDamaged)
		}
		rest = rest[k:]
		s := NewSparse(p)
		if int(n) > s.sparseMax() {
			s.Dense()
		} else {
			s.sp = make([]uint32, 0, n)
		}
		prev := -1
		for e := range int(n) {
			off := len(b) - len(rest)
			gap, k := binary.Uvarint(rest)
			if k <= 0 || len(rest) < k+1 || gap >= uint64(m-prev-1) {
				return nil, fmt.Errorf("visitor: sparse sketch entry %d at offset %d is damaged (truncated or index out of range): %w", e, off, ErrDamaged)
			}
			i, r := prev+1+int(gap), rest[k]
			if r == 0 || r > top {
				return nil, fmt.Errorf("visitor: sparse sketch register %d rank %d outside 1..%d at offset %d: %w", i, r, top, off+k, ErrDamaged)
			}
			if s.R != nil {
				s.R[i] = r
			} else {
				s.sp = append(s.sp, uint32(i)<<8|uint32(r))
			}
			prev, rest = i, rest[k+1:]
		}
		if len(rest) != 0 {
			return nil, fmt.Errorf("visitor: sparse sketch has %d bytes after its %d entries: %w", len(rest), n, ErrDamaged)
		}
		return s, nil
	}
	return nil, fmt.Errorf("visitor: sketch encoding version %d unknown: %w", v, ErrDamaged)
}
