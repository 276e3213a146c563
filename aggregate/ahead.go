package aggregate

// Lines parsed ahead of the aggregator, on the goroutine that read them,
// and the counting of a chunk's hits that both paths share.

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
)

// Preparser parses the lines of a source's chunks ahead of a Summer (an
// Aggregator's), on the goroutine that read them (a replay's reader), so
// that a replay parses on more cores than the aggregator's one. It does
// what does not depend on the order of the lines: Parse, with a Parser of
// its own made from the same parser.Config (a Parser keeps no state across
// lines). The Summer does the rest, in the order of the lines, as it does
// for the lines it parses: max_sites, max_pages_per_minute, the sums, the
// sites' hits, the visitor sketches, the malformed lines' log. A nil
// *Preparser prepares nothing.
type Preparser struct {
	p      *parser.Parser // the Preparser's own
	from   *parser.Parser // the Summer's, p was made from
	source string
	hit    parser.Hit
}

// Preparser returns a Preparser of source's chunks, for one goroutine, or
// nil where it gains nothing: on one core (GOMAXPROCS 1, the daemon's
// default max_procs), or for a source without a parser.
func (s *Summer) Preparser(source string) *Preparser {
	if runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	src := s.sourceOf(source)
	if src == nil {
		return nil
	}
	p, err := parser.New(src.p.Config())
	if err != nil { // src.p was made of the same configuration
		return nil
	}
	return &Preparser{p: p, from: src.p, source: source}
}

// ahead is a chunk's lines as a Preparser parsed them (Chunk.Ahead).
type ahead struct {
	from  *parser.Parser // the Summer's parser the lines were parsed for
	lines []aheadLine
	bytes []byte        // the hits' sites, pages and clients
	bad   []badLine     // the lines not OK
	dims  []dims.Values // the hits' values by dimension (parser.Config.Dims)
}

// aheadLine is one line: a hit, or (out not OK) a line of ahead.bad.
type aheadLine struct {
	time, rt           int64
	bytes, uaDigest    uint64
	site, page, client span   // in ahead.bytes; a line not OK: site.off is its index in ahead.bad
	dims               uint32 // 1 + the index of its values in ahead.dims; 0: none
	status             int32
	out                parser.Outcome
	bot                botclass.Class
	fromHost           bool
}

// span is the bytes [off, end) of ahead.bytes.
type span struct{ off, end uint32 }

// badLine is a line Parse did not give OK, and the offset past it.
type badLine struct {
	line []byte // in the chunk's Data
	end  int64
}

var aheadPool = sync.Pool{New: func() any { return new(ahead) }}

// Prepare parses c's lines into c.Ahead, where Add reads them instead of
// parsing c.Data (which it still needs for the malformed lines' log). A
// chunk of another source, or without lines, is left as it is.
func (pp *Preparser) Prepare(c *stream.Chunk) {
	if pp == nil || c.Done || len(c.Data) == 0 || c.Checkpoint.Source != pp.source {
		return
	}
	ah := aheadPool.Get().(*ahead)
	ah.from, ah.lines, ah.bytes, ah.bad, ah.dims = pp.from, ah.lines[:0], ah.bytes[:0], ah.bad[:0], ah.dims[:0]
	var site span // the last hit's: the lines of a site mostly follow each other
	h := &pp.hit
	c.Lines(func(line []byte, end int64) {
		out := pp.p.Parse(line, h)
		if out != parser.OK {
			ah.lines = append(ah.lines, aheadLine{out: out, site: span{off: uint32(len(ah.bad))}})
			ah.bad = append(ah.bad, badLine{line: line, end: end})
			return
		}
		if site.end == 0 || !bytes.Equal(h.Site, ah.bytes[site.off:site.end]) {
			site = ah.add(h.Site)
		}
		var vals uint32
		if h.Dims.Set() {
			ah.dims = append(ah.dims, h.Dims)
			vals = uint32(len(ah.dims))
		}
		ah.lines = append(ah.lines, aheadLine{
			time: h.Time, rt: h.RT, bytes: h.Bytes, uaDigest: h.UADigest,
			site: site, page: ah.add(h.Page), client: ah.add(h.Client), dims: vals,
			status: int32(h.Status), out: out, bot: h.Bot, fromHost: h.FromHost,
		})
	})
	c.Ahead = ah
}

