package replay

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/logtally/logtally/digits"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/tailer"
)

// maxKeys is how many (site, page, second) keys the dry run holds
// before it commits them (counts them and starts again), as the daemon's
// aggregator commits to the buffer: the keys stay in the CPU caches.
const maxKeys = 1 << 12

// maxPages bounds the page ids (26 bits of a key); past it the ids
// start again, after a commit.
const maxPages = 1 << 26

// malformedLogged is how many malformed lines of each file are
// printed with their line number before the rest are only counted.
const malformedLogged = 5

// DryRun parses lines and sums hits per (site, page, second) in memory,
// as the daemon's aggregator does, without a buffer or database.
type DryRun struct {
	p   *parser.Parser
	lim *parser.PageLimiter
	log io.Writer

	siteIDs  map[string]uint32
	pageIDs  map[string]uint32 // site id (4 bytes) + page
	keys     map[uint64]uint32 // page id << 38 | second, since the last commit
	seconds  map[uint64]struct{}
	lastSec  uint64
	lastSite []byte
	lastID   uint32
	keyBuf   []byte
	hit      parser.Hit

	files, lines, tooLong, committed, pagesForgotten uint64
	maxLine                                          int
}

// NewDryRun returns a DryRun parsing with p, applying lim
// (max_pages_per_minute; nil: no bound), skipping lines longer than maxLine
// bytes ('\n' not included; max_line_bytes) and printing malformed lines to
// log.
func NewDryRun(p *parser.Parser, lim *parser.PageLimiter, maxLine int, log io.Writer) *DryRun {
	return &DryRun{
		p: p, lim: lim, log: log,
		siteIDs: map[string]uint32{}, pageIDs: map[string]uint32{},
		keys: make(map[uint64]uint32, maxKeys), seconds: map[uint64]struct{}{}, lastSec: ^uint64(0),
		maxLine: maxLine,
	}
}

// ReadFile reads one plain, gzip, zstd or bzip2 file (told by its first
// bytes, see Open) as Stream reads it for a replay, chunk by chunk in this
// goroutine: the same lines
// (tailer.Cutter's), its unterminated last line counted (the file is
// finished), and of a damaged file (a *DamagedError) only the whole lines
// before the damage, not its unterminated tail.
func (d *DryRun) ReadFile(name string) error {
	d.files++
	lineNo, malformed := 0, 0
	_, err := readStream(context.Background(), name, dryRunSource, nil, 0, false, d.maxLine, func(c tailer.Chunk) error {
		if c.Skipped > 0 {
			lineNo++
			d.lines++
			d.tooLong++
			fmt.Fprintf(d.log, "%s:%d: line longer than %d bytes skipped\n", name, lineNo, d.maxLine)
			return nil
		}
		c.Lines(func(line []byte, _ int64) {
			lineNo++
			d.line(name, lineNo, line, &malformed)
		})
		c.Release()
		return nil
	}, nil)
	if malformed > malformedLogged {
		fmt.Fprintf(d.log, "%s: %d malformed lines in all\n", name, malformed)
	}
	return err // it names the file
}

// dryRunSource is the source of the dry run's chunks: they are only read.
const dryRunSource = "dry-run"

// line parses one line and counts its hit.
func (d *DryRun) line(name string, lineNo int, line []byte, malformed *int) {
	d.lines++
	o := d.p.Parse(line, &d.hit)
	if o != parser.OK {
		if o.Malformed() {
			*malformed++
			if *malformed <= malformedLogged {
				// File, line number and reason, never the contents:
				// nothing logtally reads is echoed.
				fmt.Fprintf(d.log, "%s:%d: %s (%d bytes)\n", name, lineNo, o, len(line))
			} else if *malformed == malformedLogged+1 {
				fmt.Fprintf(d.log, "%s: more malformed lines: counted, no longer printed\n", name)
			}
		}
		return
	}
	h := &d.hit
	page := d.lim.Apply(h.Site, h.Page, h.Time/60)
	if !bytes.Equal(h.Site, d.lastSite) || d.lastSite == nil {
		id, ok := d.siteIDs[string(h.Site)]
		if !ok {
			id = uint32(len(d.siteIDs))
			d.siteIDs[string(h.Site)] = id
		}
		d.lastSite = append(d.lastSite[:0], h.Site...)
		d.lastID = id
	}
	// A page id is per (site, page), so it is the whole key with the
	// second (< 2^38: parser times end in 9999).
	kb := append(d.keyBuf[:0], byte(d.lastID>>24), byte(d.lastID>>16), byte(d.lastID>>8), byte(d.lastID))
	kb = append(kb, page...)
	d.keyBuf = kb
	pid, ok := d.pageIDs[string(kb)]
	if !ok {
		if len(d.pageIDs) == maxPages {
			d.committed += uint64(len(d.keys)) // new ids restart at 0
			clear(d.keys)
			clear(d.pageIDs)
			d.pagesForgotten += maxPages
		}
		pid = uint32(len(d.pageIDs))
		d.pageIDs[string(kb)] = pid
	}
	sec := uint64(h.Time)
	if sec != d.lastSec {
		d.seconds[sec] = struct{}{}
		d.lastSec = sec
	}
	d.keys[uint64(pid)<<38|sec]++
	if len(d.keys) >= maxKeys {
		d.committed += uint64(len(d.keys))
		clear(d.keys)
	}
}

// Summary prints the counts and the rate over elapsed.
func (d *DryRun) Summary(w io.Writer, elapsed time.Duration) {
	c := d.p.Counts()
	row := func(name string, v uint64, note string) {
		fmt.Fprintf(w, "%-26s %12s%s\n", name, digits.Group(v), note)
	}
	row("files", d.files, "")
	row("lines", d.lines, "")
	row("hits", c[parser.OK], "")
	row("malformed", c.Malformed(), "")
	row("filtered", c.Filtered(), "")
	var reasons []parser.Outcome
	for o := parser.OK + 1; o < parser.NumOutcomes; o++ {
		if c[o] > 0 {
			reasons = append(reasons, o)
		}
	}
	sort.SliceStable(reasons, func(i, j int) bool { return c[reasons[i]] > c[reasons[j]] })
	for _, o := range reasons {
		row("  "+o.String(), c[o], "")
	}
	row("too long", d.tooLong, "")
	if d.lim != nil {
		row("hits under (other)", d.lim.Overflow(), " (max_pages_per_minute)")
	}
	row("sites", uint64(len(d.siteIDs)), "")
	row("distinct pages", d.pagesForgotten+uint64(len(d.pageIDs)), "")
	row("distinct seconds", uint64(len(d.seconds)), "")
	row("keys committed", d.committed+uint64(len(d.keys)), " ((site, page, second) sums, in batches of "+digits.Group(maxKeys)+")")
	fmt.Fprintf(w, "%-26s %12s\n", "elapsed", elapsed.Round(time.Millisecond))
	if s := elapsed.Seconds(); s > 0 {
		row("lines/s", uint64(float64(d.lines)/s), "")
	}
}
