package replay

// Replay, reading: files streamed from where the ledger says they are
// counted, copies one after another, and the wait for the acknowledgement.

import (
	"bytes"
	"cmp"
	"context"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/logtally/logtally/archive"
	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/ledger"
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
func (s *Service) readReplay(ctx context.Context, jobs int, files []*replayFile, claims *replayClaims) error {
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
						senders[f.source] = s.p.Sender(f.source)
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

// sender sends a chunk to the pipeline (Target.Sender).
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
	local, err := s.p.Counted(f.head)
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
		remote, err := s.claims.Read(ctx, keys)
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
	got, err := s.p.Entries(keys)
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
func (s *Service) waitAcked(ctx context.Context, files []*replayFile) error {
	for {
		_, acked, err := s.standing(files)
		if err != nil {
			return err
		}
		if acked {
			return nil
		}
		s.p.Kick() // what is left is ours: no need to wait for the interval
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
func (s *Service) countedAtStop(files []*replayFile) (bool, error) {
	select {
	case <-s.p.FinalCommit():
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

// replayClaimTTL is how long a replay's claim on a stream's ledger
// document in MongoDB lasts unless renewed; it is renewed every third of
// it while the replay runs. A replay that dies leaves its claims to expire.
const replayClaimTTL = time.Minute

// replayClaimPoll is how often a replay waiting for another's claim looks
// again.
const replayClaimPoll = time.Second

// replayClaims are a replay's claims on the database's ledger documents
// (ledger.Store.Claim): a stream is read by one replay at a time, whatever
// the host or state dir; the others wait until its counts are acknowledged
// and then start where MongoDB's ledger says. Each claim is released as
// soon as its file's counts are acknowledged, not at the replay's end: two
// replays each waiting for a file the other holds would otherwise wait
// for ever.
type replayClaims struct {
	s    *Service
	me   ledger.Claim // Holder, Instance, Host
	mu   sync.Mutex
	held map[string]*heldClaim // by ledger key
}

// heldClaim is a claim a replay holds.
type heldClaim struct {
	path string
	head []byte
	// done: the file is read; the claim is released once the buffer's
	// ledger says watch is acknowledged (what it read, and the entry it
	// started at).
	done  bool
	watch []ackWatch
}

func (s *Service) newReplayClaims() *replayClaims {
	host, _ := os.Hostname()
	return &replayClaims{s: s, held: map[string]*heldClaim{},
		me: ledger.Claim{Holder: s.cfg.Holder, Instance: s.cfg.Instance, Host: host}}
}

// take claims f's stream, waiting while another replay holds it (f's
// waiting says so in the progress) or MongoDB cannot be reached.
func (c *replayClaims) take(ctx context.Context, f *replayFile) error {
	key := stream.ClaimKey(f.head)
	if key == "" {
		return nil
	}
	c.mu.Lock()
	if h, ok := c.held[key]; ok { // a copy of a file this replay read
		h.done = false
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	s := c.s
	defer func() {
		s.replayMu.Lock()
		f.waiting = ""
		s.replayMu.Unlock()
	}()
	var lastHolder string
	for attempt := 0; ; attempt++ {
		now := s.cfg.Clock.Now()
		claim := c.me
		claim.Path, claim.Until = f.Path, now.Add(replayClaimTTL)
		cur, ok, err := s.claims.Claim(ctx, key, claim, now)
		wait := replayClaimPoll
		switch {
		case err != nil:
			if attempt == 0 {
				s.log.Warn("cannot claim the file in MongoDB's ledger: waiting for MongoDB before replaying it", "path", f.Path, "err", err)
			}
			wait = min(time.Second<<min(attempt, 5), 30*time.Second)
		case ok:
			c.mu.Lock()
			c.held[key] = &heldClaim{path: f.Path, head: f.head}
			c.mu.Unlock()
			s.log.Debug("claimed in MongoDB's ledger", "path", f.Path)
			return nil
		case cur.Holder != "" && cur.Holder != lastHolder:
			lastHolder = cur.Holder
			who := describeClaim(cur)
			s.log.Warn("file being replayed by another logtally: waiting for it, then starting where it left the file", "path", f.Path, "by", who, "until", cur.Until)
			s.replayMu.Lock()
			f.waiting = f.Path + ": being replayed by " + who
			s.replayMu.Unlock()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.cfg.Clock.After(wait):
		}
	}
}

// finish says f is read: its claim goes once watch is acknowledged.
func (c *replayClaims) finish(f *replayFile, watch []ackWatch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.held[stream.ClaimKey(f.head)]; ok {
		h.done, h.watch = true, append(h.watch, watch...)
	}
}

// describeClaim names a claim's holder for people.
func describeClaim(c ledger.Claim) string {
	who := cmp.Or(c.Instance, "instance "+c.Holder)
	if c.Host != "" {
		who += " on " + c.Host
	}
	if c.Path != "" {
		who += " (" + c.Path + ")"
	}
	return who
}

// run releases the claims of files read and acknowledged, and renews the
// others every third of replayClaimTTL, until ctx ends.
func (c *replayClaims) run(ctx context.Context) {
	s := c.s
	renewAt := s.cfg.Clock.Now().Add(replayClaimTTL / 3)
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.cfg.Clock.After(replayPoll):
		}
		c.mu.Lock()
		var acked, renew []string
		for key, h := range c.held {
			if h.done {
				if ok, err := s.acked(h.watch); err == nil && ok {
					acked = append(acked, key)
					continue
				}
			}
			renew = append(renew, key)
		}
		c.mu.Unlock()
		c.release(acked)
		if now := s.cfg.Clock.Now(); !now.Before(renewAt) {
			renewAt = now.Add(replayClaimTTL / 3)
			c.renew(ctx, renew)
		}
	}
}

// renew renews the claims on keys.
func (c *replayClaims) renew(ctx context.Context, keys []string) {
	s := c.s
	for _, key := range keys {
		c.mu.Lock()
		h, ok := c.held[key]
		c.mu.Unlock()
		if !ok {
			continue
		}
		now := s.cfg.Clock.Now()
		claim := c.me
		claim.Path, claim.Until = h.path, now.Add(replayClaimTTL)
		cur, ok, err := s.claims.Claim(ctx, key, claim, now)
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Warn("cannot renew the claim on a replayed file in MongoDB's ledger; retrying", "path", h.path, "err", err)
		case err == nil && !ok:
			s.log.Error("the claim on a replayed file expired and another logtally took it: both may count it", "path", h.path, "by", describeClaim(cur))
		}
	}
}

// releaseAll drops every claim held.
func (c *replayClaims) releaseAll() {
	c.mu.Lock()
	keys := slices.Collect(maps.Keys(c.held))
	c.mu.Unlock()
	c.release(keys)
}

// release drops the claims on keys: once their counts are acknowledged,
// MongoDB's ledger says how far they go.
func (c *replayClaims) release(keys []string) {
	s := c.s
	for _, key := range keys {
		c.mu.Lock()
		h, ok := c.held[key]
		delete(c.held, key)
		c.mu.Unlock()
		if !ok {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s.log.Debug("releasing the claim in MongoDB's ledger", "path", h.path, "done", h.done)
		if err := s.claims.Release(ctx, key, c.me.Holder); err != nil {
			s.log.Warn("cannot release the claim on a replayed file: it expires by itself", "path", h.path, "in", replayClaimTTL, "err", err)
		}
		cancel()
	}
}
