package visitor

import (
	"encoding/binary"
	"math/bits"
)

// sip is a streaming SipHash state: the four words, the bytes not yet
// compressed (tail, ntail of them, little-endian) and the length so far.
// It lives on the caller's stack: nothing here allocates.
type sip struct {
	v0, v1, v2, v3 uint64
	tail           uint64
	ntail          uint
	n              uint64
	c              int // compression rounds per word (2 for SipHash-2-4, 1 for 1-3)
}

func (s *sip) init(k0, k1 uint64, c int) {
	s.v0 = k0 ^ 0x736f6d6570736575
	s.v1 = k1 ^ 0x646f72616e646f6d
	s.v2 = k0 ^ 0x6c7967656e657261
	s.v3 = k1 ^ 0x7465646279746573
	s.tail, s.ntail, s.n, s.c = 0, 0, 0, c
}

// sipRound is SipHash's round, written once: the state in and out as
// values, so that it inlines and the loops keep the state in registers.
func sipRound(v0, v1, v2, v3 uint64) (uint64, uint64, uint64, uint64) {
	v0 += v1
	v1 = bits.RotateLeft64(v1, 13)
	v1 ^= v0
	v0 = bits.RotateLeft64(v0, 32)
	v2 += v3
	v3 = bits.RotateLeft64(v3, 16)
	v3 ^= v2
	v0 += v3
	v3 = bits.RotateLeft64(v3, 21)
	v3 ^= v0
	v2 += v1
	v1 = bits.RotateLeft64(v1, 17)
	v1 ^= v2
	v2 = bits.RotateLeft64(v2, 32)
	return v0, v1, v2, v3
}

func (s *sip) round() { s.v0, s.v1, s.v2, s.v3 = sipRound(s.v0, s.v1, s.v2, s.v3) }

func (s *sip) word(m uint64) {
	s.v3 ^= m
	for i := 0; i < s.c; i++ {
		s.round()
	}
	s.v0 ^= m
}

// write absorbs p.
func (s *sip) write(p []byte) {
	s.n += uint64(len(p))
	if s.ntail > 0 {
		for len(p) > 0 && s.ntail < 8 {
			s.tail |= uint64(p[0]) << (8 * s.ntail)
			s.ntail++
			p = p[1:]
		}
		if s.ntail < 8 {
			return
		}
		s.word(s.tail)
		s.tail, s.ntail = 0, 0
	}
	if len(p) >= 8 {
		if s.c == 1 {
			p = s.blocks13(p)
		} else {
			p = s.blocks24(p)
		}
	}
	for i, c := range p {
		s.tail |= uint64(c) << (8 * uint(i))
	}
	s.ntail = uint(len(p))
}

// writeByte absorbs one byte.
func (s *sip) writeByte(c byte) {
	s.n++
	s.tail |= uint64(c) << (8 * s.ntail)
	s.ntail++
	if s.ntail == 8 {
		s.word(s.tail)
		s.tail, s.ntail = 0, 0
	}
}

// sum64 finishes the hash with d finalization rounds (4 for SipHash-2-4,
// 3 for 1-3). The state is spent afterwards.
func (s *sip) sum64(d int) uint64 {
	s.word(s.tail | s.n<<56)
	s.v2 ^= 0xff
	for i := 0; i < d; i++ {
		s.round()
	}
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3
}

// SipHash24 is SipHash-2-4 of p under the key (k0, k1), the key's 16
// bytes read as two little-endian words (as the reference
// implementation reads them). Its output is the reference's 8 output
// bytes read as a little-endian word.
func SipHash24(k0, k1 uint64, p []byte) uint64 {
	var s sip
	s.init(k0, k1, 2)
	s.write(p)
	return s.sum64(4)
}

// SipHash13 is SipHash-1-3 (one compression round, three finalization
// rounds) of p under the key (k0, k1), read as SipHash24 reads it.
func SipHash13(k0, k1 uint64, p []byte) uint64 {
	var s sip
	s.init(k0, k1, 1)
	s.write(p)
	return s.sum64(3)
}

// blocks24 compresses the whole words of p with two rounds each, the
// state held in locals (registers) for the loop, and returns the rest.
func (s *sip) blocks24(p []byte) []byte {
	v0, v1, v2, v3 := s.v0, s.v1, s.v2, s.v3
	for ; len(p) >= 8; p = p[8:] {
		m := binary.LittleEndian.Uint64(p)
		v3 ^= m
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0 ^= m
	}
	s.v0, s.v1, s.v2, s.v3 = v0, v1, v2, v3
	return p
}

// blocks13 is blocks24 with one round a word.
func (s *sip) blocks13(p []byte) []byte {
	v0, v1, v2, v3 := s.v0, s.v1, s.v2, s.v3
	for ; len(p) >= 8; p = p[8:] {
		m := binary.LittleEndian.Uint64(p)
		v3 ^= m
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0 ^= m
	}
	s.v0, s.v1, s.v2, s.v3 = v0, v1, v2, v3
	return p
}
