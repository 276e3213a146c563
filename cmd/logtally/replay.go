package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/parser"
)

const replayUsage = `usage: logtally replay -dry-run [-config FILE [-source NAME]] [-site S] [-format F] [-log-format L] FILE...

Reads access logs (plain or gzip), parses them as a source would and
prints a summary. -config takes a [[source]]'s settings (-source NAME when
there are several); -site, -format and -log-format override them. Without
-dry-run, replay would write to MongoDB: not implemented yet.
`

// replayBufSize is the read buffer; a line longer than it is skipped and
// counted as too long.
const replayBufSize = 4 << 20

// replayMaxKeys is how many (site, page, second) keys the dry run holds
// before it commits them (counts them and starts again), as the daemon's
// aggregator commits to the buffer: the keys stay in the CPU caches.
const replayMaxKeys = 1 << 12

// maxReplayPages bounds the page ids (26 bits of a key); past it the ids
// start again, after a commit.
const maxReplayPages = 1 << 26

// replayMalformedLogged is how many malformed lines of each file are
// printed with their line number before the rest are only counted.
const replayMalformedLogged = 5

func cmdReplay(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, replayUsage); fs.PrintDefaults() }
	dry := fs.Bool("dry-run", false, "parse and aggregate in memory, print a summary; no database")
	cfgPath := fs.String("config", "", "take the source settings from this config `file`")
	srcName := fs.String("source", "", "the `name` of the [[source]] in -config (default: the only one)")
	site := fs.String("site", "", "the `site` of every hit, or {host} to take it from the line")
	format := fs.String("format", "", "log `format`: "+fmt.Sprint(parser.Formats))
	logFormat := fs.String("log-format", "", "nginx log_format `string`, for -format nginx")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if !*dry {
		return usagef("replay: writing to MongoDB is not implemented yet; use -dry-run")
	}
	if fs.NArg() == 0 {
		return usagef("replay: no log FILE given")
	}
	var pc parser.Config
	if *cfgPath != "" {
		cfg, err := config.Load(*cfgPath)
		if err != nil {
			return usageError{err}
		}
		src, err := pickSource(cfg.Sources, *srcName)
		if err != nil {
			return usageError{err}
		}
		pc = src.Parser()
	} else if *srcName != "" {
		return usagef("replay: -source needs -config")
	}
	if *site != "" {
		pc.Site = *site
	}
	if *format != "" {
		pc.Format = *format
	}
	if *logFormat != "" {
		pc.LogFormat = *logFormat
	}
	p, err := parser.New(pc)
	if err != nil {
		return usagef("replay: %w", err)
	}
	d := newDryRun(p, parser.NewPageLimiter(pc.Page.MaxPagesPerMinute), stderr)
	clk := clock.Real{}
	start := clk.Now()
	for _, name := range fs.Args() {
		if err := d.readFile(name); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	}
	d.summary(stdout, clk.Now().Sub(start))
	return nil
}

// pickSource returns the source named name, or the only source.
func pickSource(sources []config.Source, name string) (config.Source, error) {
	if name == "" {
		if len(sources) != 1 {
			return config.Source{}, fmt.Errorf("replay: the config has %d sources: choose one with -source NAME", len(sources))
		}
		return sources[0], nil
	}
	for _, s := range sources {
		if s.Name == name {
			return s, nil
		}
	}
	return config.Source{}, fmt.Errorf("replay: no source named %q in the config", name)
}

// dryRun parses lines and sums hits per (site, page, second) in memory.
type dryRun struct {
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
	buf                                              []byte
}

func newDryRun(p *parser.Parser, lim *parser.PageLimiter, log io.Writer) *dryRun {
	return &dryRun{
		p: p, lim: lim, log: log,
		siteIDs: map[string]uint32{}, pageIDs: map[string]uint32{},
		keys: make(map[uint64]uint32, replayMaxKeys), seconds: map[uint64]struct{}{}, lastSec: ^uint64(0),
		buf: make([]byte, replayBufSize),
	}
}

// readFile reads one plain or gzip file (told by its first bytes).
func (d *dryRun) readFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var r io.Reader = br
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		r = zr
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return fmt.Errorf("%s: zstd files are not supported yet; decompress it first (zstd -dc %s > FILE)", name, name)
	}
	d.files++
	if err := d.read(name, r); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// read splits r into lines with one big buffer and parses them.
func (d *dryRun) read(name string, r io.Reader) error {
	buf := d.buf
	n, lineNo, malformed := 0, 0, 0
	skipping := false // inside a line longer than the buffer
	for {
		m, err := r.Read(buf[n:])
		n += m
		start := 0
		for {
			i := bytes.IndexByte(buf[start:n], '\n')
			if i < 0 {
				break
			}
			line := buf[start : start+i]
			start += i + 1
			lineNo++
			if skipping {
				skipping = false
				continue
			}
			d.line(name, lineNo, line, &malformed)
		}
		if err == io.EOF {
			if start < n && !skipping {
				lineNo++
				d.line(name, lineNo, buf[start:n], &malformed)
			}
			if malformed > replayMalformedLogged {
				fmt.Fprintf(d.log, "%s: %d malformed lines in all\n", name, malformed)
			}
			return nil
		}
		if err != nil {
			return err
		}
		n = copy(buf, buf[start:n])
		if n == len(buf) { // a line longer than the buffer
			if !skipping {
				d.tooLong++
				d.lines++
				fmt.Fprintf(d.log, "%s:%d: line longer than %d bytes skipped\n", name, lineNo+1, len(buf))
			}
			skipping, n = true, 0
		}
	}
}

// line parses one line and counts its hit.
func (d *dryRun) line(name string, lineNo int, line []byte, malformed *int) {
	d.lines++
	o := d.p.Parse(line, &d.hit)
	if o != parser.OK {
		if o.Malformed() {
			*malformed++
			if *malformed <= replayMalformedLogged {
				if len(line) > 200 {
					line = line[:200]
				}
				fmt.Fprintf(d.log, "%s:%d: %s: %q\n", name, lineNo, o, line)
			} else if *malformed == replayMalformedLogged+1 {
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
		if len(d.pageIDs) == maxReplayPages {
			d.committed += uint64(len(d.keys)) // new ids restart at 0
			clear(d.keys)
			clear(d.pageIDs)
			d.pagesForgotten += maxReplayPages
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
	if len(d.keys) >= replayMaxKeys {
		d.committed += uint64(len(d.keys))
		clear(d.keys)
	}
}

// summary prints the counts.
func (d *dryRun) summary(w io.Writer, elapsed time.Duration) {
	c := d.p.Counts()
	row := func(name string, v uint64, note string) {
		fmt.Fprintf(w, "%-26s %12s%s\n", name, group(v), note)
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
	row("keys committed", d.committed+uint64(len(d.keys)), " ((site, page, second) sums, in batches of "+group(replayMaxKeys)+")")
	fmt.Fprintf(w, "%-26s %12s\n", "elapsed", elapsed.Round(time.Millisecond))
	if s := elapsed.Seconds(); s > 0 {
		row("lines/s", uint64(float64(d.lines)/s), "")
	}
}

// group formats n with thousands separators.
func group(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b)
}
