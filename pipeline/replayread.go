package pipeline

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

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/replay"
	"github.com/logtally/logtally/tailer"
)

// readReplay reads the files with jobs workers. Files that may be copies
// of one another (one's first bytes begin the other's) are read one after
// the other in one worker, each from where the one before left the
// ledger, so two copies are never counted at once.
//
// A damaged file (replay.DamagedError, kept in its replayFile) does not
// stop the others: its copies go on from where it stopped.
func (p *Pipeline) readReplay(ctx context.Context, jobs int, files []*replayFile, claims *replayClaims) error {
	groups := groupCopies(files)
	jobs = min(cmp.Or(jobs, runtime.GOMAXPROCS(0)), len(groups))
	work := make(chan []*replayFile)
	errc := make(chan error, jobs)
	var wg sync.WaitGroup
	for range jobs {
		wg.Go(func() {
			for g := range work {
				for _, f := range g {
					err := p.replayOne(ctx, f, claims)
					if err != nil && !replay.IsDamaged(err) {
						errc <- err
						return
					}
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

// groupCopies groups files whose heads are prefixes of one another.
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

// replayOne claims one file's stream, then reads it from where it is
// counted.
func (p *Pipeline) replayOne(ctx context.Context, f *replayFile, claims *replayClaims) error {
	if err := claims.take(ctx, f); err != nil {
		return err
	}
	counted, err := p.countedUpTo(ctx, f.head)
	if err != nil {
		return err
	}
	p.log.Debug("replaying file", "path", f.Path, "counted", counted)
	var held []tailer.Checkpoint
	if f.live {
		held = append(held, f.held)
	}
	from, _ := tailer.StreamStart(f.head, counted, held)
	end, err := replay.Stream(ctx, f.Path, f.source, f.head, from, f.live, p.maxLine(), p.chunks, &f.counts)
	p.replayMu.Lock()
	defer p.replayMu.Unlock()
	f.From, f.End, f.Lines = from, end, f.counts.Lines.Load()
	if err == nil || replay.IsDamaged(err) {
		read := int64(0) // what this replay counted of it, to be acknowledged
		if end > from {
			read = end
		}
		claims.finish(f, read)
	}
	if replay.IsDamaged(err) {
		f.Status, f.damage = ReplayDamaged, err
		p.log.Error("damaged file: its whole lines before the damage are counted", "path", f.Path, "err", err)
	}
	if err != nil {
		return err
	}
	switch {
	case end <= from:
		f.Status = ReplaySkipped
	case from > 0:
		f.Status = ReplayResumed
	default:
		f.Status = ReplayCounted
	}
	return nil
}

// maxLine is the longest line counted.
func (p *Pipeline) maxLine() int {
	for _, s := range p.cfg.Sources {
		if s.Tailer.MaxLineBytes > 0 {
			return s.Tailer.MaxLineBytes
		}
	}
	return tailer.DefaultMaxLineBytes
}

// countedLocally returns, for the tailer of source, how far this buffer's
// ledger says a stream beginning with head is counted: the tailers ask it
// about a file they find without a checkpoint, or resume from one. Only
// marks of source itself and of replays count: another source's file that
// begins with the same bytes (the ledger knows streams by their first
// bytes only) is not a copy of this one. A ledger that cannot be read says
// 0 (and the file is read from its checkpoint or start), logged.
func (p *Pipeline) countedLocally(source string) func(head []byte) int64 {
	return func(head []byte) int64 {
		got, err := p.buf.Ledger(buffer.LedgerCandidates(head, tailer.FingerprintSize))
		if err != nil {
			p.log.Error("cannot read the ledger: a file is read from its checkpoint or start", "source", source, "err", err)
			return 0
		}
		var best int64
		for _, e := range got {
			if e.Source == source || strings.HasPrefix(e.Source, replaySourcePrefix) {
				best = max(best, e.Offset)
			}
		}
		return best
	}
}

// countedUpTo returns how far a stream beginning with head is counted:
// the most of what this buffer's ledger holds (committed, maybe not yet
// acknowledged) and what the database's holds (acknowledged, by any host
// or an earlier state dir). It waits while MongoDB cannot be reached.
func (p *Pipeline) countedUpTo(ctx context.Context, head []byte) (int64, error) {
	local, err := p.buf.Counted(head, tailer.FingerprintSize)
	if err != nil {
		return 0, err
	}
	best := local.Offset
	keys := buffer.LedgerCandidates(head, tailer.FingerprintSize)
	for attempt := 0; ; attempt++ {
		remote, err := p.flush.ReadLedger(ctx, keys)
		if err == nil {
			for _, off := range remote {
				best = max(best, off)
			}
			return best, nil
		}
		if attempt == 0 {
			p.log.Warn("cannot read MongoDB's ledger: waiting for it before replaying", "err", err)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-p.cfg.Clock.After(min(time.Second<<min(attempt, 5), 30*time.Second)):
		}
	}
}

// waitAcked waits until the ledger says every file is counted as far as
// this replay read it, and everything this buffer's ledger holds of it
// (what an earlier run, stopped or killed, committed too) is acknowledged
// by MongoDB.
func (p *Pipeline) waitAcked(ctx context.Context, files []*replayFile) error {
	for {
		done := true
		for _, f := range files {
			if len(f.head) == 0 {
				continue
			}
			best, err := p.buf.Counted(f.head, tailer.FingerprintSize)
			if err != nil {
				return err
			}
			read := int64(0)
			if f.End > f.From {
				read = f.End
			}
			if best.Offset < read || best.Acked < best.Offset {
				done = false
				break
			}
		}
		if done {
			return nil
		}
		p.flush.Kick() // what is left is ours: no need to wait for the interval
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.cfg.Clock.After(replayPoll):
		}
	}
}

// replayClaimTTL is how long a replay's claim on a stream's ledger
// document in MongoDB lasts unless renewed; it is renewed every third of
// it while the replay runs. A replay that dies leaves its claims to expire.
const replayClaimTTL = time.Minute

// replayClaimPoll is how often a replay waiting for another's claim looks
// again.
const replayClaimPoll = time.Second

// replayClaims are a replay's claims on the database's ledger documents
// (flusher.ClaimLedger): a stream is read by one replay at a time, whatever
// the host or state dir; the others wait until its counts are acknowledged
// and then start where MongoDB's ledger says. Each claim is released as
// soon as its file's counts are acknowledged, not at the replay's end: two
// replays each waiting for a file the other holds would otherwise wait
// for ever.
type replayClaims struct {
	p    *Pipeline
	me   flusher.LedgerClaim // Holder, Instance, Host
	mu   sync.Mutex
	held map[string]*heldClaim // by ledger key
}

// heldClaim is a claim a replay holds.
type heldClaim struct {
	path string
	head []byte
	// done: the file is read, up to read; the claim is released once the
	// buffer's ledger says that is acknowledged.
	done bool
	read int64
}

func (p *Pipeline) newReplayClaims() *replayClaims {
	host, _ := os.Hostname()
	return &replayClaims{p: p, held: map[string]*heldClaim{},
		me: flusher.LedgerClaim{Holder: p.buf.InstanceID(), Instance: p.cfg.Instance, Host: host}}
}

// take claims f's stream, waiting while another replay holds it (f's
// waiting says so in the progress) or MongoDB cannot be reached.
func (c *replayClaims) take(ctx context.Context, f *replayFile) error {
	key := buffer.ClaimKey(f.head, tailer.FingerprintSize)
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
	p := c.p
	defer func() {
		p.replayMu.Lock()
		f.waiting = ""
		p.replayMu.Unlock()
	}()
	var lastHolder string
	for attempt := 0; ; attempt++ {
		now := p.cfg.Clock.Now()
		claim := c.me
		claim.Path, claim.Until = f.Path, now.Add(replayClaimTTL)
		cur, ok, err := p.flush.ClaimLedger(ctx, key, claim, now)
		wait := replayClaimPoll
		switch {
		case err != nil:
			if attempt == 0 {
				p.log.Warn("cannot claim the file in MongoDB's ledger: waiting for MongoDB before replaying it", "path", f.Path, "err", err)
			}
			wait = min(time.Second<<min(attempt, 5), 30*time.Second)
		case ok:
			c.mu.Lock()
			c.held[key] = &heldClaim{path: f.Path, head: f.head}
			c.mu.Unlock()
			p.log.Debug("claimed in MongoDB's ledger", "path", f.Path)
			return nil
		case cur.Holder != "" && cur.Holder != lastHolder:
			lastHolder = cur.Holder
			who := describeClaim(cur)
			p.log.Warn("file being replayed by another logtally: waiting for it, then starting where it left the file", "path", f.Path, "by", who, "until", cur.Until)
			p.replayMu.Lock()
			f.waiting = f.Path + ": being replayed by " + who
			p.replayMu.Unlock()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.cfg.Clock.After(wait):
		}
	}
}

// finish says f is read up to read: its claim goes once that is
// acknowledged.
func (c *replayClaims) finish(f *replayFile, read int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.held[buffer.ClaimKey(f.head, tailer.FingerprintSize)]; ok {
		h.done, h.read = true, max(h.read, read)
	}
}

// describeClaim names a claim's holder for people.
func describeClaim(c flusher.LedgerClaim) string {
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
	p := c.p
	renewAt := p.cfg.Clock.Now().Add(replayClaimTTL / 3)
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.cfg.Clock.After(replayPoll):
		}
		c.mu.Lock()
		var acked, renew []string
		for key, h := range c.held {
			if h.done {
				e, err := p.buf.Counted(h.head, tailer.FingerprintSize)
				if err == nil && e.Offset >= h.read && e.Acked >= e.Offset {
					acked = append(acked, key)
					continue
				}
			}
			renew = append(renew, key)
		}
		c.mu.Unlock()
		c.release(acked)
		if now := p.cfg.Clock.Now(); !now.Before(renewAt) {
			renewAt = now.Add(replayClaimTTL / 3)
			c.renew(ctx, renew)
		}
	}
}

// renew renews the claims on keys.
func (c *replayClaims) renew(ctx context.Context, keys []string) {
	p := c.p
	for _, key := range keys {
		c.mu.Lock()
		h, ok := c.held[key]
		c.mu.Unlock()
		if !ok {
			continue
		}
		now := p.cfg.Clock.Now()
		claim := c.me
		claim.Path, claim.Until = h.path, now.Add(replayClaimTTL)
		cur, ok, err := p.flush.ClaimLedger(ctx, key, claim, now)
		switch {
		case err != nil && ctx.Err() == nil:
			p.log.Warn("cannot renew the claim on a replayed file in MongoDB's ledger; retrying", "path", h.path, "err", err)
		case err == nil && !ok:
			p.log.Error("the claim on a replayed file expired and another logtally took it: both may count it", "path", h.path, "by", describeClaim(cur))
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
	p := c.p
	for _, key := range keys {
		c.mu.Lock()
		h, ok := c.held[key]
		delete(c.held, key)
		c.mu.Unlock()
		if !ok {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		p.log.Debug("releasing the claim in MongoDB's ledger", "path", h.path, "read", h.read, "done", h.done)
		if err := p.flush.ReleaseLedger(ctx, key, c.me.Holder); err != nil {
			p.log.Warn("cannot release the claim on a replayed file: it expires by itself", "path", h.path, "in", replayClaimTTL, "err", err)
		}
		cancel()
	}
}