// add appends b to ah.bytes and returns where it is.
func (ah *ahead) add(b []byte) span {
	off := len(ah.bytes)
	ah.bytes = append(ah.bytes, b...)
	return span{uint32(off), uint32(len(ah.bytes))}
}

// of returns the bytes of s; nil for none.
func (ah *ahead) of(s span) []byte {
	if s.end == s.off {
		return nil
	}
	return ah.bytes[s.off:s.end:s.end]
}

// addAhead counts the lines of c that a Preparser for src parsed, in
// their order, as Add counts the lines it parses with src's parser.
func (s *Summer) addAhead(c *stream.Chunk, ah *ahead, src *source, t *tally) {
	h := &s.hit
	for i := range ah.lines {
		r := &ah.lines[i]
		t.lines++
		if r.out != parser.OK {
			b := ah.bad[r.site.off]
			s.skip(t, c.Checkpoint, b.end, r.out, b.line)
			continue
		}
		*h = parser.Hit{
			Site: ah.of(r.site), Page: ah.of(r.page), Client: ah.of(r.client),
			Time: r.time, Status: int(r.status), Bytes: r.bytes, RT: r.rt,
			Bot: r.bot, UADigest: r.uaDigest, FromHost: r.fromHost,
		}
		if r.dims > 0 {
			h.Dims = ah.dims[r.dims-1]
		}
		s.count(t, h, src)
	}
}

// Release hands ah back to be prepared into again, keeping nothing of
// the chunk's Data.
func (ah *ahead) Release() {
	clear(ah.bad)
	clear(ah.dims)
	ah.from = nil
	aheadPool.Put(ah)
}

// tally is what Add counts of one chunk's lines, added to the totals
// once the chunk is done.
type tally struct {
	lines, hits, malformed, filtered uint64
	outcomes                         parser.Counts
	siteHits                         *atomic.Uint64 // the counter of Summer.lastSite
	siteRun                          uint64         // hits of lastSite not yet added to it
}

// skip counts a line Parse gave out (not OK): malformed (logged by its
// place, never its bytes but at debug level, see logMalformed) or
// filtered.
func (s *Summer) skip(t *tally, cp stream.Checkpoint, end int64, out parser.Outcome, line []byte) {
	t.outcomes[out]++
	if !out.Malformed() {
		t.filtered++
		return
	}
	t.malformed++
	s.logMalformed(cp, end, out, line)
	if s.malformed.on != nil {
		s.malformed.on(t.lines, out, len(line))
	}
}

// count adds a parsed hit of src to its (site, page, second) sums and to
// its site's hits and visitor sketches, under the site and page src's
// bounds give it at this point of the lines (max_sites, then
// max_pages_per_minute): the one place they are applied, to the lines
// parsed here and ahead alike.
func (s *Summer) count(t *tally, h *parser.Hit, src *source) {
	h.Site = src.sites.site(h)
	t.hits++
	if !bytes.Equal(h.Site, s.lastSite) || t.siteHits == nil {
		if t.siteHits != nil {
			t.siteHits.Add(t.siteRun)
		}
		s.lastSite = append(s.lastSite[:0], h.Site...)
		t.siteHits, t.siteRun = s.stats.siteCounter(h.Site), 0
	}
	t.siteRun++
	page := src.pages.Apply(h.Site, h.Page, h.Time/60)
	s.keyBuf = buffer.AppendKey(s.keyBuf[:0], h.Site, page, h.Time)
	i, added := s.index.index(s.keyBuf)
	if added {
		s.counts = append(s.counts, measure.Vector{})
	}
	if s.hitsOnly {
		s.counts[i][measure.Views]++
		return
	}
	m := measure.Hit{Status: h.Status, Bot: h.Bot, Bytes: h.Bytes, RT: h.RT}
	s.counts[i].Add(&m)
	if s.visitors != nil && h.Bot == botclass.Person && len(h.Client) > 0 {
		s.addVisitor(h, page)
	}
	if h.Dims.Set() {
		s.addDims(h, src.p)
	}
}
