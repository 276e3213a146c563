package botclass

import (
	"bytes"
	"fmt"
	"regexp"
)

// DefaultCacheSize is the number of distinct user agents a Cache holds
// when NewCache is given 0.
const DefaultCacheSize = 4096

// Pattern is a source's own classification rule (config: bots = [{class,
// match}]): user agents matching Match are Class. Patterns are tried
// before the embedded lists, in order.
type Pattern struct {
	Class Class
	// Match is a Go regular expression, matched case-insensitively.
	Match string
}

// Rules classify user agents. They are immutable: one Rules may be used
// by any number of goroutines.
type Rules struct {
	extra []rule
}

type rule struct {
	class Class
	re    *regexp.Regexp
}

// New returns the embedded lists with extra patterns tried first.
func New(extra []Pattern) (*Rules, error) {
	r := &Rules{}
	for i, p := range extra {
		if p.Class == Person || p.Class >= NumClasses {
			return nil, fmt.Errorf("bots[%d].class: %v: must be search, ai, tool, bot or suspect", i, p.Class)
		}
		re, err := regexp.Compile("(?i)" + p.Match)
		if err != nil {
			return nil, fmt.Errorf("bots[%d].match: %w", i, err)
		}
		r.extra = append(r.extra, rule{p.Class, re})
	}
	return r, nil
}

// Classify returns the class of ua (the user agent as logged, without
// quotes).
func (r *Rules) Classify(ua []byte) Class {
	for _, x := range r.extra {
		if x.re.Match(ua) {
			return x.class
		}
	}
	if len(ua) == 0 || bytes.Equal(ua, []byte("-")) {
		return Suspect
	}
	if bytes.Contains(bytes.ToLower(ua), []byte("bot")) {
		return Other
	}
	return Person
}

// Cache remembers the class of the user agents it saw, up to a bound. It
// is not safe for concurrent use: make one per goroutine (per Parser).
type Cache struct {
	r            *Rules
	size         int
	m            map[string]Class
	hits, misses uint64
}

// NewCache returns a cache of r holding up to size user agents
// (DefaultCacheSize if size <= 0).
func NewCache(r *Rules, size int) *Cache {
	if size <= 0 {
		size = DefaultCacheSize
	}
	return &Cache{r: r, size: size, m: make(map[string]Class)}
}

// Class returns the class of ua, from the cache when it holds ua.
func (c *Cache) Class(ua []byte) Class {
	if cl, ok := c.m[string(ua)]; ok {
		c.hits++
		return cl
	}
	c.misses++
	cl := c.r.Classify(ua)
	if len(c.m) >= c.size {
		clear(c.m)
	}
	c.m[string(ua)] = cl
	return cl
}

// Stats returns how many Class calls the cache answered (hits) and how
// many it classified (misses).
func (c *Cache) Stats() (hits, misses uint64) { return c.hits, c.misses }
