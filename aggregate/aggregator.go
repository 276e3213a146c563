package aggregate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
)

// DefaultMaxKeys is the number of distinct (site, page, second) keys held in
// memory before a commit is forced.
const DefaultMaxKeys = 200_000

// malformedLogged is how many malformed lines of each file are logged with
// their position before the rest are only counted.
const malformedLogged = 5

// malformedEvery is how often, after the first malformed lines of a file,
// one more is logged with the number not logged since.
const malformedEvery = time.Minute

// maxFullBackoff bounds the wait between two commit attempts while the
// state dir's file system is full: space freed is used within it.
const maxFullBackoff = 10 * time.Second

// fullLogEvery is how often a commit still failing on a full state dir is
// logged again; the attempts in between are counted.
const fullLogEvery = 10 * time.Minute

// StateDirFull reports whether err is a commit refused for lack of space
// on the state dir's file system: ENOSPC, or EDQUOT (a quota). Such a
// commit is retried; other commit errors stop the aggregator.
func StateDirFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// Config configures an Aggregator.
type Config struct {
	// Buffer receives the commits.
	Buffer *buffer.Buffer
	// Parsers maps a source name (stream.Checkpoint.Source) to its parser.
	Parsers map[string]*parser.Parser
	// Limiters maps a source name to its max_pages_per_minute limiter;
	// a missing or nil one means no bound.
	Limiters map[string]*parser.PageLimiter
	// HoldUntilStart holds back every commit until the aggregator has read
	// StartMarker() from its input. The Pipeline sends the marker once
	// every tailer has sent its start chunks, on the same channel, so every
	// start chunk is added before the first commit: the buffer's
	// last-commit time (which tells the tailers at the next start what
	// changed while logtally was down) never moves past a file that a
	// source has claimed but whose checkpoint is not yet committed.
	HoldUntilStart bool
	// KeepLastCommit commits without moving the buffer's last-commit
	// time: set when no tailer runs (a replay on its own), whose commits
	// say nothing about the live files.
	KeepLastCommit bool
	// CommitInterval is how often counts and checkpoints are committed.
	CommitInterval time.Duration
	// MaxKeys forces a commit when this many keys are held. Default
	// DefaultMaxKeys.
	MaxKeys int
	// Visitors, when not nil, keeps the visitor sketches (package
	// visitor) of the hits counted as people.
	Visitors *Visitors
	// Clock defaults to clock.Real.
	Clock clock.Clock
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// StartMarker returns the chunk that tells an Aggregator with
// HoldUntilStart that every start chunk before it has been sent. No tailer
// sends it: a tailer's chunks always name their source.
func StartMarker() stream.Chunk { return stream.Chunk{} }

// Aggregator sums parsed hits and commits them with checkpoints.
type Aggregator struct {
	cfg Config
	in  <-chan stream.Chunk
	log *slog.Logger

	index  keyTable // the buffer keys held, numbered: key i's sums are counts[i]
	counts []measure.Vector
	sorted []buffer.Count // a commit's counts (sortedCounts), kept for the next
	cps    map[string][]byte
	marks  map[string]buffer.Mark // ledger key (of a stream) -> mark, since the last commit
	// finished holds the last checkpoints of the files finished since the
	// last commit (stream.Checkpoint.FinishedKey -> encoded checkpoint; see noteFinished).
	finished map[string][]byte
	archives map[string]*buffer.ArchiveRange // replayed archives' parts since the last commit (noteArchive)
	keyBuf   []byte
	hit      parser.Hit

	malformed malformedLogs // the malformed lines' log (malformed.go)

	stats      counters        // behind Stats (stats.go)
	foldWarned map[string]bool // sources whose max_sites was reached, logged
	hitsOnly   bool            // count views alone: the benchmarks' baseline (export_test.go)
	vis        visitorState    // see visitors.go
	started    bool            // StartMarker read
	beat       atomic.Int64    // Clock.Now() of the last loop turn, Unix nanoseconds
	resting    atomic.Bool     // Run waits for input holding nothing, no commit due (LastBeat is now)
	lastSite   []byte

	// stopped is closed when Run returns.
	stopped chan struct{}
	commit  committer // CommitNow's requests, and the waits on a full buffer or state dir (commit.go)

	extra extraSources // sources added while running
}

// New returns an Aggregator reading in. Run it.
func New(cfg Config, in <-chan stream.Chunk) (*Aggregator, error) {
	if cfg.Buffer == nil {
		return nil, errors.New("aggregator: no buffer")
	}
	if cfg.CommitInterval <= 0 {
		return nil, fmt.Errorf("aggregator: commit interval %v must be positive", cfg.CommitInterval)
	}
	if cfg.MaxKeys <= 0 {
		cfg.MaxKeys = DefaultMaxKeys
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return newAggregator(cfg, in, log), nil
}

// newAggregator makes an Aggregator of cfg reading in (nil for a Summer).
func newAggregator(cfg Config, in <-chan stream.Chunk, log *slog.Logger) *Aggregator {
	return &Aggregator{
		cfg:       cfg,
		in:        in,
		log:       log.With("component", "aggregator"),
		cps:       map[string][]byte{},
		marks:     map[string]buffer.Mark{},
		extra:     extraSources{m: map[string]extraSource{}},
		malformed: malformedLogs{byFile: map[stream.FileID]*malformedLog{}},
		commit:    committer{req: make(chan chan error)},
		stopped:   make(chan struct{}),
	}
}

// NewSummer returns an Aggregator that only parses and sums: Add chunks
// to it, then read Sums. It has no buffer and no input; it is never run
// nor committed. The state-dir rebuild re-reads a lost batch's lines with
// it, so that they are parsed, limited and keyed exactly as Run did.
// limiters may lack a source (no bound); clk nil is clock.Real, log nil
// discards.
func NewSummer(parsers map[string]*parser.Parser, limiters map[string]*parser.PageLimiter, clk clock.Clock, log *slog.Logger) *Aggregator {
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if limiters == nil {
		limiters = map[string]*parser.PageLimiter{}
	}
	return newAggregator(Config{Parsers: parsers, Limiters: limiters, Clock: clk}, nil, log)
}

// Sums returns the counts held (buffer key -> hits) and the ledger marks
// of the chunks added since the last commit: what a commit would write.
func (a *Aggregator) Sums() (map[string]measure.Vector, []buffer.Mark) {
	counts := make(map[string]measure.Vector, len(a.counts))
	for i := range a.counts {
		counts[string(a.index.key(i))] = a.counts[i]
	}
	return counts, a.heldMarks()
}

// heldMarks returns the ledger marks held.
func (a *Aggregator) heldMarks() []buffer.Mark {
	marks := make([]buffer.Mark, 0, len(a.marks))
	for _, m := range a.marks {
		marks = append(marks, m)
	}
	return marks
}

// HasSource reports whether chunks of source name are parsed: a source
// the aggregator was made with, or one added by AddSource.
func (a *Aggregator) HasSource(name string) bool {
	p, _ := a.parserFor(name)
	return p != nil
}

// extraSource is a source added while running (a replay's).
type extraSource struct {
	p   *parser.Parser
	lim *parser.PageLimiter
}

// extraSources are the sources added while running, by name: AddSource
// and RemoveSource change them while Run's goroutine reads them.
type extraSources struct {
	mu sync.RWMutex // guards m
	m  map[string]extraSource
}

func (x *extraSources) add(name string, e extraSource) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.m[name] = e
}

func (x *extraSources) remove(name string) {
	x.mu.Lock()
	delete(x.m, name)
	x.mu.Unlock()
}

func (x *extraSources) get(name string) extraSource {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.m[name]
}

// AddSource makes chunks of source name parse with p and lim (nil: no
// bound) from now on: a replay's files, whose source is not one the
// aggregator was made with. p is used only by the aggregator's goroutine
// until RemoveSource. A name the aggregator was made with is an error.
func (a *Aggregator) AddSource(name string, p *parser.Parser, lim *parser.PageLimiter) error {
	if _, ok := a.cfg.Parsers[name]; ok {
		return fmt.Errorf("aggregator: source %q exists", name)
	}
	a.extra.add(name, extraSource{p: p, lim: lim})
	return nil
}

// RemoveSource forgets a source added by AddSource. Chunks of it still
// queued are dropped with an error logged, so remove it only after its
// last chunk was read (see Committed).
func (a *Aggregator) RemoveSource(name string) {
	a.extra.remove(name)
}

// parserFor returns the parser and limiter of a source.
func (a *Aggregator) parserFor(name string) (*parser.Parser, *parser.PageLimiter) {
	if p := a.cfg.Parsers[name]; p != nil {
		return p, a.cfg.Limiters[name]
	}
	e := a.extra.get(name)
	return e.p, e.lim
}

// LastBeat returns when Run's loop last turned (a commit tick, a check of a
// full buffer, or a commit retried on a full state dir): at least once
// every maxFullBackoff (and CommitInterval) while it is not stuck. While
// Run waits for input holding nothing to commit, it has no round to make
// and LastBeat is the clock's now. It is zero before Run.
func (a *Aggregator) LastBeat() time.Time {
	if n := a.beat.Load(); n != 0 {
		if a.resting.Load() {
			return a.cfg.Clock.Now()
		}
		return time.Unix(0, n)
	}
	return time.Time{}
}

// Run reads chunks until the input channel is closed or ctx is cancelled,
// committing CommitInterval after the first chunk read since the last
// commit (holding nothing, it arms no timer: a quiet log wakes nothing
// here), and commits what it holds before it
// returns. While the buffer is full it reads nothing, so it does not see
// the input closing: only cancelling ctx stops it then. A commit that
// fails for lack of space on the state dir (StateDirFull) is retried, the
// counts held in memory and nothing more read, until it succeeds or ctx
// ends (see commitOrWait). Another commit error, or a chunk whose
// checkpoint cannot be encoded, stops it: counts not committed are read
// again from the files at the next start.
func (a *Aggregator) Run(ctx context.Context) error {
	defer close(a.stopped)
	a.beat.Store(a.cfg.Clock.Now().UnixNano())
	// The commit timer runs only while something is held: a commit is
	// due CommitInterval after the first chunk since the last one, and a
	// quiet log wakes nothing here.
	var tick <-chan time.Time
	for {
		if a.cfg.Buffer.Full() {
			if err := a.waitForSpace(ctx); err != nil || ctx.Err() != nil {
				return errors.Join(err, a.Commit())
			}
		}
		if tick == nil && !a.empty() {
			tick = a.cfg.Clock.After(a.cfg.CommitInterval)
		}
		rest := tick == nil
		a.resting.Store(rest)
		select {
		case <-ctx.Done():
			a.resting.Store(false)
			return a.Commit()
		case <-tick:
			tick = nil
			a.beat.Store(a.cfg.Clock.Now().UnixNano())
			if err := a.commitOrWait(ctx); err != nil {
				return err
			}
		case done := <-a.commit.req:
			tick = nil
			a.beat.Store(a.cfg.Clock.Now().UnixNano())
			err := a.commitOrWait(ctx)
			done <- err
			if err != nil {
				return err
			}
		case c, ok := <-a.in:
			if rest {
				a.beat.Store(a.cfg.Clock.Now().UnixNano())
				a.resting.Store(false)
			}
			if !ok {
				return a.Commit()
			}
			if err := a.Add(&c); err != nil {
				return errors.Join(err, a.Commit())
			}
			c.Release() // Add keeps nothing of c.Data
			// At MaxKeys, or once what is held would fill the buffer:
			// committed now, then (the buffer full) reading pauses, so
			// the buffer passes max_size by one chunk's counts at most,
			// not by a commit interval's.
			if len(a.counts) >= a.cfg.MaxKeys || a.heldBytes() >= a.cfg.Buffer.Room() {
				if err := a.commitOrWait(ctx); err != nil {
					return err
				}
			}
		}
	}
}

// BufferFull returns when reading paused because the buffer is full
// (buffer.Options.MaxSize: MongoDB acknowledges less than is read), or the
// zero time while it is not paused for that.
func (a *Aggregator) BufferFull() time.Time {
	return a.commit.bufferFull()
}

// Stopped is closed once Run has returned, its final commit made (or
// failed): what it had read is then in the buffer or will be read again.
func (a *Aggregator) Stopped() <-chan struct{} { return a.stopped }

// heldBytes is about how much the counts held add to the buffer's size
// once committed (buffer.EstimateCounts).
func (a *Aggregator) heldBytes() int64 {
	return buffer.EstimateCounts(len(a.counts), len(a.index.arena))
}

// waitForSpace commits, then waits until the buffer is no longer full.
func (a *Aggregator) waitForSpace(ctx context.Context) error {
	if err := a.commitOrWait(ctx); err != nil || ctx.Err() != nil {
		return err
	}
	a.log.Warn("buffer full: reading paused until MongoDB catches up", "size", a.cfg.Buffer.Size())
	a.commit.paused.Store(a.cfg.Clock.Now().UnixNano())
	defer a.commit.paused.Store(0)
	for a.cfg.Buffer.Full() {
		select {
		case <-ctx.Done():
			return nil
		case <-a.cfg.Clock.After(a.cfg.CommitInterval):
		}
		a.beat.Store(a.cfg.Clock.Now().UnixNano())
	}
	a.log.Info("buffer has room again: reading resumed", "size", a.cfg.Buffer.Size())
	return nil
}

// Add parses every line of c (or counts them as a Preparser parsed them:
// c.Ahead, which it takes over) and records c's checkpoint. A checkpoint that
// cannot be encoded is an error, returned before any line of c is counted:
// counts committed without their checkpoint would be counted again after a
// restart. Run calls it for each chunk it reads; call it directly only on
// an Aggregator that is not run (NewSummer's, a tool's).
func (a *Aggregator) Add(c *stream.Chunk) error {
	cp := c.Checkpoint
	if cp.Source == "" { // StartMarker
		a.started = true
		return nil
	}
	if c.Done {
		a.cps[cp.Key()] = nil
		if err := a.noteFinished(cp); err != nil {
			return err
		}
		a.malformed.forget(cp.File)
		return nil
	}
	p, lim := a.parserFor(cp.Source)
	if p == nil {
		// A chunk from a source without a parser is a wiring bug; keep
		// the checkpoint where it was so nothing is lost.
		a.log.Error("chunk from unknown source dropped", "source", cp.Source, "path", cp.Path)
		return nil
	}
	var b []byte
	if !c.Archive {
		var err error
		if b, err = cp.MarshalBinary(); err != nil {
			return fmt.Errorf("aggregator: chunk of %s: %w", cp.Path, err)
		}
	}
	overflowBefore, foldedBefore := lim.Overflow(), p.SitesFolded()
	var t tally
	ah, _ := c.Ahead.(*ahead)
	c.Ahead = nil
	if ah != nil {
		defer ah.Release()
	}
	if ah != nil && ah.from == p { // else parsed for a parser replaced since: parsed again
		a.addAhead(c, ah, p, lim, &t)
		a.stats.parsedAhead.Add(t.lines)
	} else {
		c.Lines(func(line []byte, end int64) {
			t.lines++
			if out := p.Parse(line, &a.hit); out != parser.OK {
				a.skip(&t, cp, end, out, line)
				return
			}
			a.count(&t, &a.hit, lim)
		})
	}
	if t.siteHits != nil {
		t.siteHits.Add(t.siteRun)
	}
	a.stats.lines.Add(t.lines)
	a.stats.hits.Add(t.hits)
	src := a.stats.sourceCounter(cp.Source)
	src.lines.Add(t.lines)
	src.hits.Add(t.hits)
	a.stats.malformed.Add(t.malformed)
	a.stats.filtered.Add(t.filtered)
	a.stats.other.Add(lim.Overflow() - overflowBefore)
	if folded := p.SitesFolded() - foldedBefore; folded > 0 {
		a.stats.sitesFolded.Add(folded)
		if !a.foldWarned[cp.Source] {
			if a.foldWarned == nil {
				a.foldWarned = map[string]bool{}
			}
			a.foldWarned[cp.Source] = true
			// The hosts are not named: they are what clients sent.
			a.log.Warn("max_sites reached: the hits of further hosts are counted under the site \"(other)\" (logtally_sites_folded_hits_total)",
				"source", cp.Source, "path", cp.Path)
		}
	}
	for i, n := range t.outcomes {
		if n > 0 {
			a.stats.outcomes[i].Add(n)
		}
	}
	a.stats.tooLong.Add(uint64(c.Skipped))
	if c.Skipped > 0 {
		a.log.Warn("lines longer than the limit skipped", "path", cp.Path, "count", c.Skipped)
	}
	if !c.Archive {
		a.cps[cp.Key()] = b
	} else {
		a.noteArchive(c)
	}
	if cp.FPLen > 0 {
		k := cp.LedgerKey()
		// A shrink lowers the stream's entry; the marks after it in the
		// same commit start from there, so they lower it too.
		lower := c.Shrunk || a.marks[k].Lower
		a.marks[k] = buffer.Mark{
			FPLen: cp.FPLen, FPSum: cp.FPSum, Offset: cp.Offset, Stream: cp.Stream, TailLen: cp.TailLen, TailSum: cp.TailSum,
			Source: cp.Source, Path: cp.Path, Lower: lower,
		}
	}
	return nil
}
