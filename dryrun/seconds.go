package dryrun

// Seconds: the set of distinct Unix seconds the summary counts.

import stdbits "math/bits"

// secondSet is a set of Unix seconds, a bitmap per block of 1024
// seconds: a day's seconds take 11 KiB, where a map took megabytes and a
// map operation per key.
type secondSet struct {
	blocks map[int64]*[16]uint64
	cache  [8]secondBlock // the blocks used last, by their number's low bits
	n      uint64
}

type secondBlock struct {
	num  int64
	bits *[16]uint64
}

func (s *secondSet) add(sec int64) {
	num := sec >> 10
	c := &s.cache[num&7]
	if c.bits == nil || c.num != num {
		if s.blocks == nil {
			s.blocks = map[int64]*[16]uint64{}
		}
		b := s.blocks[num]
		if b == nil {
			b = new([16]uint64)
			s.blocks[num] = b
		}
		*c = secondBlock{num, b}
	}
	i := sec & 1023
	w, m := &c.bits[i>>6], uint64(1)<<(i&63)
	if *w&m == 0 {
		*w |= m
		s.n++
	}
}

// merge adds o's seconds to s.
func (s *secondSet) merge(o *secondSet) {
	for num, ob := range o.blocks {
		b := s.blocks[num]
		if b == nil {
			if s.blocks == nil {
				s.blocks = map[int64]*[16]uint64{}
			}
			b = new([16]uint64)
			s.blocks[num] = b
		}
		for i, bits := range ob {
			s.n += uint64(stdbits.OnesCount64(bits &^ b[i]))
			b[i] |= bits
		}
	}
}
