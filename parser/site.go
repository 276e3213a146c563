package parser

// The site a line's host names: siteOf and its cache.

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

// OtherSite is the site of the hits of hosts past Config.MaxSites (which
// the aggregator applies, in line order). It is no host name (hosts have no parentheses), has no '/', and is the same
// text as the page Other: bucket ids "<time>/<site><page>" stay distinct
// since a page starts with '/' or is Other.
var OtherSite = []byte("(other)")

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
