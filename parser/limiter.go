package parser

import "github.com/logtally/logtally/fnv1a"

// Other is the page that PageLimiter counts pages under once a site has
// had its maximum of distinct pages in a minute. It does not start with
// '/', so it never merges with a real page.
var Other = []byte("(other)")

// limiterSlots is how many minutes per site a PageLimiter tracks at once:
// lines up to that many minutes out of order are still bounded per minute.
const limiterSlots = 4

// PageLimiter bounds the distinct pages of each site in one minute
// (page.max_pages_per_minute): pages past the bound are counted under
// Other. A nil *PageLimiter limits nothing. It is not safe for
// concurrent use.
//
// Pages are remembered by a 64-bit hash, so an already seen page costs one
// map lookup and no allocation; two pages with the same hash (about one
// chance in 2^64 per pair) share a place under the bound. A site's state
// for a minute is reset when a line of a minute limiterSlots later
// arrives.
type PageLimiter struct {
	max      int
	sites    map[string]*siteLimit
	overflow uint64
}

type siteLimit struct {
	slots [limiterSlots]struct {
		minute int64
		seen   map[uint64]struct{}
	}
}

// NewPageLimiter returns a limiter of max distinct pages per site and
// minute, or nil (no limit) if max <= 0.
func NewPageLimiter(max int) *PageLimiter {
	if max <= 0 {
		return nil
	}
	return &PageLimiter{max: max, sites: map[string]*siteLimit{}}
}

// Apply returns page, or Other if site already had max other distinct
// pages in minute (Unix seconds / 60).
func (l *PageLimiter) Apply(site, page []byte, minute int64) []byte {
	if l == nil {
		return page
	}
	s := l.sites[string(site)]
	if s == nil {
		s = &siteLimit{}
		l.sites[string(site)] = s
	}
	slot := &s.slots[uint64(minute)%limiterSlots]
	if slot.seen == nil {
		slot.seen = make(map[uint64]struct{}, min(l.max, 1024))
		slot.minute = minute
	} else if slot.minute != minute {
		clear(slot.seen)
		slot.minute = minute
	}
	h := fnv1a.Extend(fnv1a.Offset, page)
	if _, ok := slot.seen[h]; ok {
		return page
	}
	if len(slot.seen) >= l.max {
		l.overflow++
		return Other
	}
	slot.seen[h] = struct{}{}
	return page
}

// Overflow returns how many hits Apply has counted under Other.
func (l *PageLimiter) Overflow() uint64 {
	if l == nil {
		return 0
	}
	return l.overflow
}
