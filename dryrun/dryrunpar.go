package dryrun

// The parallel dry run: files read (decompressed and cut into chunks of
// whole lines) by up to jobs goroutines, the chunks parsed and summed by
// the goroutine that read them or, while some goroutine has no file left,
// by that one; each with its own parser, limiter and sums, merged at the
// end.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/logtally/logtally/archive"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
)

// parallel is a parallel DryRun's state.
type parallel struct {
	cfg     parser.Config
	jobs    int
	workers []*dryWorker
	read    []string // the files read so far, for a sequential re-read
	// reread counts the runs read again on one worker because their
	// figures could depend on the order of the lines (see exact).
	reread int
}

// NewParallel returns a DryRun that reads its files (ReadFiles) on
// jobs goroutines (0: GOMAXPROCS), its workers: each file is read and
// decompressed by one of them, up to jobs files at once, and its chunks of
// whole lines are parsed and summed by that one or by one with no file
// left (see readFiles), each worker with its own parser made from cfg, its
// own max_pages_per_minute limiter (cfg.Page.MaxPagesPerMinute) and its
// own sums; the sums are merged for the summary. Sums add, so
// every total is the same as New's. What the order of the lines
// decides (which hosts max_sites folds, which pages max_pages_per_minute
// counts under "(other)") is checked: when either bound may apply (see
// exact), the workers stop as soon as one sees it, or the check fails
// after the read, and the files are read again in order on one goroutine.
// So the summary is the one New's gives, but for its keys committed
// when a worker drained before the end (a key once per drain of each
// worker that held it). One job is New's.
func NewParallel(cfg parser.Config, maxLine, jobs int, log io.Writer) (*DryRun, error) {
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	lim := cfg.Page.MaxPagesPerMinute
	if jobs == 1 {
		p, err := parser.New(cfg)
		if err != nil {
			return nil, err
		}
		return New(p, maxLine, log), nil
	}
	par := &parallel{cfg: cfg, jobs: jobs}
	for range jobs {
		p, err := parser.New(cfg)
		if err != nil {
			return nil, err
		}
		par.workers = append(par.workers, newDryWorker(p))
	}
	return &DryRun{limited: lim > 0, log: log, maxLine: maxLine, par: par}, nil
}

// dryFile is one file of a parallel read: its chunks' line counts (by
// sequence number) and the messages of its lines, printed once it is read.
type dryFile struct {
	name  string
	index int // among every file handed to the dry run (a Sink's file)
	err   error

	mu        sync.Mutex
	lines     []uint64 // lines (parsed and skipped) of each chunk, by sequence number
	events    []dryEvent
	malformed uint64
}

// dryEvent is a line to print: malformed, or skipped as too long; its
// number is the lines of the chunks before seq plus n.
type dryEvent struct {
	seq     int
	n       uint64 // its number in its chunk, from 1
	skipped bool
	out     parser.Outcome
	length  int
}

// dryJob is one chunk of a file to parse.
type dryJob struct {
	f   *dryFile
	seq int
	ch  stream.Chunk
}

