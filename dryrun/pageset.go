package dryrun

// pageSet is a set of a site's pages in the dry run, by their 64-bit hash
// (pageHash): an open-addressing table (linear probing, at most half
// full) of the hashes themselves, 0 marking an empty slot, so that a page
// already held costs its hash and mostly one probe.
type pageSet struct {
	slots []uint64 // length a power of two, or 0 before the first page
	n     int
}

// len returns the number of pages.
func (s *pageSet) len() int { return s.n }

// slot returns h's slot: the one holding it, or the empty one where it
// goes.
func (s *pageSet) slot(h uint64) *uint64 {
	mask := uint64(len(s.slots) - 1)
	p := h & mask
	for s.slots[p] != 0 && s.slots[p] != h {
		p = (p + 1) & mask
	}
	return &s.slots[p]
}

// has reports whether the set holds h (not 0).
func (s *pageSet) has(h uint64) bool {
	return s.n > 0 && *s.slot(h) == h
}

// add adds h (not 0), which the set does not hold.
func (s *pageSet) add(h uint64) {
	if 2*(s.n+1) > len(s.slots) {
		old := s.slots
		s.slots = make([]uint64, max(64, 2*len(old)))
		for _, o := range old {
			if o != 0 {
				*s.slot(o) = o
			}
		}
	}
	*s.slot(h) = h
	s.n++
}

// clear empties the set, keeping its room.
func (s *pageSet) clear() {
	clear(s.slots)
	s.n = 0
}
