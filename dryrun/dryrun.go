package dryrun

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/archive"
	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/digits"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
)

// maxKeys is how many (site, page, second) sums the dry run holds before
// it drains them (counts them and starts again), as the daemon's
// aggregator commits to the buffer past Config.MaxKeys: checked after each
// chunk, as Run does; small, so that the keys stay in the CPU caches.
const maxKeys = 1 << 12

// maxPages bounds the (site, page) pairs remembered for the distinct-pages
// figure; past it they are forgotten (and counted) and the set starts
// again. A variable for the tests.
var maxPages = 1 << 26

// pageSeed is the seed of pageHash: the same for every worker of the
// process, so that their sets merge.
var pageSeed = maphash.MakeSeed()

// malformedLogged is how many malformed lines of each file are
// printed with their line number before the rest are only counted.
const malformedLogged = 5

// dryRunSource is the source of the dry run's chunks.
const dryRunSource = "dry-run"

// DryRun parses lines and sums hits per (site, page, second) in memory
// with the daemon's own Summer (aggregate.NewSummer: its parser, bounds,
// key encoding and counters), without a buffer or database.
// New's reads on one goroutine; NewParallel's on several
// (see ReadFiles).
type DryRun struct {
	w       *dryWorker // New's; nil for NewParallel's
	limited bool       // a max_pages_per_minute limiter: the summary shows its row
	log     io.Writer

	// Of the file being read (ReadFile): its name, the lines before the
	// chunk being added and its malformed lines.
	name              string
	lineNo, malformed uint64

	files   uint64
	maxLine int
	// next is the index of the next file ReadFile reads (among every
	// file handed to the dry run, in order): the file a Sink is told.
	next int

	par *parallel // NewParallel's

	newSink func() Sink // SumsTo's
}

// A Sink receives the (site, page, second) sums of a dry run (SumsTo) as
// its aggregator drains them, each with the file its lines came from.
type Sink interface {
	// Sums is called with one sum: file is the index of the file among
	// the files handed to the dry run (ReadFile, ReadFiles), from 0 in
	// their order; key a buffer key (buffer.DecodeKey), valid only
	// during the call; v its measures, not to be kept either.
	Sums(file int, key []byte, v *measure.Vector)
}

// A DimSink is a Sink also handed the counts by dimension (with
// parser.Config.Dims) as its worker drains them, just before its sums.
// Its worker's Summer keeps every value by name (dims.NoLimits, not the
// daemon's bound of values per site day, which depends on what one host
// read): a DimSink sees each value's hits of the files.
type DimSink interface {
	Sink
	// Dims is called with one count: file as for Sums; key a dimension
	// key (buffer.DecodeDimKey: site, dimension, value, day), valid only
	// during the call; n its hits.
	Dims(file int, key []byte, n uint64)
}

// SumsTo makes every worker of d hand the sums it drains to a Sink of its
// own, made by newSink (called once per worker, on the caller's goroutine
// or, for a re-read in order, on the reading one): each sink gets the
// sums of one goroutine, so a Sink needs no lock. A worker drains its sums
// when it holds maxKeys of them, before a chunk of another file than the
// one its sums come from, and at Drain. Call it before reading. Sinks
// returns the sinks whose sums make the result: after a re-read in order
// (see NewParallel), the earlier workers' sinks are dropped.
func (d *DryRun) SumsTo(newSink func() Sink) {
	d.newSink = newSink
	for _, w := range d.workers() {
		w.setSink(newSink())
	}
}

// setSink makes w hand its sums to s, and its counts by dimension, every
// value by name, when s is a DimSink.
func (w *dryWorker) setSink(s Sink) {
	w.sink = s
	if _, ok := s.(DimSink); ok {
		w.sum.SetDimLimits(dims.NoLimits)
	}
}

// Sinks returns the sinks of the workers whose sums make the dry run's
// result (see SumsTo).
func (d *DryRun) Sinks() []Sink {
	var out []Sink
	for _, w := range d.workers() {
		if w.sink != nil {
			out = append(out, w.sink)
		}
	}
	return out
}

// Drain drains every worker, handing their sums to their sinks (SumsTo),
// and returns the aggregators' Stats summed (aggregate.Stats.Add): the
// lines, hits, outcomes and measures of every file read. Its error is a
// drain's (a key the buffer package cannot decode: a bug).
func (d *DryRun) Drain() (aggregate.Stats, error) {
	_, err := d.figures()
	return d.Stats(), err
}