// readFiles reads names on jobs goroutines (workers), then
// prints the files' messages in order, as ReadFile would have. It stops at
// the first file (in the order given) that cannot be read, as ReadFile one
// after the other does: the files after it are not read (or no longer),
// and its error is returned after the messages of the files before it and
// of its lines read. When a bound kept across lines applies (see exact),
// the workers stop as soon as one of them sees it and the files are read
// again in order.
func (par *parallel) readFiles(d *DryRun, names []string) error {
	files := make([]*dryFile, len(names))
	for i, name := range names {
		files[i] = &dryFile{name: name, index: len(par.read) + i}
	}
	var failed atomic.Int64 // the first file (index) that failed
	failed.Store(int64(len(names)))
	var abort atomic.Bool // a worker met a bound: read in order instead
	errStopped := errors.New("stopped: a file before it failed")

	// Each goroutine reads files while there are files to read, parsing
	// its chunks itself (they are still in its core's caches) unless
	// another goroutine has no file left: then it queues them for it.
	// Once no file is left, a goroutine parses the queued chunks. So one
	// file keeps every core busy, its reader parsing the chunks the others
	// cannot take yet, and several files are each read and parsed by one
	// goroutine, without a hand-off, until the last ones.
	jobs := make(chan dryJob, par.jobs)
	var helping atomic.Int32 // goroutines with no file left, parsing jobs
	next := make(chan int)
	var reading, all sync.WaitGroup
	pws := make([]*parWorker, len(par.workers))
	for n, w := range par.workers {
		pw := newParWorker(w, par.cfg.Page.MaxPagesPerMinute, &abort)
		pws[n] = pw
		reading.Add(1)
		all.Go(func() {
			for i := range next {
				f := files[i]
				seq := 0
				_, f.err = archive.Read(context.Background(), f.name, dryRunSource, nil, 0, false, d.maxLine, func(c stream.Chunk) error {
					if failed.Load() < int64(i) || abort.Load() {
						c.Release()
						return errStopped
					}
					f.mu.Lock()
					f.lines = append(f.lines, 0)
					f.mu.Unlock()
					j := dryJob{f: f, seq: seq, ch: c}
					seq++
					if helping.Load() > 0 {
						select {
						case jobs <- j:
							if len(jobs) == 0 {
								// A worker waiting for chunks took it
								// and was made runnable on this P,
								// behind this goroutine, which does not
								// block: yield, so that it runs now
								// and this one moves to an idle P,
								// rather than waiting to be preempted.
								runtime.Gosched()
							}
							return nil
						default:
						}
					}
					pw.take(j)
					return nil
				}, nil)
				if f.err != nil {
					for cur := failed.Load(); int64(i) < cur && !failed.CompareAndSwap(cur, int64(i)); cur = failed.Load() {
					}
				}
			}
			reading.Done()
			helping.Add(1)
			for j := range jobs {
				pw.take(j)
			}
		})
	}
	for i := range names {
		if failed.Load() < int64(i) || abort.Load() {
			break
		}
		next <- i
	}
	close(next)
	reading.Wait()
	close(jobs)
	all.Wait()

	par.read = append(par.read, names...)
	if abort.Load() {
		return par.inOrder(d, names)
	}
	for _, f := range files {
		d.files++ // as ReadFile: up to the file that failed
		f.print(d.log, d.maxLine)
		if f.err != nil {
			return f.err // it names the file
		}
	}
	errs := make([]error, len(pws))
	for i, pw := range pws {
		errs[i] = pw.first
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return par.exact(d)
}

// parWorker is a dryWorker of a parallel read, with what it notes of the
// chunks it parses.
type parWorker struct {
	*dryWorker
	abort    *atomic.Bool
	maxPages int   // max_pages_per_minute
	first    error // the first drain error
	// Of the chunk being parsed: its malformed lines, the first ones
	// noted.
	events    []dryEvent
	malformed uint64
}

// newParWorker returns w for a parallel read that sets abort when it meets
// a bound kept across lines (see take).
func newParWorker(w *dryWorker, maxPages int, abort *atomic.Bool) *parWorker {
	pw := &parWorker{dryWorker: w, abort: abort, maxPages: maxPages}
	w.mal = func(n uint64, o parser.Outcome, length int) {
		pw.malformed++
		if pw.malformed <= malformedLogged+1 { // enough for the file's first ones
			pw.events = append(pw.events, dryEvent{n: n, out: o, length: length})
		}
	}
	return pw
}

// take parses and sums the chunk of j, notes its lines and messages in its
// file, and drains the sums every maxKeys as ReadFile does. A drain's
// error (a key the buffer cannot decode: a bug) is kept in first. When it
// meets a bound kept across lines (max_sites or max_pages_per_minute: see
// exact) it sets abort; once abort is set it only releases the chunks.
func (pw *parWorker) take(j dryJob) {
	if pw.abort.Load() {
		j.ch.Release()
		return
	}
	w := pw.dryWorker
	if err := w.fileOf(j.f.index); err != nil && pw.first == nil {
		pw.first = err
	}
	pw.events, pw.malformed = pw.events[:0], 0
	before := w.sum.LinesParsed()
	err := w.sum.Add(&j.ch)
	j.ch.Release() // Add keeps nothing of c.Data
	if err != nil && pw.first == nil {
		pw.first = err
	}
	lines := w.sum.LinesParsed() - before
	for range j.ch.Skipped {
		lines++
		pw.events = append(pw.events, dryEvent{n: lines, skipped: true})
	}
	f := j.f
	f.mu.Lock()
	f.lines[j.seq] = lines
	for _, e := range pw.events {
		e.seq = j.seq
		f.events = append(f.events, e)
	}
	f.malformed += pw.malformed
	f.mu.Unlock()
	if w.sum.Held() >= maxKeys {
		if err := w.drain(); err != nil && pw.first == nil {
			pw.first = err
		}
	}
	if w.sum.Bounded() > 0 || pw.maxPages > 0 && w.mostPages > pw.maxPages {
		pw.abort.Store(true)
	}
}

// inOrder reads the files read so far again on one worker, in order,
// printing the messages of names (the last files of par.read, not printed
// yet) as ReadFile does, and takes its figures: what a parallel read gives
// when a bound kept across lines may have applied.
func (par *parallel) inOrder(d *DryRun, names []string) error {
	par.reread++
	p, err := parser.New(par.cfg)
	if err != nil {
		return err
	}
	seq := newDryWorker(p)
	if d.newSink != nil {
		seq.setSink(d.newSink())
	}
	again := &DryRun{w: seq, log: io.Discard, maxLine: d.maxLine}
	seq.mal = again.malformedLine
	par.workers = []*dryWorker{seq}
	earlier := len(par.read) - len(names) // read and printed before
	for i, name := range par.read {
		if i == earlier {
			again.log = d.log
		}
		if i >= earlier {
			d.files++
		}
		if err := again.ReadFile(name); err != nil {
			if i < earlier {
				return fmt.Errorf("dry run: reading %s again in order: %w", name, err)
			}
			return err // it names the file
		}
	}
	return nil
}

// print prints f's messages as ReadFile prints them: the malformed lines
// up to malformedLogged, then that there are more and how many in all, and
// every line skipped as too long, in the order of their line numbers.
func (f *dryFile) print(log io.Writer, maxLine int) {
	before := make([]uint64, len(f.lines)) // lines before each chunk
	var sum uint64
	for i, n := range f.lines {
		before[i] = sum
		sum += n
	}
	slices.SortFunc(f.events, func(a, b dryEvent) int {
		if a.seq != b.seq {
			return a.seq - b.seq
		}
		return int(a.n) - int(b.n)
	})
	var malformed uint64
	for _, e := range f.events {
		line := before[e.seq] + e.n
		if e.skipped {
			fmt.Fprintf(log, "%s:%d: line longer than %d bytes skipped\n", f.name, line, maxLine)
			continue
		}
		malformed++
		if malformed <= malformedLogged {
			fmt.Fprintf(log, "%s:%d: %s (%d bytes)\n", f.name, line, e.out, e.length)
		} else if malformed == malformedLogged+1 {
			fmt.Fprintf(log, "%s: more malformed lines: counted, no longer printed\n", f.name)
		}
	}
	if f.malformed > malformedLogged {
		fmt.Fprintf(log, "%s: %d malformed lines in all\n", f.name, f.malformed)
	}
}

// exact checks that the workers' figures are those one worker reading the
// lines in order would have found, and otherwise reads the files again in
// order (inOrder). Sums add, so totals never depend on how the lines were
// shared; only the bounds kept across lines do:
//   - max_sites: when no worker folded a host and the sites found are at
//     most max_sites, one parser would not have folded any either (it
//     would have met the same sites, each once below the bound).
//   - max_pages_per_minute: when no worker's limiter counted a hit under
//     "(other)" and no site has more distinct pages in all than the bound,
//     no minute of a site can have more, so one limiter would not have
//     counted any either.
//
// Where a bound may have applied, which hosts and pages it caught depends
// on the order of the lines, and workers each seeing a part of them could
// have caught others. A worker that folds, limits, or notes more pages of
// a site than the bound stops the parallel read early (take).
func (par *parallel) exact(d *DryRun) error {
	var bounded uint64
	for _, w := range par.workers {
		bounded += w.sum.Bounded()
	}
	ok := bounded == 0
	f, err := d.figures()
	if err != nil {
		return err
	}
	if ok && par.cfg.MaxSites > 0 && len(f.sites) > par.cfg.MaxSites {
		ok = false
	}
	if max := par.cfg.Page.MaxPagesPerMinute; ok && max > 0 {
		if f.pagesForgotten > 0 {
			ok = false
		}
		for _, ps := range f.sites {
			if ps.len() > max {
				ok = false
			}
		}
	}
	if ok {
		return nil
	}
	return par.inOrder(d, nil)
}
