package parser

// The site a line's host names: siteOf, its cache, and max_sites.

import "bytes"

// maxHostLen bounds a host taken from the line.
const maxHostLen = 255

var hostChar = func() (t [256]bool) {
	for c := range t {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			t[c] = true
		case c == '.' || c == '-' || c == '_' || c == '[' || c == ']' || c == ':':
			t[c] = true
		}
	}
	return t
}()

// OtherSite is the site of the hits of hosts past Config.MaxSites. It is
// no host name (hosts have no parentheses), has no '/', and is the same
// text as the page Other: bucket ids "<time>/<site><page>" stay distinct
// since a page starts with '/' or is Other.
var OtherSite = []byte("(other)")

// siteBound holds the first max sites a Parser counted hits for, in line
// order (boundSite): a Parser made by Ahead leaves it to Bound.
type siteBound struct {
	max    int
	sites  map[string][]byte // hosts given a site, under max
	folded uint64            // hits given OtherSite (SitesFolded)
}

// boundSite returns site if it is one of the first maxSites.max sites this
// Parser counted hits for, or OtherSite.
func (p *Parser) boundSite(site []byte) []byte {
	if s, ok := p.maxSites.sites[string(site)]; ok {
		return s
	}
	if len(p.maxSites.sites) < p.maxSites.max {
		s := bytes.Clone(site)
		p.maxSites.sites[string(s)] = s
		return s
	}
	p.maxSites.folded++
	return OtherSite
}

// Ahead returns a new Parser of p's configuration, for another goroutine
// to parse lines ahead of p's: its Parse gives the hits it would give,
// but for Config.MaxSites, which depends on the order of the lines: a
// hit whose site is a host the bound applies to has Unbound set, and
// p.Bound, called on the hits in line order, gives them the sites p's
// Parse would have. Its caches and Counts are its own.
func (p *Parser) Ahead() (*Parser, error) {
	q, err := New(p.cfg)
	if err != nil {
		return nil, err
	}
	q.ahead = true
	return q, nil
}

// Bound gives a hit that a Parser made by p.Ahead parsed the site p's
// Parse would have given it at this point (Config.MaxSites; see
// boundSite), counting it in SitesFolded when that is OtherSite, and
// clears Unbound. A hit without Unbound is left as it is.
func (p *Parser) Bound(h *Hit) {
	if h.Unbound && p.maxSites.max > 0 {
		h.Site = p.boundSite(h.Site)
	}
	h.Unbound = false
}

// SitesFolded returns how many hits Parse gave the site OtherSite because
// Config.MaxSites hosts already had a site.
func (p *Parser) SitesFolded() uint64 { return p.maxSites.folded }

// lastHost remembers the host of the line before and what siteOf made of
// it: the lines of a site's log mostly come one host after another, and
// the compare is cheaper than lowering the host and looking up its alias.
// siteOf's site points into Parser.hostBuf, which only siteOf writes, or
// into the aliases: it stays valid while cached.
type lastHost struct {
	host        []byte // capacity maxHostLen; a longer host is never cached
	site        []byte
	aliased, ok bool
	set         bool
}

// siteOf is p.siteOf(host), from the cache when host is the one before.
func (c *lastHost) siteOf(p *Parser, host []byte) (site []byte, aliased, ok bool) {
	if c.set && bytes.Equal(host, c.host) {
		return c.site, c.aliased, c.ok
	}
	site, aliased, ok = p.siteOf(host)
	c.set = len(host) <= cap(c.host)
	if c.set {
		c.host = append(c.host[:0], host...)
		c.site, c.aliased, c.ok = site, aliased, ok
	}
	return site, aliased, ok
}

// siteOf turns a host from the line into a site: port removed, trailing
// dot removed, lowercase, mapped through the aliases (aliased is then
// true). ok is false for an empty host, "-", or bytes that are not a host
// name.
func (p *Parser) siteOf(host []byte) (site []byte, aliased, ok bool) {
	if len(host) == 0 || len(host) > maxHostLen || len(host) == 1 && host[0] == '-' {
		return nil, false, false
	}
	if host[0] == '[' {
		if i := bytes.IndexByte(host, ']'); i > 0 {
			host = host[:i+1]
		}
	} else if i := bytes.IndexByte(host, ':'); i >= 0 && bytes.IndexByte(host[i+1:], ':') < 0 {
		host = host[:i] // one colon: a port (several: a bare IPv6 address)
	}
	host = bytes.TrimSuffix(host, []byte("."))
	if len(host) == 0 {
		return nil, false, false
	}
	b := p.hostBuf[:0]
	for _, c := range host {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if !hostChar[c] {
			return nil, false, false
		}
		b = append(b, c)
	}
	if v, ok := p.aliases[string(b)]; ok {
		return v, true, true
	}
	return b, false, true
}