// dryWorker sums chunks with its own Summer (with its own parser and
// bounds) and notes the figures of the sums it drains: one per goroutine
// of the dry run.
type dryWorker struct {
	sum *aggregate.Summer
	// mal is called for each malformed line of the chunk being added (see
	// aggregate's OnMalformed).
	mal func(n uint64, o parser.Outcome, length int)

	// Derived from the sums drained (their keys decoded), kept across
	// drains.
	// sites holds each site's pages by their 64-bit hash (pageHash): a
	// key drained costs one hash of its page and mostly one probe, no
	// string compared. Two pages of a site with the same hash (about one
	// chance in 2^63 per pair) count as one.
	sites    map[string]*pageSet // site -> its pages
	nPages   int                 // the pages of every site
	seconds  secondSet
	lastSite []byte   // of the last key drained, in sites
	cur      *pageSet // its pages

	// mostPages is the most pages of one site (since they were last
	// forgotten).
	mostPages int

	committed, pagesForgotten uint64

	// sink, when set (SumsTo), is handed every sum drained; file is the
	// index of the file the sums held come from (-1: none held yet).
	sink Sink
	file int
}

// newDryWorker returns a worker parsing with p, bounded as p's Config
// says (max_sites, max_pages_per_minute).
func newDryWorker(p *parser.Parser) *dryWorker {
	w := &dryWorker{
		sum:   aggregate.NewSummer(map[string]*parser.Parser{dryRunSource: p}, nil, nil),
		sites: map[string]*pageSet{},
		file:  -1,
	}
	w.sum.OnMalformed(func(n uint64, o parser.Outcome, length int) { w.mal(n, o, length) })
	return w
}

// New returns a DryRun parsing with p, applying the bounds of p's Config
// (max_sites, max_pages_per_minute) as the daemon does, skipping lines
// longer than maxLine bytes ('\n' not included; max_line_bytes) and
// printing malformed lines to log. It reads on the caller's goroutine.
func New(p *parser.Parser, maxLine int, log io.Writer) *DryRun {
	d := &DryRun{w: newDryWorker(p), limited: p.Config().Page.MaxPagesPerMinute > 0, log: log, maxLine: maxLine}
	d.w.mal = d.malformedLine
	return d
}

// ReadFile reads one plain, gzip, zstd or bzip2 file (told by its first
// bytes, see Open) as Stream reads it for a replay, chunk by chunk in this
// goroutine, and adds each chunk to the aggregator: the same lines
// (stream.Cutter's), its unterminated last line counted (the file is
// finished), and of a damaged file (a *archive.DamagedError) only the whole lines
// before the damage, not its unterminated tail. A parallel DryRun reads it
// as ReadFiles does.
func (d *DryRun) ReadFile(name string) error {
	if d.par != nil {
		return d.ReadFiles([]string{name})
	}
	d.files++
	d.name, d.lineNo, d.malformed = name, 0, 0
	file := d.next
	d.next++
	sum := d.w.sum
	_, err := archive.Read(context.Background(), name, dryRunSource, nil, 0, false, d.maxLine, func(c stream.Chunk) error {
		if err := d.w.fileOf(file); err != nil {
			c.Release()
			return err
		}
		before := sum.LinesParsed()
		if err := sum.Add(&c); err != nil {
			return err
		}
		c.Release() // Add keeps nothing of c.Data
		d.lineNo += sum.LinesParsed() - before
		for range c.Skipped {
			d.lineNo++
			fmt.Fprintf(d.log, "%s:%d: line longer than %d bytes skipped\n", name, d.lineNo, d.maxLine)
		}
		if sum.Held() >= maxKeys {
			return d.w.drain()
		}
		return nil
	}, nil)
	if d.malformed > malformedLogged {
		fmt.Fprintf(d.log, "%s: %d malformed lines in all\n", name, d.malformed)
	}
	return err // it names the file
}

// ReadFiles reads the files as ReadFile would one after the other. A
// parallel DryRun reads them at once (see NewParallel); its messages
// are printed once the files are read, the same as ReadFile's.
func (d *DryRun) ReadFiles(names []string) error {
	if d.par == nil {
		for _, name := range names {
			if err := d.ReadFile(name); err != nil {
				return err
			}
		}
		return nil
	}
	return d.par.readFiles(d, names)
}

