package geo

import (
	"net/netip"

	"github.com/logtally/logtally/recent"
)

// DefaultCacheSize is the addresses a Cache holds when NewCache is given
// no size: about 130 bytes each (the maps of its two generations).
const DefaultCacheSize = 1 << 14

// Cache remembers the place of the addresses it saw, up to a bound. It is
// not safe for concurrent use: make one per goroutine (per parser).
//
// Like botclass.Cache it keeps two generations (a recent.Gen): addresses
// are added to the current one; when it is full (size/2 entries) it
// becomes the previous one and the old previous one is dropped; a hit in
// the previous generation moves the entry to the current one. A hit is a
// map lookup and allocates nothing.
type Cache struct {
	db           *DB
	holder       *Holder                      // nil: db is fixed
	places       *recent.Gen[[16]byte, Place] // keyed by the 16-byte form: cheaper to hash than netip.Addr
	hits, misses uint64
}

// NewCache returns a cache of db's places holding up to size addresses
// (DefaultCacheSize if size <= 0; at least 2).
func NewCache(db *DB, size int) *Cache {
	if size <= 0 {
		size = DefaultCacheSize
	}
	return &Cache{db: db, places: recent.NewGen[[16]byte, Place](size)}
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
	if p, ok := c.places.Get(k); ok {
		c.hits++
		return p
	}
	c.misses++
	p := c.db.Lookup(addr)
	c.places.Put(k, p)
	return p
}

// DB returns the database the cache answers from: with NewHolderCache,
// the one the Holder holds now (the cache forgets what an older one
// said).
func (c *Cache) DB() *DB {
	if c.holder != nil {
		if db := c.holder.DB(); db != c.db {
			c.db = db
			c.places.Clear()
		}
	}
	return c.db
}

// Len returns the number of addresses the cache holds.
func (c *Cache) Len() int { return c.places.Len() }

// Stats returns how many Place calls the cache answered (hits) and how
// many it looked up in the database (misses).
func (c *Cache) Stats() (hits, misses uint64) { return c.hits, c.misses }

// Hosting reports whether asn is a hosting or data-centre network
// (DB.Hosting), for the database the cache answers from.
func (c *Cache) Hosting(asn uint32) bool { return asn != 0 && c.db != nil && c.db.Hosting(asn) }
