package aggregate

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/parser"
)

// limiterSlots is how many minutes per site a pageLimiter tracks at once:
// lines up to that many minutes out of order are still bounded per minute.
const limiterSlots = 4

// pageLimiter bounds the distinct pages of each site in one minute
// (parser.PageConfig.MaxPagesPerMinute, page.max_pages_per_minute): pages
// past the bound are counted under parser.Other. A nil *pageLimiter
// limits nothing. It is not safe for concurrent use.
//
// Pages are remembered by a 64-bit hash, so an already seen page costs at
// most one map lookup (none when it is in the small cache of pages known
// seen) and no allocation; two pages with the same hash (about one
// chance in 2^64 per pair) share a place under the bound. A site's state
// for a minute is reset when a line of a minute limiterSlots later
// arrives.
type pageLimiter struct {
	max      int
	sites    map[string]*siteLimit
	overflow uint64

	// The site of the last line and its state: lines of one site mostly
	// follow each other, so its map lookup is skipped while it repeats.
	lastSite []byte
	last     *siteLimit

	// gens numbers the epochs of the slots: a slot takes the next number
	// each time it is reset (made or cleared for another minute), so that
	// a number names one slot of one site for one minute, never reused.
	gens uint64
	// known is a direct-mapped cache of pages, by a cheap hash of their
	// bytes: each entry holds a page's bytes, their FNV-1a hash (so that
	// a page met again is not hashed again) and the epoch of a slot whose
	// set holds the hash (gen; 0: none), so that a reset slot has none and
	// a hit skips the set's map lookup. An entry is used only when its
	// bytes are the page's: the answers are those of the hash and sets
	// alone.
	known []knownPage
}

// knownSize is the number of entries of pageLimiter.known (a power of
// two).
const knownSize = 512

// knownPage is an entry of pageLimiter.known: the page b[:n-1] (n 0: no
// page) has the hash h and is in the set of the slot of epoch gen.
type knownPage struct {
	h, gen uint64
	n      uint8
	b      [knownLen]byte
}

// knownLen is the longest page pageLimiter.known holds: its entry is 64
// bytes.
const knownLen = 47

// knownIndex returns the entry of pageLimiter.known for page (of at most
// knownLen bytes), by its length and first and last 8 bytes (4 bytes if
// fewer than 8; its bytes if fewer than 4).
func knownIndex(page []byte) uint64 {
	var x uint64
	if n := len(page); n >= 8 {
		x = binary.LittleEndian.Uint64(page) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(page[n-8:]), 29)
	} else if n >= 4 {
		x = uint64(binary.LittleEndian.Uint32(page)) | uint64(binary.LittleEndian.Uint32(page[n-4:]))<<32
	} else {
		for _, c := range page {
			x = x<<8 | uint64(c)
		}
	}
	x ^= uint64(len(page)) << 56
	return (x * 0x9e3779b97f4a7c15) >> (64 - 9) // knownSize is 1 << 9
}

type siteLimit struct {
	slots [limiterSlots]struct {
		minute int64
		gen    uint64 // the slot's epoch (pageLimiter.gens)
		seen   map[uint64]struct{}
	}
}

// newPageLimiter returns a limiter of max distinct pages per site and
// minute, or nil (no limit) if max <= 0.
func newPageLimiter(max int) *pageLimiter {
	if max <= 0 {
		return nil
	}
	return &pageLimiter{max: max, sites: map[string]*siteLimit{}}
}

// Apply returns page, or parser.Other if site already had max other distinct
// pages in minute (Unix seconds / 60).
func (l *pageLimiter) Apply(site, page []byte, minute int64) []byte {
	if l == nil {
		return page
	}
	s := l.last
	if s == nil || !bytes.Equal(site, l.lastSite) {
		s = l.sites[string(site)]
		if s == nil {
			s = &siteLimit{}
			l.sites[string(site)] = s
		}
		l.last, l.lastSite = s, append(l.lastSite[:0], site...)
	}
	slot := &s.slots[uint64(minute)%limiterSlots]
	if slot.seen == nil {
		slot.seen = make(map[uint64]struct{}, min(l.max, 1024))
		slot.minute = minute
		l.gens++
		slot.gen = l.gens
	} else if slot.minute != minute {
		clear(slot.seen)
		slot.minute = minute
		l.gens++
		slot.gen = l.gens
	}
	var k *knownPage
	var h uint64
	if len(page) <= knownLen {
		if l.known == nil {
			l.known = make([]knownPage, knownSize)
		}
		k = &l.known[knownIndex(page)]
		if int(k.n) == len(page)+1 && string(k.b[:k.n-1]) == string(page) {
			if k.gen == slot.gen {
				return page
			}
			h = k.h
		} else {
			h = fnv1a.Extend(fnv1a.Offset, page)
			k.gen, k.h, k.n = 0, h, uint8(copy(k.b[:], page))+1
		}
	} else {
		h = fnv1a.Extend(fnv1a.Offset, page)
	}
	if _, ok := slot.seen[h]; !ok {
		if len(slot.seen) >= l.max {
			l.overflow++
			return parser.Other
		}
		slot.seen[h] = struct{}{}
	}
	if k != nil {
		k.gen = slot.gen
	}
	return page
}

// Overflow returns how many hits Apply has counted under Other.
func (l *pageLimiter) Overflow() uint64 {
	if l == nil {
		return 0
	}
	return l.overflow
}
