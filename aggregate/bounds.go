package aggregate

// The bounds that depend on the order of the lines, per source: max_sites
// (siteBound) here, max_pages_per_minute (pageLimiter, limiter.go). A
// Summer applies them to each hit in line order (count), whoever parsed
// it.

import (
	"bytes"

	"github.com/logtally/logtally/parser"
)

// source is one source of a Summer: its parser and the bounds kept
// across its lines, as its parser's Config sets them.
type source struct {
	p     *parser.Parser
	sites siteBound    // parser.Config.MaxSites
	pages *pageLimiter // parser.PageConfig.MaxPagesPerMinute; nil: no bound
}

// newSource returns the source of p, with the bounds of p's Config.
func newSource(p *parser.Parser) *source {
	cfg := p.Config()
	s := &source{p: p, pages: newPageLimiter(cfg.Page.MaxPagesPerMinute)}
	if max := cfg.MaxSites; max > 0 {
		s.sites = siteBound{max: max, sites: make(map[string][]byte, min(max, 1024))}
	}
	return s
}

// siteBound holds the first max sites taken from the lines (hosts, not
// aliased: parser.Hit.FromHost) that hits were counted for, in line order
// (parser.Config.MaxSites); max 0 bounds nothing.
type siteBound struct {
	max    int
	sites  map[string][]byte // hosts given a site, under max
	folded uint64            // hits given parser.OtherSite (Stats.SitesFolded)
}

// site returns the site h is counted under: h.Site, or parser.OtherSite
// when h.Site is a host and max others had a hit before it.
func (b *siteBound) site(h *parser.Hit) []byte {
	if !h.FromHost || b.max == 0 {
		return h.Site
	}
	if s, ok := b.sites[string(h.Site)]; ok {
		return s
	}
	if len(b.sites) < b.max {
		s := bytes.Clone(h.Site)
		b.sites[string(s)] = s
		return s
	}
	b.folded++
	return parser.OtherSite
}
