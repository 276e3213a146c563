package aggregate

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/stream"
)

// committer is the state of Run's commits other than what they hold: the
// commits made, and the waits on a full buffer (reading paused) or a full
// state dir (the commit retried).
type committer struct {
	commits atomic.Uint64 // Stats.Commits

	paused atomic.Int64 // Clock.Now() when reading paused on a full buffer, Unix nanoseconds; 0 while reading

	fullMu    sync.Mutex // guards fullSince and fullErr
	fullSince time.Time  // commits failing on a full state dir since, or zero
	fullErr   error      // the last of those failures
}

// bufferFull returns when reading paused on a full buffer, or the zero
// time.
func (c *committer) bufferFull() time.Time {
	if n := c.paused.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// full returns when commits began failing on a full state dir and the
// last failure, or the zero time and nil.
func (c *committer) full() (since time.Time, err error) {
	c.fullMu.Lock()
	defer c.fullMu.Unlock()
	return c.fullSince, c.fullErr
}

func (c *committer) setFull(since time.Time, err error) {
	c.fullMu.Lock()
	c.fullSince, c.fullErr = since, err
	c.fullMu.Unlock()
}

// commitOrWait commits. When the commit fails for lack of space on the
// state dir's file system (StateDirFull), it reads nothing more (the
// tailers and replays block on the channel, so what is held is bounded by
// what was read) and retries the same commit with a backoff from
// CommitInterval up to maxFullBackoff until it succeeds, returning nil, or
// ctx ends, returning nil too (Run's final commit tries once more). The
// failure is logged at ERROR once, then once every fullLogEvery, and shown
// by Full meanwhile. Any other error is returned at once.
//
// A failed bbolt commit is rolled back, counts and checkpoints together, so
// a retry applies them once; buffer.Buffer.Commit tells a commit that reached
// the file before its error (a failed sync of the meta page) as done.
func (a *Aggregator) commitOrWait(ctx context.Context) error {
	err := a.Commit()
	if err == nil || !StateDirFull(err) {
		return err
	}
	since := a.cfg.Clock.Now()
	a.commit.setFull(since, err)
	defer a.commit.setFull(time.Time{}, nil)
	path := a.cfg.Buffer.Path()
	a.log.Error("state dir full: the commit to the buffer fails; reading paused, the counts read are held in memory "+
		"and the commit retried until there is space (free space on the state dir's file system)",
		"path", path, "err", err, "pending_keys", a.sum.Held())
	logged, notLogged := since, 0
	backoff := a.cfg.CommitInterval
	next := since.Add(backoff)
	for attempt := 2; ; {
		// A turn every CommitInterval keeps LastBeat fresh (a full
		// disk is not a stuck pipeline: the watchdog must not kill
		// it); the commit is tried at the backoff's pace.
		select {
		case <-ctx.Done():
			return nil
		case <-a.cfg.Clock.After(a.cfg.CommitInterval):
		}
		now := a.cfg.Clock.Now()
		a.beat.Store(now.UnixNano())
		if now.Before(next) {
			continue
		}
		err = a.Commit()
		switch {
		case err == nil:
			a.log.Info("state dir has space again: committed, reading resumed", "path", path,
				"full_for", now.Sub(since).Round(time.Millisecond), "attempts", attempt)
			return nil
		case !StateDirFull(err):
			return err
		}
		a.commit.setFull(since, err)
		if now.Sub(logged) < fullLogEvery {
			notLogged++
		} else {
			a.log.Error("state dir still full: the commit to the buffer fails; reading paused", "path", path,
				"since", since.UTC().Format(time.RFC3339), "attempt", attempt, "attempts_not_logged", notLogged, "err", err)
			logged, notLogged = now, 0
		}
		attempt++
		backoff = min(2*backoff, max(maxFullBackoff, a.cfg.CommitInterval))
		next = now.Add(backoff)
	}
}

// Barrier returns a barrier chunk (stream.Chunk.Barrier) and the channel
// its answer comes on. Sent on an Aggregator's input, it is read in order,
// after every chunk sent before it: Run then commits what it holds, as at
// its commit tick (a full state dir retried: see commitOrWait), and sends
// nil on done once those chunks are in the buffer, or the commit's error.
// With Config.HoldUntilStart, before StartMarker, it commits nothing and
// answers nil. done has room for the answer: Run never waits for the
// sender, who may have stopped waiting. Before a seal, the pipeline has
// one read so that the sealed batch holds every line read so far: a hit
// then waits about one flush interval to be sealed, not one flush
// interval plus one commit interval.
func Barrier() (c stream.Chunk, done <-chan error) {
	ch := make(chan error, 1)
	return stream.Chunk{Barrier: func(err error) { ch <- err }}, ch
}

// Commit writes the sums and positions the Summer holds, in one
// transaction. Run commits by itself; Commit is for an Aggregator that is
// not run (tools, tests), called from the goroutine that calls Add.
func (a *Aggregator) Commit() error {
	s := a.sum
	if s.empty() {
		return nil
	}
	if a.cfg.HoldUntilStart && !a.started {
		return nil // held back until every start chunk is added
	}
	a.sorted = s.sortedCounts(a.sorted[:0])
	err := a.cfg.Buffer.Commit(buffer.Commit{
		Counts: a.sorted, Checkpoints: s.at.cps, Marks: s.at.heldMarks(), Finished: s.at.finished, Archives: s.at.archiveRanges(), KeepLastCommit: a.cfg.KeepLastCommit,
		Visitors: s.Sketches(), Dims: s.sortedDims(),
	})
	if err != nil {
		return fmt.Errorf("aggregator: %w", err)
	}
	a.commit.commits.Add(1)
	s.committed()
	return nil
}