// malformedLine prints the n-th line of the chunk being added as
// malformed, by file, line number and reason, never its contents: nothing
// logtally reads is echoed.
func (d *DryRun) malformedLine(n uint64, o parser.Outcome, length int) {
	d.malformed++
	if d.malformed <= malformedLogged {
		fmt.Fprintf(d.log, "%s:%d: %s (%d bytes)\n", d.name, d.lineNo+n, o, length)
	} else if d.malformed == malformedLogged+1 {
		fmt.Fprintf(d.log, "%s: more malformed lines: counted, no longer printed\n", d.name)
	}
}

// drain takes the sums held out of the aggregator and notes their sites,
// (site, page) pairs and seconds. A key the buffer package cannot decode
// (a bug: the aggregator made it) is an error.
func (w *dryWorker) drain() error {
	var bad error
	w.drainDims()
	w.sum.Drain(func(key []byte, v *measure.Vector) {
		if err := w.note(key); err != nil && bad == nil {
			bad = err
		}
		if w.sink != nil {
			w.sink.Sums(w.file, key, v)
		}
	})
	return bad
}

// drainDims hands the counts by dimension w's Summer holds to its sink
// when it is a DimSink; the Summer's Drain, next, forgets them.
func (w *dryWorker) drainDims() {
	if ds, ok := w.sink.(DimSink); ok {
		for _, c := range w.sum.DimCounts() {
			ds.Dims(w.file, c.Key, c.N)
		}
	}
}

// fileOf tells w that the next chunk is of the file numbered file: with a
// sink, the sums of another file are drained first, so that each sum
// handed on comes from one file.
func (w *dryWorker) fileOf(file int) error {
	if w.sink == nil || w.file == file {
		return nil
	}
	var err error
	if w.sum.Held() > 0 {
		err = w.drain()
	}
	w.file = file
	return err
}

// note counts a key drained and notes its site, (site, page) pair and
// second. A key of a site and a page shorter than 128 bytes each (one byte
// for each length) is split here, others by buffer.DecodeKey.
func (w *dryWorker) note(key []byte) error {
	w.committed++
	var site, page []byte
	var sec int64
	if ns := int(key[0]); ns < 0x80 && ns+1 < len(key) && key[ns+1] < 0x80 && len(key) == ns+int(key[ns+1])+10 {
		site, page = key[1:ns+1], key[ns+2:len(key)-8]
		sec = int64(binary.BigEndian.Uint64(key[len(key)-8:]) ^ (1 << 63))
	} else {
		var err error
		if site, page, sec, err = buffer.DecodeKey(key); err != nil {
			return fmt.Errorf("dry run: %w", err)
		}
	}
	if !bytes.Equal(site, w.lastSite) || w.cur == nil {
		w.cur = w.sites[string(site)]
		if w.cur == nil {
			w.cur = &pageSet{}
			w.sites[string(site)] = w.cur
		}
		w.lastSite = append(w.lastSite[:0], site...)
	}
	if h := pageHash(page); !w.cur.has(h) {
		w.addPage(w.cur, h)
	}
	w.seconds.add(sec)
	return nil
}

// pageHash returns the hash of page in a pageSet: maphash's of pageSeed,
// never 0 (its lowest bit set).
func pageHash(page []byte) uint64 { return maphash.Bytes(pageSeed, page) | 1 }

// workers returns the workers whose sums and figures make the summary.
func (d *DryRun) workers() []*dryWorker {
	if d.par != nil {
		return d.par.workers
	}
	return []*dryWorker{d.w}
}

// Stats returns the workers' aggregators' Stats summed (aggregate.Stats.Add):
// after Summary, every hit read (its ByDim the hits by dimension, with
// parser.Config.Dims).
func (d *DryRun) Stats() aggregate.Stats {
	var st aggregate.Stats
	for _, w := range d.workers() {
		st.Add(w.sum.Stats())
	}
	return st
}

// lines returns the lines read: parsed, and skipped as too long.
func (d *DryRun) lines() uint64 {
	st := d.Stats()
	return st.Lines + st.TooLong
}

// figures drains every worker and merges their figures into the first,
// which it returns. The sums the workers hold at the end are drained as
// one: a key several of them hold counts once in the keys committed, as
// one worker's last drain would count it (a run shorter than maxKeys keys
// gives the same figure as on one worker).
func (d *DryRun) figures() (*dryWorker, error) {
	ws := d.workers()
	if len(ws) == 1 {
		return ws[0], ws[0].drain()
	}
	held := map[string]struct{}{}
	for _, w := range ws {
		w.drainDims()
		w.sum.Drain(func(key []byte, v *measure.Vector) {
			held[string(key)] = struct{}{}
			if w.sink != nil {
				w.sink.Sums(w.file, key, v)
			}
		})
	}
	for _, w := range ws[1:] {
		ws[0].merge(w)
	}
	var err error
	for k := range held {
		if e := ws[0].note([]byte(k)); e != nil && err == nil {
			err = e
		}
	}
	return ws[0], err
}

