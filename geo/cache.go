package geo

import "net/netip"

// DefaultCacheSize is the addresses a Cache holds when NewCache is given
// no size: about 90 bytes each.
const DefaultCacheSize = 1 << 14

// Cache remembers the place of the addresses it saw, up to a bound. It is
// not safe for concurrent use: make one per goroutine (per parser).
//
// Like botclass.Cache it keeps two generations: addresses are added to
// the current one; when it is full (size/2 entries) it becomes the
// previous one and the old previous one is dropped; a hit in the previous
// generation moves the entry to the current one. A hit is a map lookup
// and allocates nothing.
type Cache struct {
	db           *DB
	holder       *Holder // nil: db is fixed
	gen          int
	cur, prev    map[[16]byte]Place // keyed by the 16-byte form: cheaper to hash than netip.Addr
	hits, misses uint64
}

// NewCache returns a cache of db's places holding up to size addresses
// (DefaultCacheSize if size <= 0; at least 2).
func NewCache(db *DB, size int) *Cache {
	if size <= 0 {
		size = DefaultCacheSize
	}
	gen := max(1, size/2)
	return &Cache{db: db, gen: gen, cur: make(map[[16]byte]Place, gen), prev: make(map[[16]byte]Place, gen)}
}

// NewHolderCache is NewCache of the database h holds: when a Reload
// replaces it, the cache forgets what the old one said.
func NewHolderCache(h *Holder, size int) *Cache {
	c := NewCache(h.DB(), size)
	c.holder = h
	return c
}

// Place returns the place of addr (see DB.Lookup), from the cache when it
// holds addr.
func (c *Cache) Place(addr netip.Addr) Place {
	c.DB()
	if !addr.IsValid() {
		return Place{}
	}
	k := addr.As16() // an IPv4 address and its IPv4-mapped form: one key
	if p, ok := c.cur[k]; ok {
		c.hits++
		return p
	}
	if p, ok := c.prev[k]; ok {
		c.hits++
		delete(c.prev, k)
		c.add(k, p)
		return p
	}
	c.misses++
	p := c.db.Lookup(addr)
	c.add(k, p)
	return p
}

// DB returns the database the cache answers from: with NewHolderCache,
// the one the Holder holds now (the cache forgets what an older one
// said).
func (c *Cache) DB() *DB {
	if c.holder != nil {
		if db := c.holder.DB(); db != c.db {
			c.db = db
			clear(c.cur)
			clear(c.prev)
		}
	}
	return c.db
}

// add puts k in the current generation, first retiring it if it is full.
// The maps keep their room when cleared, so adding allocates nothing.
func (c *Cache) add(k [16]byte, p Place) {
	if len(c.cur) >= c.gen {
		c.prev, c.cur = c.cur, c.prev
		clear(c.cur)
	}
	c.cur[k] = p
}

// Len returns the number of addresses the cache holds.
func (c *Cache) Len() int { return len(c.cur) + len(c.prev) }

// Stats returns how many Place calls the cache answered (hits) and how
// many it looked up in the database (misses).
func (c *Cache) Stats() (hits, misses uint64) { return c.hits, c.misses }

// Hosting reports whether asn is a hosting or data-centre network
// (DB.Hosting), for the database the cache answers from.
func (c *Cache) Hosting(asn uint32) bool { return asn != 0 && c.db != nil && c.db.Hosting(asn) }
