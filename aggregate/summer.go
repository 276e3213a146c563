package aggregate

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
)

// Summer turns chunks of lines into sums: it parses each line with its
// source's parser (or takes it as a Preparser parsed it), applies the
// source's bounds that depend on the order of the lines (max_sites,
// max_pages_per_minute: bounds.go) in that order, and adds the hit to its (site, page, second) sums, its
// site's hits and its visitor sketches; beside the sums it keeps where
// each chunk ends (its checkpoint, ledger mark, finished file, archive
// part): what a commit writes. It writes nothing itself. An Aggregator
// sums with one and commits what it holds; the dry run, the rebuild of a
// lost state dir and verify use one alone (NewSummer), so that lines are
// parsed, bounded and keyed as the daemon does. A Summer is used by one
// goroutine at a time, but AddSource and RemoveSource, and Stats, which
// any goroutine may call.
type Summer struct {
	sources  map[string]*source // made with
	extra    extraSources       // sources added by AddSource
	visitors *Visitors          // nil: no visitor sketches
	clock    clock.Clock
	log      *slog.Logger

	index    keyTable // the buffer keys held, numbered: key i's sums are counts[i]
	counts   []measure.Vector
	at       positions // where the chunks summed end (batchfiles.go)
	keyBuf   []byte
	hit      parser.Hit
	lastSite []byte

	malformed  malformedLogs   // the malformed lines' log (malformed.go)
	stats      counters        // behind Stats (stats.go)
	foldWarned map[string]bool // sources whose max_sites was reached, logged
	hitsOnly   bool            // count views alone: the benchmarks' baseline (export_test.go)
	vis        visitorState    // see visitors.go
	dim        dimsState       // see dims.go
}

// NewSummer returns a Summer of the sources parsers names (source name,
// stream.Checkpoint.Source, to its parser), each bounded as its parser's
// Config says (MaxSites, Page.MaxPagesPerMinute). clk nil is clock.Real,
// log nil discards.
func NewSummer(parsers map[string]*parser.Parser, clk clock.Clock, log *slog.Logger) *Summer {
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sources := make(map[string]*source, len(parsers))
	for name, p := range parsers {
		if p != nil {
			sources[name] = newSource(p)
		}
	}
	return &Summer{
		sources:   sources,
		extra:     extraSources{m: map[string]*source{}},
		clock:     clk,
		log:       log.With("component", "aggregator"),
		at:        positions{cps: map[string][]byte{}, marks: map[string]buffer.Mark{}},
		malformed: malformedLogs{byFile: map[stream.FileID]*malformedLog{}},
	}
}

// SetVisitors makes s keep visitor sketches (Config.Visitors of an
// Aggregator); nil: none. Call it before the first Add.
func (s *Summer) SetVisitors(v *Visitors) { s.visitors = v }

// OnMalformed makes Add call f for each malformed line it parses, after
// logging it: n is the line's number among the lines of its chunk (from
// 1), out why it is malformed, length its length in bytes. The line
// itself is not passed on: nothing logtally reads is echoed. For a
// Summer alone (the dry run prints file:line:reason); f runs in Add's
// goroutine.
func (s *Summer) OnMalformed(f func(n uint64, out parser.Outcome, length int)) {
	s.malformed.on = f
}

// LinesParsed returns the lines parsed since NewSummer (the Lines of
// Stats, without its copies): before and after an Add, how many lines the
// chunk held.
func (s *Summer) LinesParsed() uint64 { return s.stats.lines.Load() }

// Bounded returns how many hits the bounds kept across lines counted
// under another site or page than their own (max_sites, max_pages_per_minute:
// Stats' SitesFolded plus Other), without Stats' copies.
func (s *Summer) Bounded() uint64 { return s.stats.sitesFolded.Load() + s.stats.other.Load() }