// addPage adds a page (its hash) not in pages, the set of its site,
// forgetting every site's pages first when maxPages are held.
func (w *dryWorker) addPage(pages *pageSet, page uint64) {
	if w.nPages == maxPages {
		w.pagesForgotten += uint64(maxPages)
		for _, ps := range w.sites {
			ps.clear()
		}
		w.nPages, w.mostPages = 0, 0
	}
	pages.add(page)
	w.nPages++
	w.mostPages = max(w.mostPages, pages.len())
}

// merge moves o's figures (sites, pages, seconds, keys committed) into w,
// leaving o's empty: the sets are unions, so the figures are those of one
// worker having drained every sum, but for the keys committed (a key once
// per drain of each worker that held it).
func (w *dryWorker) merge(o *dryWorker) {
	for site, ops := range o.sites {
		ps := w.sites[site]
		if ps == nil {
			ps = &pageSet{}
			w.sites[site] = ps
		}
		for _, page := range ops.slots {
			if page != 0 && !ps.has(page) {
				w.addPage(ps, page)
			}
		}
	}
	w.seconds.merge(&o.seconds)
	w.committed += o.committed
	w.pagesForgotten += o.pagesForgotten
	clear(o.sites)
	o.cur, o.lastSite, o.nPages, o.mostPages = nil, nil, 0, 0
	o.seconds = secondSet{}
	o.committed, o.pagesForgotten = 0, 0
}

// Summary prints the counts and the rate over elapsed. Its error is
// drain's, after the summary is printed.
func (d *DryRun) Summary(w io.Writer, elapsed time.Duration) error {
	f, err := d.figures()
	st := d.Stats()
	lines := st.Lines + st.TooLong
	row := func(name string, v uint64, note string) {
		fmt.Fprintf(w, "%-26s %12s%s\n", name, digits.Group(v), note)
	}
	row("files", d.files, "")
	row("lines", lines, "")
	row("hits", st.Hits, "")
	m := &st.Measures
	var bots uint64
	for c := botclass.Person + 1; c < botclass.NumClasses; c++ {
		i, _ := measure.Bot(c)
		bots += m[i]
	}
	row("  people", m[measure.Views]-bots, " (hits whose user agent no list or heuristic classified)")
	for c := botclass.Person + 1; c < botclass.NumClasses; c++ {
		if i, _ := measure.Bot(c); m[i] > 0 {
			row("  "+c.String(), m[i], "")
		}
	}
	for i := measure.Status2xx; i <= measure.StatusOther; i++ {
		if m[i] > 0 {
			row("  "+strings.TrimPrefix(i.Name(), "status_"), m[i], "")
		}
	}
	row("bytes", m[measure.Bytes], "")
	if m[measure.RTCount] > 0 {
		row("response time avg (µs)", m[measure.RTSum]/m[measure.RTCount], fmt.Sprintf(" (max %s µs, over %s hits)",
			digits.Group(m[measure.RTMax]), digits.Group(m[measure.RTCount])))
	}
	row("malformed", st.Malformed, "")
	row("filtered", st.Filtered, "")
	var reasons []parser.Outcome
	for o := parser.OK + 1; o < parser.NumOutcomes; o++ {
		if st.Outcomes[o] > 0 {
			reasons = append(reasons, o)
		}
	}
	sort.SliceStable(reasons, func(i, j int) bool { return st.Outcomes[reasons[i]] > st.Outcomes[reasons[j]] })
	for _, o := range reasons {
		row("  "+o.String(), st.Outcomes[o], "")
	}
	row("too long", st.TooLong, "")
	if d.limited {
		row("hits under (other)", st.Other, " (max_pages_per_minute)")
	}
	row("sites", uint64(len(f.sites)), "")
	row("distinct pages", f.pagesForgotten+uint64(f.nPages), "")
	row("distinct seconds", f.seconds.n, "")
	row("keys committed", f.committed, " ((site, page, second) sums, in batches of "+digits.Group(maxKeys)+")")
	fmt.Fprintf(w, "%-26s %12s\n", "elapsed", elapsed.Round(time.Millisecond))
	if s := elapsed.Seconds(); s > 0 {
		row("lines/s", uint64(float64(lines)/s), "")
	}
	return err
}
