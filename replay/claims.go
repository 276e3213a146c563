package replay

// Replay, claims: a stream is read by one replay at a time, whatever the
// host or state dir, through claims on MongoDB's ledger documents.

import (
	"cmp"
	"context"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/logtally/logtally/ledger"
	"github.com/logtally/logtally/stream"
)

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
		cur, ok, err := s.cfg.Claims.Claim(ctx, key, claim, now)
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
		cur, ok, err := s.cfg.Claims.Claim(ctx, key, claim, now)
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
		if err := s.cfg.Claims.Release(ctx, key, c.me.Holder); err != nil {
			s.log.Warn("cannot release the claim on a replayed file: it expires by itself", "path", h.path, "in", replayClaimTTL, "err", err)
		}
		cancel()
	}
}
