package aggregate

import (
	"bytes"
	"sync/atomic"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/visitor"
)

// Visitors configures the visitor sketches of an Aggregator.
type Visitors struct {
	// Salts gives the salt of the period holding a second, if held
	// (salts.Keeper.For).
	Salts interface {
		For(sec int64) (*visitor.Salt, bool)
	}
	// Period is the salt period.
	Period visitor.Period
}

// visitorState is the Aggregator's visitor sketches since the last commit
// and what makes a line cheap: the last visitor seen (lines in a row from
// one client skip the keyed hash; adding a key twice changes nothing, so
// the skip is exact), the last period's salt and the last sketch used.
type visitorState struct {
	sketches map[string]*visitor.Sketch // buffer.VisitorKey -> sketch
	last     struct {
		set                bool
		start              int64
		site, client, page []byte
		ua                 uint64 // the user agent's digest
		key                uint64 // its visitor key
	}
	saltStart   int64
	salt        *visitor.Salt // nil: none held for saltStart
	saltSet     bool
	sketch      *visitor.Sketch // the sketch of (sketchStart, sketchSite)
	sketchStart int64
	sketchSite  []byte
	keyBuf      []byte
	unsalted    atomic.Uint64 // hits of people without a salt for their period (Stats)
}

// addVisitor adds h's visitor key to its site's sketch and to page's
// (the page the hit is counted under), for its salt period.
func (a *Aggregator) addVisitor(h *parser.Hit, page []byte) {
	v := &a.vis
	start, _ := a.cfg.Visitors.Period.Bounds(h.Time)
	l := &v.last
	if l.set && l.start == start && l.ua == h.UADigest && bytes.Equal(l.client, h.Client) && bytes.Equal(l.site, h.Site) {
		// The visitor of the line before: its key is in the site's
		// sketch; a page it had not seen still takes it.
		if !bytes.Equal(l.page, page) {
			a.pageSketch(start, h.Site, page).Add(l.key)
			l.page = append(l.page[:0], page...)
		}
		return
	}
	if !v.saltSet || v.saltStart != start {
		v.salt, _ = a.cfg.Visitors.Salts.For(h.Time)
		v.saltStart, v.saltSet = start, true
	}
	if v.salt == nil {
		v.unsalted.Add(1)
		return
	}
	if v.sketch == nil || v.sketchStart != start || !bytes.Equal(v.sketchSite, h.Site) {
		v.sketch = a.sketch(start, h.Site, nil, visitor.SitePrecision)
		v.sketchStart = start
		v.sketchSite = append(v.sketchSite[:0], h.Site...)
	}
	key := visitor.KeyOf(v.salt, h.Site, h.Client, h.UADigest)
	v.sketch.Add(key)
	a.pageSketch(start, h.Site, page).Add(key)
	l.set, l.start, l.ua, l.key = true, start, h.UADigest, key
	l.site = append(l.site[:0], h.Site...)
	l.client = append(l.client[:0], h.Client...)
	l.page = append(l.page[:0], page...)
}

// pageSketch returns the sparse sketch of site's page for the period
// starting at start.
func (a *Aggregator) pageSketch(start int64, site, page []byte) *visitor.Sketch {
	return a.sketch(start, site, page, visitor.PagePrecision)
}

// sketch returns the sketch of site (page nil) or of its page for the
// period starting at start, making it (dense for a site, sparse for a
// page) if there is none. Looking one up allocates nothing; making one
// allocates its key.
func (a *Aggregator) sketch(start int64, site, page []byte, p uint8) *visitor.Sketch {
	v := &a.vis
	v.keyBuf = buffer.AppendVisitorKey(v.keyBuf[:0], start, site, page)
	if s := v.sketches[string(v.keyBuf)]; s != nil {
		return s
	}
	if v.sketches == nil {
		v.sketches = map[string]*visitor.Sketch{}
	}
	s := visitor.NewSketch(p)
	if page != nil {
		s = visitor.NewSparse(p)
	}
	v.sketches[string(v.keyBuf)] = s
	return s
}

// SetVisitors makes a Summer keep visitor sketches (Config.Visitors of a
// run Aggregator); nil: none. Call it before the first Add.
func (a *Aggregator) SetVisitors(v *Visitors) { a.cfg.Visitors = v }

// Sketches returns the visitor sketches held (buffer.VisitorKey ->
// sketch): what a commit would merge into the buffer. They must not be
// modified.
func (a *Aggregator) Sketches() map[string]*visitor.Sketch { return a.vis.sketches }

// takeSketches returns the sketches held and forgets them (a commit took
// them), and forgets the salt looked up last so that a salt fetched since
// is seen.
func (a *Aggregator) takeSketches() map[string]*visitor.Sketch {
	v := &a.vis
	s := v.sketches
	v.sketches, v.sketch, v.saltSet = nil, nil, false
	return s
}
