package aggregate

import (
	"bytes"
	"sync/atomic"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/visitor"
)

// Visitors configures the visitor sketches of a Summer (an Aggregator's:
// Config.Visitors).
type Visitors struct {
	// Salts gives the salt of the period holding a second, if held
	// (salts.Keeper.For).
	Salts interface {
		For(sec int64) (*visitor.Salt, bool)
	}
	// Period is the salt period.
	Period visitor.Period
	// Pages keeps a sketch per page too, beside the site's.
	Pages bool
}

// maxHeldSketches bounds the sketches a Summer keeps between
// commits (a site's, and one per page and period): past it, a commit
// forgets those it wrote, and lines after it start them again (the buffer
// merges by maximum, so nothing is lost; only the work of re-making them).
const maxHeldSketches = 100_000

// visitorState is the Summer's visitor sketches and what makes a line
// cheap: the sketches are kept across commits (a commit writes those that
// changed since the last, which the buffer merges by maximum), the last
// visitor seen (lines in a row from one client skip the keyed hash; adding
// a key twice changes nothing, so the skip is exact), the last salt period's
// bounds and salt, the last sketch used, and the unsalted hits counted in a
// plain field until the commit (an atomic addition per line was most of the
// visitor work of a log older than the salts held).
type visitorState struct {
	held  map[string]*heldSketch // buffer.VisitorKey -> sketch
	dirty []*heldSketch          // changed since the last commit
	last  struct {
		set                bool
		start              int64
		site, client, page []byte
		ua                 uint64 // the user agent's digest
		key                uint64 // its visitor key
	}
	periodStart int64 // the salt period of the last hit: [periodStart, periodEnd)
	periodEnd   int64
	saltStart   int64
	salt        *visitor.Salt // nil: none held for saltStart
	saltSet     bool
	sketch      *heldSketch // the sketch of (sketchStart, sketchSite)
	sketchStart int64
	sketchSite  []byte
	keyBuf      []byte
	unsalted    atomic.Uint64 // hits of people without a salt for their period, committed or drained (Stats)
	unsaltedNew uint64        // such hits since the last commit or drain, not yet in unsalted
}

// addVisitor adds h's visitor key to its site's sketch and to page's
// (the page the hit is counted under), for its salt period.
func (s *Summer) addVisitor(h *parser.Hit, page []byte) {
	v := &s.vis
	if h.Time < v.periodStart || h.Time >= v.periodEnd { // the zero state holds no second
		v.periodStart, v.periodEnd = s.visitors.Period.Bounds(h.Time)
	}
	start := v.periodStart
	l := &v.last
	if l.set && l.start == start && l.ua == h.UADigest && bytes.Equal(l.client, h.Client) && bytes.Equal(l.site, h.Site) {
		// The visitor of the line before: its key is in the site's
		// sketch; a page it had not seen still takes it.
		if s.visitors.Pages && !bytes.Equal(l.page, page) {
			s.addKey(s.pageSketch(start, h.Site, page), l.key)
			l.page = append(l.page[:0], page...)
		}
		return
	}
	if !v.saltSet || v.saltStart != start {
		v.salt, _ = s.visitors.Salts.For(h.Time)
		v.saltStart, v.saltSet = start, true
	}
	if v.salt == nil {
		v.unsaltedNew++
		return
	}
	if v.sketch == nil || v.sketchStart != start || !bytes.Equal(v.sketchSite, h.Site) {
		v.sketch = s.sketch(start, h.Site, nil, visitor.SitePrecision)
		v.sketchStart = start
		v.sketchSite = append(v.sketchSite[:0], h.Site...)
	}
	key := visitor.KeyOf(v.salt, h.Site, h.Client, h.UADigest)
	s.addKey(v.sketch, key)
	if s.visitors.Pages {
		s.addKey(s.pageSketch(start, h.Site, page), key)
	}
	l.set, l.start, l.ua, l.key = true, start, h.UADigest, key
	l.site = append(l.site[:0], h.Site...)
	l.client = append(l.client[:0], h.Client...)
	l.page = append(l.page[:0], page...)
}

// pageSketch returns the sparse sketch of site's page for the period
// starting at start.
func (s *Summer) pageSketch(start int64, site, page []byte) *heldSketch {
	return s.sketch(start, site, page, visitor.PagePrecision)
}

// heldSketch is a sketch the Summer keeps, with its key.
type heldSketch struct {
	key   string
	s     *visitor.Sketch
	dirty bool
}

// sketch returns the held sketch of site (page nil) or of its page for the
// period starting at start, making it (dense for a site, sparse for a
// page) if there is none. Looking one up allocates nothing; making one
// allocates it and its key.
func (s *Summer) sketch(start int64, site, page []byte, p uint8) *heldSketch {
	v := &s.vis
	v.keyBuf = buffer.AppendVisitorKey(v.keyBuf[:0], start, site, page)
	if h := v.held[string(v.keyBuf)]; h != nil {
		return h
	}
	if v.held == nil {
		v.held = map[string]*heldSketch{}
	}
	h := &heldSketch{key: string(v.keyBuf), s: visitor.NewSketch(p)}
	if page != nil {
		h.s = visitor.NewSparse(p)
	}
	v.held[h.key] = h
	return h
}

// addKey adds key to h and notes h for the next commit if it changed.
func (s *Summer) addKey(h *heldSketch, key uint64) {
	if h.s.Add(key) && !h.dirty {
		h.dirty = true
		s.vis.dirty = append(s.vis.dirty, h)
	}
}

// Sketches returns the visitor sketches changed since the last commit
// (buffer.VisitorKey -> sketch): what a commit merges into the buffer.
// They must not be modified.
func (s *Summer) Sketches() map[string]*visitor.Sketch {
	if len(s.vis.dirty) == 0 {
		return nil
	}
	m := make(map[string]*visitor.Sketch, len(s.vis.dirty))
	for _, h := range s.vis.dirty {
		m[h.key] = h.s
	}
	return m
}

// committedSketches records that a commit took Sketches: they are clean
// again. Past maxHeldSketches every sketch is forgotten (all are in the
// buffer), and the salt looked up last is forgotten so that a salt
// fetched since is seen. The unsalted hits committed join Stats.
func (s *Summer) committedSketches() {
	v := &s.vis
	v.addUnsalted()
	for _, h := range v.dirty {
		h.dirty = false
	}
	v.dirty = v.dirty[:0]
	if len(v.held) > maxHeldSketches {
		v.held, v.sketch = nil, nil
	}
	v.saltSet = false
}

// dropSketches forgets every sketch (a Summer's Drain: nothing is
// written).
func (s *Summer) dropSketches() {
	v := &s.vis
	v.addUnsalted()
	v.held, v.dirty, v.sketch, v.saltSet = nil, v.dirty[:0], nil, false
	v.last.set = false
}

// addUnsalted adds the unsalted hits counted since the last commit or
// drain to the running total.
func (v *visitorState) addUnsalted() {
	if v.unsaltedNew > 0 {
		v.unsalted.Add(v.unsaltedNew)
		v.unsaltedNew = 0
	}
}
