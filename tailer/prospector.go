package tailer

import (
	"context"
	"time"

	"github.com/logtally/logtally/stream"
)

// Prospector: what becomes of each followed file. A follower reads its
// file and reports what it saw (follower.readOn); the Tailer decides
// (a copy not to read, a rename to follow, a rotation to read until quiet,
// a copytruncate whose copy is adopted, a file shrunk in place, a finish)
// and moves the follower. Each follower runs in a goroutine of its own
// (follow), where these decisions run too: a file's sends stay in order.

// spawn runs fl in a goroutine Run waits for. Once ctx is cancelled it
// closes fl instead: files released by exiting followers must not be
// picked up again and read from 0. A follower whose file is closed waits
// in the queue for a slot (park.go).
func (t *Tailer) spawn(ctx context.Context, fl *follower) {
	if ctx.Err() != nil {
		t.unfollow(fl)
		return
	}
	if needsOpen(fl) {
		t.slots.enqueue(fl)
		return
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		t.follow(ctx, fl)
	}()
}

// follow runs fl until its file is finished or ctx is cancelled: what
// start decided for it first (begin), then a poll every PollInterval
// (IdlePollInterval while the file is quiet: pollWait). Between polls it
// may close its file for a queued one and hand itself to Run (park.go).
func (t *Tailer) follow(ctx context.Context, fl *follower) {
	parked := false
	defer func() {
		if !parked {
			t.unfollow(fl)
		}
	}()
	fl.quietSince = t.clk.Now()
	if err := t.begin(ctx, fl); err != nil {
		return
	}
	for {
		finished, err := t.poll(ctx, fl)
		if err != nil || finished {
			return
		}
		if t.slots.yields(fl) && t.slots.park(fl) {
			parked = true
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.clk.After(t.pollWait(fl)):
		}
	}
}

// pollWait is how long fl waits for its next poll: PollInterval, or
// IdlePollInterval once its file has been quiet that long.
func (t *Tailer) pollWait(fl *follower) time.Duration {
	if idle := t.cfg.IdlePollInterval; idle > t.cfg.PollInterval && t.clk.Now().Sub(fl.quietSince) >= idle {
		return idle
	}
	return t.cfg.PollInterval
}

// unfollow closes fl's file and forgets its claim, the claim of a copy it
// was to adopt, and the reservation of a checkpoint it was to retire.
func (t *Tailer) unfollow(fl *follower) {
	if fl.decided.adopt != nil {
		t.unfollow(fl.decided.adopt)
		fl.decided.adopt = nil
	}
	t.seen.seeFollowed(fl)
	fl.close()
	t.reg.release(fl.id, fl)
	if fl.decided.retire != nil { // never sent: keep nothing reserved
		t.reg.release(fl.decided.retire.File, nil)
	}
}

// begin carries out what start decided for fl, before it polls: its
// checkpoint sent first (resumed below the stored one), a copy's tail
// adopted, or a lost checkpoint retired (Done) once fl, its copy, has
// caught up.
func (t *Tailer) begin(ctx context.Context, fl *follower) error {
	d := &fl.decided
	if d.announce {
		d.announce = false
		if err := fl.sendCheckpoint(ctx, true); err != nil {
			return err
		}
	}
	if d.adopt != nil {
		c := d.adopt
		d.adopt = nil
		if err := t.adoptCopy(ctx, fl, c); err != nil {
			return err
		}
	}
	if d.retire != nil {
		if err := fl.catchUp(ctx); err != nil {
			return err
		}
		cp := *d.retire
		if err := t.out.send(ctx, stream.Chunk{Checkpoint: cp, Start: cp.Offset, Done: true}); err != nil {
			return err
		}
		d.retire = nil
		t.reg.release(cp.File, nil)
	}
	return nil
}

// poll has fl read what its file gained, settles what the read saw, and
// reports whether the file is finished (Done sent).
func (t *Tailer) poll(ctx context.Context, fl *follower) (bool, error) {
	if fl.decided.fresh {
		full, partial := t.reg.copyOf(fl.f, fl)
		if full {
			t.log.Info("new file is a copy of a followed file, not following it", "path", fl.path)
			return true, nil
		}
		if partial && !fl.isStolen() {
			return false, nil
		}
		if fl.startReading() {
			return true, nil
		}
		fl.decided.fresh = false
	}
	for {
		seen, err := fl.readOn(ctx)
		switch {
		case err != nil:
			return false, err
		case seen.statFailed:
			return false, nil
		case !seen.cut:
			return t.settle(ctx, fl, seen.deleted)
		}
		if err := t.cut(ctx, fl, seen.size); err != nil {
			return false, err
		}
	}
}