// Held returns the number of (site, page, second) sums held: what an
// Aggregator compares with Config.MaxKeys after each chunk.
func (s *Summer) Held() int { return len(s.counts) }

// Sums returns the counts held (buffer key -> hits) and the ledger marks
// of the chunks added since the last commit or drain: what a commit would
// write.
func (s *Summer) Sums() (map[string]measure.Vector, []buffer.Mark) {
	counts := make(map[string]measure.Vector, len(s.counts))
	for i := range s.counts {
		counts[string(s.index.key(i))] = s.counts[i]
	}
	return counts, s.at.heldMarks()
}

// Drain hands each sum held (a buffer key, see buffer.AppendKey and
// buffer.DecodeKey, and its measures) to f, in no order, then forgets
// everything a commit would write (sums, checkpoints, finished files,
// archive parts, ledger marks, visitor sketches), writing nothing: a
// Summer alone bounding its memory as an Aggregator does with
// Config.MaxKeys. key is valid only during the call; f nil forgets without
// handing anything on. Stats keep counting.
func (s *Summer) Drain(f func(key []byte, v *measure.Vector)) {
	for i := range s.counts {
		if f == nil {
			break
		}
		f(s.index.key(i), &s.counts[i])
	}
	s.addMeasures()
	s.dropSketches()
	s.dropDims()
	s.forget()
	clear(s.at.cps)
}

// committed records that a commit wrote what s held: the sums and
// positions go, the visitor sketches stay (clean), the measures join
// Stats.
func (s *Summer) committed() {
	s.addMeasures()
	s.committedSketches()
	s.committedDims()
	s.forget()
	s.at.cps = map[string][]byte{}
}

// forget drops the sums and positions held, but the checkpoints (see
// committed and Drain).
func (s *Summer) forget() {
	s.index.reset()
	s.counts = s.counts[:0]
	s.at.finished, s.at.archives = nil, nil
	clear(s.at.marks)
}

// empty reports whether s holds nothing to commit.
func (s *Summer) empty() bool {
	return len(s.counts) == 0 && s.at.empty() && len(s.vis.dirty) == 0 && !s.dimsHeld()
}

// heldBytes is about how much the counts held add to the buffer's size
// once committed (buffer.EstimateCounts).
func (s *Summer) heldBytes() int64 {
	return buffer.EstimateCounts(len(s.counts), len(s.index.arena))
}

// sortedCounts appends the sums held to cs, sorted by key, as the buffer
// takes them: keys and vectors are s's own, valid until the next Add.
func (s *Summer) sortedCounts(cs []buffer.Count) []buffer.Count {
	for i := range s.counts {
		cs = append(cs, buffer.Count{Key: s.index.key(i), V: &s.counts[i]})
	}
	buffer.SortCounts(cs)
	return cs
}

// HasSource reports whether chunks of source name are parsed: a source
// s was made with, or one added by AddSource.
func (s *Summer) HasSource(name string) bool {
	return s.sourceOf(name) != nil
}

// extraSources are the sources added by AddSource, by name: AddSource and
// RemoveSource change them while an Aggregator's Run reads them.
type extraSources struct {
	mu sync.RWMutex // guards m
	m  map[string]*source
}

func (x *extraSources) add(name string, e *source) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.m[name] = e
}

func (x *extraSources) remove(name string) {
	x.mu.Lock()
	delete(x.m, name)
	x.mu.Unlock()
}

func (x *extraSources) get(name string) *source {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.m[name]
}

// AddSource makes chunks of source name parse with p, and be bounded as
// p's Config says, from now on: a replay's files, whose source is not one
// s was made with. p is used only by the goroutine that adds chunks until
// RemoveSource. A name s was made with is an error.
func (s *Summer) AddSource(name string, p *parser.Parser) error {
	if _, ok := s.sources[name]; ok {
		return fmt.Errorf("aggregator: source %q exists", name)
	}
	s.extra.add(name, newSource(p))
	return nil
}

