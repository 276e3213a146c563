package aggregate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
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
	// Parsers maps a source name (stream.Checkpoint.Source) to its
	// parser; each source is bounded as its parser's Config says
	// (MaxSites, Page.MaxPagesPerMinute: see Summer).
	Parsers map[string]*parser.Parser
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

// Aggregator sums the chunks of its input with a Summer and commits what
// it holds to the buffer, with the positions of the chunks it came from,
// in one transaction: CommitInterval after the first chunk since the last
// commit, at once when it would fill the buffer or holds MaxKeys sums.
type Aggregator struct {
	cfg Config
	in  <-chan stream.Chunk
	log *slog.Logger
	sum *Summer

	sorted  []buffer.Count // a commit's counts (sortedCounts), kept for the next
	started bool           // StartMarker read
	beat    atomic.Int64   // Clock.Now() of the last loop turn, Unix nanoseconds
	resting atomic.Bool    // Run waits for input holding nothing, no commit due (LastBeat is now)

	// stopped is closed when Run returns.
	stopped chan struct{}
	commit  committer // the commits made, and the waits on a full buffer or state dir (commit.go)
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
	sum := NewSummer(cfg.Parsers, cfg.Clock, log)
	sum.SetVisitors(cfg.Visitors)
	return &Aggregator{
		cfg:     cfg,
		in:      in,
		log:     log.With("component", "aggregator"),
		sum:     sum,
		stopped: make(chan struct{}),
	}, nil
}

// HasSource reports whether chunks of source name are parsed: a source
// the aggregator was made with, or one added by AddSource.
func (a *Aggregator) HasSource(name string) bool { return a.sum.HasSource(name) }

// AddSource makes chunks of source name parse with p, bounded as p's
// Config says, from now on: a replay's files, whose source is not one the
// aggregator was made with. p is used only by the aggregator's goroutine
// until RemoveSource. A name the aggregator was made with is an error.
func (a *Aggregator) AddSource(name string, p *parser.Parser) error {
	return a.sum.AddSource(name, p)
}

// RemoveSource forgets a source added by AddSource. Chunks of it still
// queued are dropped with an error logged, so remove it only after its
// last chunk was read (see Stopped).
func (a *Aggregator) RemoveSource(name string) { a.sum.RemoveSource(name) }

// Preparser returns a Preparser of source's chunks for the aggregator's
// Summer (see Summer.Preparser).
func (a *Aggregator) Preparser(source string) *Preparser { return a.sum.Preparser(source) }

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
		if tick == nil && !a.sum.empty() {
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
		case c, ok := <-a.in:
			if rest {
				a.beat.Store(a.cfg.Clock.Now().UnixNano())
				a.resting.Store(false)
			}
			if !ok {
				return a.Commit()
			}
			if c.Barrier != nil { // every chunk before it is added: commit them
				tick = nil
				a.beat.Store(a.cfg.Clock.Now().UnixNano())
				err := a.commitOrWait(ctx)
				c.Barrier(err)
				if err != nil {
					return err
				}
				continue
			}
			if err := a.Add(&c); err != nil {
				return errors.Join(err, a.Commit())
			}
			c.Release() // Add keeps nothing of c.Data
			// At MaxKeys, or once what is held would fill the buffer:
			// committed now, then (the buffer full) reading pauses, so
			// the buffer passes max_size by one chunk's counts at most,
			// not by a commit interval's.
			if a.sum.Held() >= a.cfg.MaxKeys || a.sum.heldBytes() >= a.cfg.Buffer.Room() {
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

// Add adds c to the sums held (Summer.Add), notes StartMarker, and
// commits at a barrier (Barrier: its answer is Commit's error). Run calls
// it for each chunk it reads but barriers; call it directly only on an
// Aggregator that is not run (a tool's, a test's).
func (a *Aggregator) Add(c *stream.Chunk) error {
	switch {
	case c.Barrier != nil:
		err := a.Commit()
		c.Barrier(err)
		return err
	case c.Checkpoint.Source == "": // StartMarker
		a.started = true
		return nil
	}
	return a.sum.Add(c)
}
