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
		set          bool
		start        int64
		site, client []byte
		ua           uint64 // the user agent's digest
	}
	saltStart   int64
	salt        *visitor.Salt // nil: none held for saltStart
	saltSet     bool
	sketch      *visitor.Sketch // the sketch of (sketchStart, sketchSite)
	sketchStart int64
	sketchSite  []byte
	unsalted    atomic.Uint64 // hits of people without a salt for their period (Stats)
}

// addVisitor adds h's visitor key to its site and period's sketch.
func (a *Aggregator) addVisitor(h *parser.Hit) {
	v := &a.vis
	start, _ := a.cfg.Visitors.Period.Bounds(h.Time)
	l := &v.last
	if l.set && l.start == start && l.ua == h.UADigest && bytes.Equal(l.client, h.Client) && bytes.Equal(l.site, h.Site) {
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
		k := buffer.VisitorKey(start, h.Site) // allocates only when the site or period changes
		if v.sketches == nil {
			v.sketches = map[string]*visitor.Sketch{}
		}
		s := v.sketches[k]
		if s == nil {
			s = visitor.NewSketch(visitor.SitePrecision)
			v.sketches[k] = s
		}
		v.sketch, v.sketchStart = s, start
		v.sketchSite = append(v.sketchSite[:0], h.Site...)
	}
	v.sketch.Add(visitor.KeyOf(v.salt, h.Site, h.Client, h.UADigest))
	l.set, l.start, l.ua = true, start, h.UADigest
	l.site = append(l.site[:0], h.Site...)
	l.client = append(l.client[:0], h.Client...)
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