// RemoveSource forgets a source added by AddSource. Chunks of it still
// queued are dropped with an error logged, so remove it only after its
// last chunk was read.
func (s *Summer) RemoveSource(name string) {
	s.extra.remove(name)
}

// sourceOf returns the source of that name, or nil.
func (s *Summer) sourceOf(name string) *source {
	if src := s.sources[name]; src != nil {
		return src
	}
	return s.extra.get(name)
}

// Add parses every line of c (or counts them as a Preparser parsed them:
// c.Ahead, which it takes over) and records where c ends (its checkpoint,
// ledger mark, finished file or archive part). A checkpoint that cannot be
// encoded is an error, returned before any line of c is counted: counts
// committed without their checkpoint would be counted again after a
// restart. A chunk of a source s does not know is dropped, logged.
func (s *Summer) Add(c *stream.Chunk) error {
	cp := c.Checkpoint
	if c.Done {
		s.at.cps[cp.Key()] = nil
		if err := s.at.noteFinished(cp); err != nil {
			return err
		}
		s.malformed.forget(cp.File)
		return nil
	}
	src := s.sourceOf(cp.Source)
	if src == nil {
		// A chunk from a source without a parser is a wiring bug; keep
		// the checkpoint where it was so nothing is lost.
		s.log.Error("chunk from unknown source dropped", "source", cp.Source, "path", cp.Path)
		return nil
	}
	var b []byte
	if !c.Archive {
		var err error
		if b, err = cp.MarshalBinary(); err != nil {
			return fmt.Errorf("aggregator: chunk of %s: %w", cp.Path, err)
		}
	}
	p := src.p
	overflowBefore, foldedBefore := src.pages.Overflow(), src.sites.folded
	var t tally
	ah, _ := c.Ahead.(*ahead)
	c.Ahead = nil
	if ah != nil {
		defer ah.Release()
	}
	if ah != nil && ah.from == p { // else parsed for a parser replaced since: parsed again
		s.addAhead(c, ah, src, &t)
		s.stats.parsedAhead.Add(t.lines)
	} else {
		c.Lines(func(line []byte, end int64) {
			t.lines++
			if out := p.Parse(line, &s.hit); out != parser.OK {
				s.skip(&t, cp, end, out, line)
				return
			}
			s.count(&t, &s.hit, src)
		})
	}
	if t.siteHits != nil {
		t.siteHits.Add(t.siteRun)
	}
	s.stats.lines.Add(t.lines)
	s.stats.hits.Add(t.hits)
	sc := s.stats.sourceCounter(cp.Source)
	sc.lines.Add(t.lines)
	sc.hits.Add(t.hits)
	s.stats.malformed.Add(t.malformed)
	s.stats.filtered.Add(t.filtered)
	s.stats.other.Add(src.pages.Overflow() - overflowBefore)
	if folded := src.sites.folded - foldedBefore; folded > 0 {
		s.stats.sitesFolded.Add(folded)
		if !s.foldWarned[cp.Source] {
			if s.foldWarned == nil {
				s.foldWarned = map[string]bool{}
			}
			s.foldWarned[cp.Source] = true
			// The hosts are not named: they are what clients sent.
			s.log.Warn("max_sites reached: the hits of further hosts are counted under the site \"(other)\" (logtally_sites_folded_hits_total)",
				"source", cp.Source, "path", cp.Path)
		}
	}
	for i, n := range t.outcomes {
		if n > 0 {
			s.stats.outcomes[i].Add(n)
		}
	}
	s.stats.tooLong.Add(uint64(c.Skipped))
	if c.Skipped > 0 {
		s.log.Warn("lines longer than the limit skipped", "path", cp.Path, "count", c.Skipped)
	}
	if !c.Archive {
		s.at.cps[cp.Key()] = b
	} else {
		s.at.noteArchive(c)
	}
	s.at.noteMark(c)
	return nil
}
