package botclass

import (
	"github.com/logtally/logtally/recent"
	"github.com/logtally/logtally/uafamily"
)

// maxCachedLen is the longest user agent a Cache keeps: longer ones (no
// real browser sends one) are classified every time, so that a client
// sending long random user agents cannot make the cache hold more than
// size × maxCachedLen bytes of keys.
const maxCachedLen = 1024

// Cache remembers the class, crawler and families (Agent) of the user
// agents it saw, up to a bound. It is not safe for concurrent use: make
// one per goroutine (per Parser).
//
// It keeps two generations (a recent.Gen): user agents are added to the
// current one; when it is full (size/2 entries) it becomes the previous
// one and the old previous one is dropped. A hit in the previous
// generation moves the entry to the current one. So the cache holds at
// most size user agents, those seen recently or often survive, and no
// per-entry bookkeeping is needed (a cheap approximation of LRU).
type Cache struct {
	r            *Rules
	digest       func([]byte) uint64 // nil: no digests (NewCacheDigest)
	agents       *recent.Gen[string, entry]
	hits, misses uint64
	noFamilies   bool // SkipFamilies
}

// entry is what the cache keeps of a user agent: small ids, not strings
// (the crawler's index in the lists' table), so that it is 32 bytes, as
// it was with the class alone (TestCacheAgent).
type entry struct {
	key     string // the map's key, kept to move it without a copy (recent.Keyed)
	class   Class
	fam     uafamily.Families
	crawler uint16
	digest  uint64
}

// NewCache returns a cache of r holding up to size user agents
// (DefaultCacheSize if size <= 0; at least 2).
func NewCache(r *Rules, size int) *Cache {
	if size <= 0 {
		size = DefaultCacheSize
	}
	return &Cache{r: r, agents: recent.NewGen[string, entry](size)}
}

// NewCacheDigest is NewCache whose entries also hold digest(ua), computed
// once per user agent cached: a caller needing a hash of each line's user
// agent (the visitor key) gets it with the class, for the price of the
// lookup it makes anyway.
func NewCacheDigest(r *Rules, size int, digest func([]byte) uint64) *Cache {
	c := NewCache(r, size)
	c.digest = digest
	return c
}

// Class returns the class of ua, from the cache when it holds ua. A hit
// allocates nothing.
func (c *Cache) Class(ua []byte) Class {
	return c.get(ua).class
}

// Lookup returns the class of ua and its digest (0 without a digest
// function), from the cache when it holds ua. A hit allocates nothing.
func (c *Cache) Lookup(ua []byte) (Class, uint64) {
	e := c.get(ua)
	return e.class, e.digest
}

// Agent returns everything botclass tells of ua (see Agent), from the
// cache when it holds ua. A hit allocates nothing.
func (c *Cache) Agent(ua []byte) Agent {
	e := c.get(ua)
	return c.r.agent(e.class, e.crawler, e.fam)
}

// LookupAgent is Agent with ua's digest (0 without a digest function).
func (c *Cache) LookupAgent(ua []byte) (Agent, uint64) {
	e := c.get(ua)
	return c.r.agent(e.class, e.crawler, e.fam), e.digest
}

// SkipFamilies makes c leave the families of the agents it classifies
// from now on unknown (uafamily.Families' zero value): for a caller that
// reads the class and the crawler alone (a parser without dimensions), a
// miss then skips the families' parse, about as long as the class's.
func (c *Cache) SkipFamilies() { c.noFamilies = true }

// get returns ua's entry, from the cache when it holds ua; on a miss it
// classifies ua, finds its families, and caches them unless ua is too
// long.
func (c *Cache) get(ua []byte) entry {
	if e, ok := recent.GetBytes(c.agents, ua); ok {
		c.hits++
		return e
	}
	c.misses++
	cl, crawler := c.r.classify(ua)
	e := entry{class: cl, crawler: crawler}
	if !c.noFamilies {
		e.fam = families(cl, ua)
	}
	if c.digest != nil {
		e.digest = c.digest(ua)
	}
	if len(ua) <= maxCachedLen {
		e.key = string(ua)
		c.agents.Put(e.key, e)
	}
	return e
}

// Key returns the user agent e was cached for (recent.Keyed).
func (e entry) Key() string { return e.key }

// Len returns the number of user agents the cache holds.
func (c *Cache) Len() int { return c.agents.Len() }

// Stats returns how many lookups (Class, Lookup, Agent, LookupAgent) the
// cache answered (hits) and how many it classified (misses).
func (c *Cache) Stats() (hits, misses uint64) { return c.hits, c.misses }
