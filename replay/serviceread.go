package replay

// Replay, reading: files streamed from where the ledger says they are
// counted, copies one after another, and the wait for the acknowledgement.

import (
	"bytes"
	"cmp"
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/logtally/logtally/archive"
	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
)

// readReplay reads the files with jobs workers. Files that may be copies
// of one another (one's first bytes begin the other's) are read one after
// the other in one worker, each from where the one before left the
// ledger, so two copies are never counted at once.
//
// A damaged file (DamagedError, kept in its replayFile) does not
// stop the others: its copies go on from where it stopped.
func (s *Service) readReplay(ctx context.Context, jobs int, files []*replayFile, claims *replayClaims, feed Feed) error {
	groups := groupCopies(files)
	jobs = min(cmp.Or(jobs, runtime.GOMAXPROCS(0)), len(groups))
	work := make(chan []*replayFile)
	errc := make(chan error, jobs)
	var wg sync.WaitGroup
	for range jobs {
		wg.Go(func() {
			senders := map[string]sender{} // this reader's, by source
			for g := range work {
				var read []*replayFile // of g, before f
				for _, f := range g {
					if _, ok := senders[f.source]; !ok {
						senders[f.source] = feed.Sender(f.source)
					}
					f.before = read
					err := s.replayOne(ctx, f, claims, senders[f.source])
					if err != nil && !archive.IsDamaged(err) {
						errc <- err
						return
					}
					read = append(read, f)
				}
			}
		})
	}
	var err error
feed:
	for _, g := range groups {
		select {
		case work <- g:
		case err = <-errc:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(errc)
	for e := range errc {
		err = cmp.Or(err, e)
	}
	return err
}

// groupCopies groups files whose heads are prefixes of one another. The
// files of a group are read one after the other, each with where those
// before it ended as candidates for where it starts (replayFile.before):
// their counts may not be committed yet, so the ledger would not say.
func groupCopies(files []*replayFile) [][]*replayFile {
	var groups [][]*replayFile
next:
	for _, f := range files {
		if len(f.head) == 0 {
			continue
		}
		for i, g := range groups {
			for _, o := range g {
				if bytes.HasPrefix(f.head, o.head) || bytes.HasPrefix(o.head, f.head) {
					groups[i] = append(g, f)
					continue next
				}
			}
		}
		groups = append(groups, []*replayFile{f})
	}
	return groups
}

// sender sends a chunk to the pipeline (Feed.Sender).
type sender = func(ctx context.Context, ch stream.Chunk) error

// replayOne claims one file's stream, then reads it from where it is
// counted, sending its chunks with send.
func (s *Service) replayOne(ctx context.Context, f *replayFile, claims *replayClaims, send sender) error {
	if err := claims.take(ctx, f); err != nil {
		return err
	}
	cands, err := s.countedAt(ctx, f)
	if err != nil {
		return err
	}
	s.log.Debug("replaying file", "path", f.Path, "candidates", len(cands))
	f.stream = stream.NewID()
	from, end, err := archive.ReadAt(ctx, f.Path, f.source, f.head, archive.Start{Cands: cands, Stream: f.stream}, f.live, s.cfg.MaxLineBytes, func(ch stream.Chunk) error {
		cp := ch.Checkpoint
		if err := send(ctx, ch); err != nil {
			return err
		}
		f.last = tailer.Position{Offset: cp.Offset, TailLen: cp.TailLen, TailSum: cp.TailSum}
		return nil
	}, &f.counts)
	s.noteStart(f, cands, from)
	s.replayMu.Lock()
	defer s.replayMu.Unlock()
	f.From, f.End, f.Lines = from, end, f.counts.Lines.Load()
	if err == nil || archive.IsDamaged(err) {
		if end > from { // what this replay counted of it, to be acknowledged
			f.watch = append(f.watch, ownWatch(f, end))
		}
		claims.finish(f, f.watch)
	}
	if archive.IsDamaged(err) {
		f.Status, f.damage = StatusDamaged, err
		s.log.Error("damaged file: its whole lines before the damage are counted", "path", f.Path, "err", err)
	}
	if err != nil {
		return err
	}
	switch {
	case end <= from:
		f.Status = StatusSkipped
	case from > 0:
		f.Status = StatusResumed
	default:
		f.Status = StatusCounted
	}
	return nil
}

// countedAt returns where f's stream may be counted: the entries of this
// buffer's ledger (committed, maybe not yet acknowledged) and the
// database's (acknowledged, by any host or an earlier state dir) of the
// streams beginning like it, the checkpoint held of it (a followed
// file's, with the tailers stopped), and where the files read before it
// in its group ended. Which of them is f's own its bytes
// decide as it is read (readStreamAt, candidate). It waits while MongoDB
// cannot be reached.
func (s *Service) countedAt(ctx context.Context, f *replayFile) ([]archive.Candidate, error) {
	local, err := s.state.Counted(f.head)
	if err != nil {
		return nil, err
	}
	cands := []archive.Candidate{}
	add := func(p tailer.Position, source, path, key string) {
		cands = append(cands, archive.Candidate{Position: p, Covers: sameSource(source, f.source), Path: path, Key: key})
	}
	for _, e := range local {
		add(tailer.Position{Offset: e.Offset, TailLen: e.TailLen, TailSum: e.TailSum}, e.Source, e.Path, e.Key())
	}
	if f.live {
		h := f.held
		add(tailer.Position{Offset: h.Offset, TailLen: h.TailLen, TailSum: h.TailSum}, h.Source, h.Path, "")
	}
	for _, b := range f.before {
		if b.last.Offset > 0 {
			add(b.last, b.source, b.Path, "")
		}
	}
	keys := stream.LedgerCandidates(f.head)
	for attempt := 0; ; attempt++ {
		remote, err := s.cfg.Claims.Read(ctx, keys)
		if err == nil {
			for _, e := range remote {
				// (Its path is another host's, maybe: not read.)
				add(tailer.Position{Offset: e.Offset, TailLen: e.TailLen, TailSum: e.TailSum}, e.Source, "", "")
			}
			return cands, nil
		}
		if attempt == 0 {
			s.log.Warn("cannot read MongoDB's ledger: waiting for it before replaying", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.cfg.Clock.After(min(time.Second<<min(attempt, 5), 30*time.Second)):
		}
	}
}

// sameSource reports whether two aggregator source names (a configured
// source's, or a replay's: SourcePrefix, the source's name, then "@site"
// or "/format" when given) name the same source: an entry of it beyond a
// replayed stream's end says the stream is a shorter copy of one counted
// further (candidate.covers). A name is compared up to its first '@' or
// '/'.
func sameSource(a, b string) bool {
	base := func(n string) string {
		n = strings.TrimPrefix(n, SourcePrefix)
		if i := strings.IndexAny(n, "@/"); i >= 0 {
			n = n[:i]
		}
		return n
	}
	return base(a) == base(b)
}

// noteStart logs which rule decided where f started, and notes what f
// waits for to be acknowledged: the buffer's entry it started at (an
// earlier replay's, maybe not yet acknowledged).
func (s *Service) noteStart(f *replayFile, cands []archive.Candidate, from int64) {
	var at *archive.Candidate
	passed := false
	for i := range cands {
		c := &cands[i]
		if c.Offset == from && from > 0 {
			passed = true
			if c.Key != "" && (at == nil || at.Key == "") {
				at = c
			}
		}
	}
	for _, c := range cands {
		if c.Offset > from && c.Offset > 0 {
			s.log.Info("the ledger says a stream beginning like this file is counted further, but not this file's bytes: another file with the same first bytes, not skipped there (tail check, or beyond its end and of another source)",
				"path", f.Path, "ledger", c.Offset, "from", from)
		}
	}
	if passed {
		s.log.Info("file counted in part: starting where the ledger says, its bytes there matching", "path", f.Path, "from", from)
	}
	if at != nil {
		s.replayMu.Lock()
		f.watch = append(f.watch, ackWatch{key: at.Key, offset: from})
		s.replayMu.Unlock()
	}
}

// ackWatch is a ledger entry of this buffer that must be acknowledged at
// least to offset before a replay is done.
type ackWatch struct {
	key    string
	offset int64
}

// ownWatch is f's own stream's entry, read up to end: what it counted.
func ownWatch(f *replayFile, end int64) ackWatch {
	n := int(min(end, int64(len(f.head))))
	return ackWatch{key: stream.EntryKey(n, fnv1a.Extend(fnv1a.Offset, f.head[:n]), f.stream), offset: end}
}

// acked reports whether the buffer's ledger holds each of ws
// acknowledged to its offset.
func (s *Service) acked(ws []ackWatch) (bool, error) {
	_, a, err := s.holds(ws)
	return a, err
}

// holds reports whether the buffer's ledger holds each of ws counted to
// its offset, and acknowledged that far.
func (s *Service) holds(ws []ackWatch) (counted, acked bool, err error) {
	if len(ws) == 0 {
		return true, true, nil
	}
	keys := make([]string, len(ws))
	for i, w := range ws {
		keys[i] = w.key
	}
	got, err := s.state.Entries(keys)
	if err != nil {
		return false, false, err
	}
	acked = true
	for _, w := range ws {
		e, ok := got[w.key]
		if !ok || e.Offset < w.offset {
			return false, false, nil
		}
		if e.Acked < w.offset {
			acked = false
		}
	}
	return true, acked, nil
}

// waitAcked waits until the ledger says every file is counted as far as
// this replay read it, and the entry it started at in this buffer's
// ledger (what an earlier run, stopped or killed, committed) is
// acknowledged by MongoDB.
func (s *Service) waitAcked(ctx context.Context, files []*replayFile, feed Feed) error {
	for {
		_, acked, err := s.standing(files)
		if err != nil {
			return err
		}
		if acked {
			return nil
		}
		feed.Kick() // what is left is ours: no need to wait for the interval
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.cfg.Clock.After(replayPoll):
		}
	}
}

// standing reads the buffer's ledger: counted is true when every file is
// counted (committed) as far as this replay read it, acked when, besides,
// MongoDB has acknowledged it that far.
func (s *Service) standing(files []*replayFile) (counted, acked bool, err error) {
	acked = true
	for _, f := range files {
		if len(f.head) == 0 {
			continue
		}
		s.replayMu.Lock()
		ws := slices.Clone(f.watch)
		s.replayMu.Unlock()
		c, a, err := s.holds(ws)
		if err != nil || !c {
			return false, false, err
		}
		acked = acked && a
	}
	return true, acked, nil
}

// stopWait bounds how long a replay whose pipeline stopped reading waits
// for the aggregator's final commit before it tells what is counted.
const stopWait = 30 * time.Second

// countedAtStop tells, once the pipeline has stopped reading (a reload,
// a stop) while the replay waited for MongoDB's acknowledgement, whether
// every file is counted in the buffer: it waits for the aggregator's final
// commit (chunks it had not taken are not counted), then reads the ledger.
// A file not counted as far as it was read is marked stopped.
func (s *Service) countedAtStop(files []*replayFile, feed Feed) (bool, error) {
	select {
	case <-feed.FinalCommit():
	case <-s.cfg.Clock.After(stopWait):
		return false, nil
	}
	all := true
	for _, f := range files {
		counted, _, err := s.standing([]*replayFile{f})
		if err != nil {
			return false, err
		}
		if !counted {
			all = false
			s.replayMu.Lock()
			f.Status = StatusStopped
			s.replayMu.Unlock()
		}
	}
	return all, nil
}
