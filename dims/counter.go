package dims

import "unsafe"

// Counter counts hits by dimension value per site and UTC day, keeping
// per site, day and dimension the first Limits values it meets (Other
// takes the rest). Its counts are handed on and cleared by Drain; the
// values kept stay until Forget drops their day.
type Counter struct {
	limits Limits
	days   map[siteDay]*dayCounts
	last   *dayCounts // the site day of the hit before
	held   int        // site days holding counts since the last Drain
}

type siteDay struct {
	site string
	day  int64
}

// dayCounts are one site day's values per dimension.
type dayCounts struct {
	key  siteDay
	vals [N]map[string]*count
	last [N]*count // the value of the hit before, per dimension
	// seen remembers, per dimension, values by where their bytes are:
	// the values of a hit come from its classifiers' caches and tables,
	// so a value met before usually is the very same string, found
	// without hashing it (see Counter.Add).
	seen [N][seenSlots]*count
	// counted are the values counted since the last Drain, each once:
	// Drain reads them, not every value kept.
	counted []*count
	// idle: nothing was counted between the last two Drains.
	idle bool
}

// seenSlots is the size of dayCounts.seen's tables, per dimension.
const seenSlots = 32

// seenSlot returns the slot of seen's table for s: a hash of where its
// bytes are.
func seenSlot(s string) uintptr {
	return uintptr(uint64(uintptr(unsafe.Pointer(unsafe.StringData(s)))) * 0x9E3779B97F4A7C15 >> (64 - 5)) // 5 bits: seenSlots
}

// same reports whether a and b are the same bytes: the same length where
// the same memory is (so equal).
func same(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

type count struct {
	value string
	n     uint64
	dim   Dim
}

// NewCounter returns a Counter keeping limits values per site, day and
// dimension (at least 1 each; Other comes on top).
func NewCounter(limits Limits) *Counter {
	for d := range limits {
		limits[d] = max(limits[d], 1)
	}
	return &Counter{limits: limits, days: map[siteDay]*dayCounts{}}
}

// Add counts n hits of site on day (the Unix second of its start) with
// values v: each dimension's value, or Other when the site day already
// keeps its limit of other values ("" counts as Unknown). It allocates
// only for a site day or a value it has not kept before.
func (c *Counter) Add(site []byte, day int64, v *Values, n uint64) {
	dc := c.last
	if dc == nil || dc.key.day != day || dc.key.site != string(site) {
		dc = c.dayOf(site, day)
	}
	if len(dc.counted) == 0 {
		c.held++
	}
	for d := range N {
		val := v[d]
		if val == "" {
			val = Unknown
		}
		if l := dc.last[d]; l != nil && same(l.value, val) {
			if l.n == 0 {
				dc.counted = append(dc.counted, l)
			}
			l.n += n
			continue
		}
		// A value's string is held by its count: bytes where a count's
		// value is, of its length, are that value (strings are never
		// changed).
		slot := &dc.seen[d][seenSlot(val)]
		if e := *slot; e != nil && same(e.value, val) {
			if e.n == 0 {
				dc.counted = append(dc.counted, e)
			}
			e.n += n
			dc.last[d] = e
			continue
		}
		m := dc.vals[d]
		e := m[val]
		if e == nil {
			if len(m) >= c.limits[d]+1 { // Other is always kept, on top
				val = Other
				e = m[Other]
			}
			if e == nil {
				e = &count{value: val, dim: Dim(d)}
				m[val] = e
			}
		}
		if e.n == 0 {
			dc.counted = append(dc.counted, e)
		}
		e.n += n
		dc.last[d] = e
		if e.value == val { // not Other in its place
			*slot = e
		}
	}
}

// dayOf returns site's day counts, made on first use.
func (c *Counter) dayOf(site []byte, day int64) *dayCounts {
	dc := c.days[siteDay{string(site), day}]
	if dc == nil {
		k := siteDay{string(site), day}
		dc = &dayCounts{key: k}
		for d := range dc.vals {
			dc.vals[d] = map[string]*count{Other: {value: Other, dim: Dim(d)}}
		}
		c.days[k] = dc
	}
	c.last = dc
	return dc
}

// Held returns the site days holding counts not yet drained.
func (c *Counter) Held() int { return c.held }

// Drain calls fn for each value with counts since the last Drain (in no
// order) and clears the counts; the values kept stay kept.
func (c *Counter) Drain(fn func(site string, day int64, d Dim, value string, n uint64)) {
	for _, dc := range c.days {
		dc.idle = len(dc.counted) == 0
		for _, e := range dc.counted {
			fn(dc.key.site, dc.key.day, e.dim, e.value, e.n)
			e.n = 0
		}
		clear(dc.counted) // let the values go with their day
		dc.counted = dc.counted[:0]
	}
	c.held = 0
}

// Forget drops the values kept for the days before day (the start of
// the oldest day still counted) that counted nothing since the Drain
// before last: a day holding counts not yet drained is kept (nothing
// counted is lost), and so is one counted in the last interval between
// Drains (an old day a replay is still reading keeps its values).
func (c *Counter) Forget(day int64) {
	for k, dc := range c.days {
		if k.day < day && len(dc.counted) == 0 && dc.idle {
			if c.last == dc {
				c.last = nil
			}
			delete(c.days, k)
		}
	}
}

// Days returns the site days whose values are kept.
func (c *Counter) Days() int { return len(c.days) }
