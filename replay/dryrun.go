package replay

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/digits"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/tailer"
)

// maxKeys is how many (site, page, second) sums the dry run holds before
// it drains them (counts them and starts again), as the daemon's
// aggregator commits to the buffer past Config.MaxKeys: checked after each
// chunk, as Run does; small, so that the keys stay in the CPU caches.
const maxKeys = 1 << 12

// maxPages bounds the (site, page) pairs remembered for the distinct-pages
// figure; past it they are forgotten (and counted) and the set starts
// again.
const maxPages = 1 << 26

// malformedLogged is how many malformed lines of each file are
// printed with their line number before the rest are only counted.
const malformedLogged = 5

// dryRunSource is the source of the dry run's chunks.
const dryRunSource = "dry-run"

// DryRun parses lines and sums hits per (site, page, second) in memory
// with the daemon's own aggregator (aggregate.NewSummer: its parser, page
// limiter, key encoding and counters), without a buffer or database.
type DryRun struct {
	agg *aggregate.Aggregator
	lim *parser.PageLimiter
	log io.Writer

	// Derived from the sums drained (their keys decoded), kept across
	// drains.
	sites    map[string]struct{}
	pages    map[string]struct{} // uvarint length of site, site, page
	seconds  secondSet
	pairBuf  []byte
	lastSite []byte // of the last key drained, in sites

	// Of the file being read (ReadFile): its name, the lines before the
	// chunk being added and its malformed lines.
	name              string
	lineNo, malformed uint64

	files, committed, pagesForgotten uint64
	maxLine                          int
}

// NewDryRun returns a DryRun parsing with p, applying lim
// (max_pages_per_minute; nil: no bound), skipping lines longer than maxLine
// bytes ('\n' not included; max_line_bytes) and printing malformed lines to
// log.
func NewDryRun(p *parser.Parser, lim *parser.PageLimiter, maxLine int, log io.Writer) *DryRun {
	d := &DryRun{
		agg: aggregate.NewSummer(map[string]*parser.Parser{dryRunSource: p},
			map[string]*parser.PageLimiter{dryRunSource: lim}, nil, nil),
		lim: lim, log: log,
		sites: map[string]struct{}{}, pages: map[string]struct{}{},
		maxLine: maxLine,
	}
	d.agg.OnMalformed(d.malformedLine)
	return d
}

// ReadFile reads one plain, gzip, zstd or bzip2 file (told by its first
// bytes, see Open) as Stream reads it for a replay, chunk by chunk in this
// goroutine, and adds each chunk to the aggregator: the same lines
// (tailer.Cutter's), its unterminated last line counted (the file is
// finished), and of a damaged file (a *DamagedError) only the whole lines
// before the damage, not its unterminated tail.
func (d *DryRun) ReadFile(name string) error {
	d.files++
	d.name, d.lineNo, d.malformed = name, 0, 0
	_, err := readStream(context.Background(), name, dryRunSource, nil, 0, false, d.maxLine, func(c tailer.Chunk) error {
		before := d.agg.LinesParsed()
		if err := d.agg.Add(&c); err != nil {
			return err
		}
		c.Release() // Add keeps nothing of c.Data
		d.lineNo += d.agg.LinesParsed() - before
		for range c.Skipped {
			d.lineNo++
			fmt.Fprintf(d.log, "%s:%d: line longer than %d bytes skipped\n", name, d.lineNo, d.maxLine)
		}
		if d.agg.Held() >= maxKeys {
			return d.drain()
		}
		return nil
	}, nil)
	if d.malformed > malformedLogged {
		fmt.Fprintf(d.log, "%s: %d malformed lines in all\n", name, d.malformed)
	}
	return err // it names the file
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
func (d *DryRun) drain() error {
	var bad error
	d.agg.Drain(func(key []byte, _ *measure.Vector) {
		d.committed++
		site, page, sec, err := buffer.DecodeKey(key)
		if err != nil {
			if bad == nil {
				bad = fmt.Errorf("dry run: %w", err)
			}
			return
		}
		if !bytes.Equal(site, d.lastSite) || d.lastSite == nil {
			d.sites[string(site)] = struct{}{}
			d.lastSite = append(d.lastSite[:0], site...)
		}
		pb := binary.AppendUvarint(d.pairBuf[:0], uint64(len(site)))
		pb = append(append(pb, site...), page...)
		d.pairBuf = pb
		if _, ok := d.pages[string(pb)]; !ok {
			if len(d.pages) == maxPages {
				d.pagesForgotten += maxPages
				clear(d.pages)
			}
			d.pages[string(pb)] = struct{}{}
		}
		d.seconds.add(sec)
	})
	return bad
}

// secondSet is a set of Unix seconds, a bitmap per block of 1024
// seconds: a day's seconds take 11 KiB, where a map took megabytes and a
// map operation per key.
type secondSet struct {
	blocks map[int64]*[16]uint64
	cache  [8]secondBlock // the blocks used last, by their number's low bits
	n      uint64
}

type secondBlock struct {
	num  int64
	bits *[16]uint64
}

func (s *secondSet) add(sec int64) {
	num := sec >> 10
	c := &s.cache[num&7]
	if c.bits == nil || c.num != num {
		if s.blocks == nil {
			s.blocks = map[int64]*[16]uint64{}
		}
		b := s.blocks[num]
		if b == nil {
			b = new([16]uint64)
			s.blocks[num] = b
		}
		*c = secondBlock{num, b}
	}
	i := sec & 1023
	w, m := &c.bits[i>>6], uint64(1)<<(i&63)
	if *w&m == 0 {
		*w |= m
		s.n++
	}
}

// lines returns the lines read: parsed, and skipped as too long.
func (d *DryRun) lines() uint64 {
	st := d.agg.Stats()
	return st.Lines + st.TooLong
}

// Summary prints the counts and the rate over elapsed. Its error is
// drain's, after the summary is printed.
func (d *DryRun) Summary(w io.Writer, elapsed time.Duration) error {
	err := d.drain()
	st := d.agg.Stats()
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
	if d.lim != nil {
		row("hits under (other)", st.Other, " (max_pages_per_minute)")
	}
	row("sites", uint64(len(d.sites)), "")
	row("distinct pages", d.pagesForgotten+uint64(len(d.pages)), "")
	row("distinct seconds", d.seconds.n, "")
	row("keys committed", d.committed, " ((site, page, second) sums, in batches of "+digits.Group(maxKeys)+")")
	fmt.Fprintf(w, "%-26s %12s\n", "elapsed", elapsed.Round(time.Millisecond))
	if s := elapsed.Seconds(); s > 0 {
		row("lines/s", uint64(float64(lines)/s), "")
	}
	return err
}