// settle decides about a file read to its end: deleted, it is finished
// and the globs are expanded again at once (a new file may have taken its
// place); renamed to another glob match, it is followed there; its path
// no longer naming it and no glob matching it, it is rotated: read while
// it grows, found among the rotated candidates if it is there, and
// finished once quiet for RotateGrace (unless a glob matches it again).
func (t *Tailer) settle(ctx context.Context, fl *follower, deleted bool) (bool, error) {
	if deleted {
		t.log.Info("file deleted, finished", "path", fl.path, "offset", fl.off)
		t.triggerRescan() // a new file may have taken its place
		return true, fl.finish(ctx)
	}
	d := &fl.decided
	mark := t.disc.lookMark()
	if !d.rotated && !t.disc.stillMatched(fl.id, fl.path) {
		lk := t.disc.lookSince(mark)
		if p, ok := lk.locate(fl.id); ok {
			t.log.Info("file renamed, still matched", "from", fl.path, "to", p)
			fl.setPath(p)
		} else {
			d.rotated = true
			fl.quietSince = t.clk.Now()
			if p, ok := lk.find(fl.id); ok {
				fl.setPath(p)
			}
			t.log.Info("file rotated away, reading it until quiet", "path", fl.path, "offset", fl.off)
			t.triggerRescan()
		}
	}
	if d.rotated && t.clk.Now().Sub(fl.quietSince) >= t.cfg.RotateGrace {
		if p, ok := t.disc.look().locate(fl.id); ok {
			d.rotated = false
			fl.setPath(p)
			return false, nil
		}
		t.log.Info("rotated file quiet, finished", "path", fl.path, "offset", fl.off)
		if err := fl.finish(ctx); err != nil {
			return true, err
		}
		t.watched.add(fl) // lines written to it later are read too
		return true, nil
	}
	return false, nil
}

// cut decides about a file that shrank below what fl read (to size) or
// whose first bytes changed. A copy among the rotated candidates
// (copytruncate) holds the lines written between the last read and the
// truncation: they are read from it, then the file restarts at 0
// (adoptCopy). Without a copy, a file that shrank but still begins with
// the bytes read was shrunk in place: it resumes at size
// (follower.resumeAt). Otherwise the file restarts at 0, and the lines
// written after the last read before the truncation, if any, are lost
// (ERROR).
func (t *Tailer) cut(ctx context.Context, fl *follower, size int64) error {
	old := fl.checkpoint()
	c := t.findCopy(old, fl.path)
	if c == nil && size < fl.pos && fl.headKept(size) {
		t.stats.shrunk.Add(1)
		return fl.resumeAt(ctx, size)
	}
	switch {
	case c != nil:
		t.log.Warn("file truncated, restarting at 0", "path", fl.path, "offset", old.Offset)
		t.log.Info("reading copy of truncated file", "path", c.path, "offset", old.Offset)
	case old.FPLen > 0 && t.copyExists(old, fl.path):
		// A copy shorter than what was read: the file was read between
		// the copy and the truncation; what was written after is in no
		// copy (copytruncate's own loss).
		t.log.Warn("file truncated, restarting at 0; its copy holds less than was read", "path", fl.path, "offset", old.Offset)
	default:
		t.lostFile(fl.path, old.Offset, "file truncated and no copy of it found among its rotated files, restarting it at 0")
	}
	fl.restart()
	return t.adoptCopy(ctx, fl, c)
}

// adoptCopy has the copy c (may be nil) read to its end under its own
// identity, then sends fl's checkpoint (at 0), then runs c on its own (it
// finishes like any rotated file). The order makes a restart between any
// two sends correct: the old checkpoint still finds the copy until the
// copy's own checkpoint exists, and the copy's checkpoint is deleted only
// after the old one was replaced.
func (t *Tailer) adoptCopy(ctx context.Context, fl, c *follower) error {
	if c != nil {
		if err := c.catchUp(ctx); err != nil {
			t.unfollow(c)
			return err
		}
	}
	if err := fl.sendCheckpoint(ctx, false); err != nil {
		if c != nil {
			t.unfollow(c)
		}
		return err
	}
	if c != nil {
		t.spawn(ctx, c)
	}
	return nil
}

// lostFile logs at ERROR, and counts, a followed file whose lines after
// offset may never be counted, with the replay command that counts them.
func (t *Tailer) lostFile(path string, offset int64, why string) {
	t.stats.lostFiles.Add(1)
	t.log.Error(why+": lines after the offset may never be counted. If the file was rotated (moved, renamed or compressed), count the rest with the replay command, giving it that file: the replay starts where this file was counted. Set the source's `rotated` globs to where rotation puts its files.",
		"path", path, "offset", offset,
		"replay", "logtally replay -config CONFIG -source "+t.cfg.Source+" ROTATED-FILE")
}
