package tailer

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/stream"
)

// Prospector: what becomes of each followed file. A follower reads its
// file and reports what it saw (follower.readOn); the prospector decides
// (a copy not to read, a rename to follow, a rotation to read until quiet,
// a copytruncate whose copy is adopted, a file shrunk in place, a finish)
// and moves the follower. Each follower runs in a goroutine of its own
// (follow), where these decisions run too: a file's sends stay in order.

// prospector decides which files are read and what becomes of each: it
// opens followers (a new glob match, a rotated generation no look saw, a
// finished rotated file written to again, a copy a copytruncate left),
// runs each in a goroutine of the Tailer's, and settles what their polls
// see. The files it finds come from discovery, the claims from the
// registry, the open files' slots from slots.
type prospector struct {
	cfg    *Config
	fcfg   followerConfig // what its followers need of cfg
	log    *logger
	clk    clock.Clock
	out    *output
	stats  *tailerStats
	ledger ledgerView // where the ledger says a file is counted

	reg     *registry
	disc    *discovery
	slots   *slots
	seen    *seenFiles // what the looks saw (generations.go)
	watched *watchList // finished rotated files watched (rewatch.go)

	wg        *sync.WaitGroup // the Tailer's: Run waits for the followers
	rescanNow chan<- struct{} // asks Run to look at the files now
}

// followNew follows the glob matches of lk that nobody follows, from 0
// (or where the ledger says), unless they begin like a followed file (a
// copy of it). Only a cancelled ctx is an error.
func (pr *prospector) followNew(ctx context.Context, lk *look) error {
	for _, fi := range pr.reg.unclaimed(lk.matches) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if full, _ := pr.disc.isCopyOfFollowed(fi.path); full {
			pr.log.logErr("copy "+fi.path, slog.LevelInfo, "not following a copy of a followed file", "path", fi.path)
			continue
		}
		fl, err := pr.openFollower(fi.path, fi.id, stream.Checkpoint{Source: pr.cfg.Source})
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				pr.log.logErr("open "+fi.path, slog.LevelWarn, "cannot open file", "err", err, "path", fi.path)
			}
			continue
		}
		fl.setFresh()
		if !pr.reg.claim(fl) {
			fl.close()
			continue
		}
		pr.log.Info("following new file", "path", fi.path)
		pr.slots.overLimit(fl)
		pr.spawn(ctx, fl)
	}
	return nil
}

// spawn runs fl in a goroutine Run waits for. Once ctx is cancelled it
// closes fl instead: files released by exiting followers must not be
// picked up again and read from 0. A follower whose file is closed waits
// in the queue for a slot (park.go).
func (pr *prospector) spawn(ctx context.Context, fl *follower) {
	if ctx.Err() != nil {
		pr.unfollow(fl)
		return
	}
	if needsOpen(fl) {
		pr.slots.enqueue(fl)
		return
	}
	pr.wg.Add(1)
	go func() {
		defer pr.wg.Done()
		pr.follow(ctx, fl)
	}()
}

// follow runs fl until its file is finished or ctx is cancelled: what
// start decided for it first (begin), then a poll every PollInterval
// (IdlePollInterval while the file is quiet: pollWait). Between polls it
// may close its file for a queued one and hand itself to Run (park.go).
func (pr *prospector) follow(ctx context.Context, fl *follower) {
	parked := false
	defer func() {
		if !parked {
			pr.unfollow(fl)
		}
	}()
	fl.quietSince = pr.clk.Now()
	if err := pr.begin(ctx, fl); err != nil {
		return
	}
	for {
		finished, err := pr.poll(ctx, fl)
		if err != nil || finished {
			return
		}
		if pr.slots.yields(fl) && pr.slots.park(fl) {
			parked = true
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-pr.clk.After(pr.pollWait(fl)):
		}
	}
}

// pollWait is how long fl waits for its next poll: PollInterval, or
// IdlePollInterval once its file has been quiet that long.
func (pr *prospector) pollWait(fl *follower) time.Duration {
	if idle := pr.cfg.IdlePollInterval; idle > pr.cfg.PollInterval && pr.clk.Now().Sub(fl.quietSince) >= idle {
		return idle
	}
	return pr.cfg.PollInterval
}

// unfollow closes fl's file and forgets its claim, the claim of a copy it
// was to adopt, and the reservation of a checkpoint it was to retire.
func (pr *prospector) unfollow(fl *follower) {
	if fl.decided.adopt != nil {
		pr.unfollow(fl.decided.adopt)
		fl.decided.adopt = nil
	}
	pr.seen.seeFollowed(fl)
	fl.close()
	pr.reg.release(fl.id, fl)
	if fl.decided.retire != nil { // never sent: keep nothing reserved
		pr.reg.release(fl.decided.retire.File, nil)
	}
}

// begin carries out what start decided for fl, before it polls: its
// checkpoint sent first (resumed below the stored one), a copy's tail
// adopted, or a lost checkpoint retired (Done) once fl, its copy, has
// caught up.
func (pr *prospector) begin(ctx context.Context, fl *follower) error {
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
		if err := pr.adoptCopy(ctx, fl, c); err != nil {
			return err
		}
	}
	if d.retire != nil {
		if err := fl.catchUp(ctx); err != nil {
			return err
		}
		cp := *d.retire
		if err := pr.out.send(ctx, stream.Chunk{Checkpoint: cp, Start: cp.Offset, Done: true}); err != nil {
			return err
		}
		d.retire = nil
		pr.reg.release(cp.File, nil)
	}
	return nil
}

// poll has fl read what its file gained, settles what the read saw, and
// reports whether the file is finished (Done sent).
func (pr *prospector) poll(ctx context.Context, fl *follower) (bool, error) {
	if fl.decided.fresh {
		full, partial := pr.reg.copyOf(fl.f, fl)
		if full {
			pr.log.Info("new file is a copy of a followed file, not following it", "path", fl.path)
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
			return pr.settle(ctx, fl, seen.deleted)
		}
		if err := pr.cut(ctx, fl, seen.size); err != nil {
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
func (pr *prospector) settle(ctx context.Context, fl *follower, deleted bool) (bool, error) {
	if deleted {
		pr.log.Info("file deleted, finished", "path", fl.path, "offset", fl.off)
		pr.triggerRescan() // a new file may have taken its place
		return true, fl.finish(ctx)
	}
	d := &fl.decided
	mark := pr.disc.lookMark()
	if !d.rotated && !pr.disc.stillMatched(fl.id, fl.path) {
		lk := pr.disc.lookSince(mark)
		if p, ok := lk.locate(fl.id); ok {
			pr.log.Info("file renamed, still matched", "from", fl.path, "to", p)
			fl.setPath(p)
		} else {
			d.rotated = true
			fl.quietSince = pr.clk.Now()
			if p, ok := lk.find(fl.id); ok {
				fl.setPath(p)
			}
			pr.log.Info("file rotated away, reading it until quiet", "path", fl.path, "offset", fl.off)
			pr.triggerRescan()
		}
	}
	if d.rotated && pr.clk.Now().Sub(fl.quietSince) >= pr.cfg.RotateGrace {
		if p, ok := pr.disc.look().locate(fl.id); ok {
			d.rotated = false
			fl.setPath(p)
			return false, nil
		}
		pr.log.Info("rotated file quiet, finished", "path", fl.path, "offset", fl.off)
		if err := fl.finish(ctx); err != nil {
			return true, err
		}
		pr.watched.add(fl) // lines written to it later are read too
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
func (pr *prospector) cut(ctx context.Context, fl *follower, size int64) error {
	old := fl.checkpoint()
	c := pr.findCopy(old, fl.path)
	if c == nil && size < fl.pos && fl.headKept(size) {
		pr.stats.shrunk.Add(1)
		return fl.resumeAt(ctx, size)
	}
	switch {
	case c != nil:
		pr.log.Warn("file truncated, restarting at 0", "path", fl.path, "offset", old.Offset)
		pr.log.Info("reading copy of truncated file", "path", c.path, "offset", old.Offset)
	case old.FPLen > 0 && pr.copyExists(old, fl.path):
		// A copy shorter than what was read: the file was read between
		// the copy and the truncation; what was written after is in no
		// copy (copytruncate's own loss).
		pr.log.Warn("file truncated, restarting at 0; its copy holds less than was read", "path", fl.path, "offset", old.Offset)
	default:
		pr.lostFile(fl.path, old.Offset, "file truncated and no copy of it found among its rotated files, restarting it at 0")
	}
	fl.restart()
	return pr.adoptCopy(ctx, fl, c)
}

// adoptCopy has the copy c (may be nil) read to its end under its own
// identity, then sends fl's checkpoint (at 0), then runs c on its own (it
// finishes like any rotated file). The order makes a restart between any
// two sends correct: the old checkpoint still finds the copy until the
// copy's own checkpoint exists, and the copy's checkpoint is deleted only
// after the old one was replaced.
func (pr *prospector) adoptCopy(ctx context.Context, fl, c *follower) error {
	if c != nil {
		if err := c.catchUp(ctx); err != nil {
			pr.unfollow(c)
			return err
		}
	}
	if err := fl.sendCheckpoint(ctx, false); err != nil {
		if c != nil {
			pr.unfollow(c)
		}
		return err
	}
	if c != nil {
		pr.spawn(ctx, c)
	}
	return nil
}

// lostFile logs at ERROR, and counts, a followed file whose lines after
// offset may never be counted, with the replay command that counts them.
func (pr *prospector) lostFile(path string, offset int64, why string) {
	pr.stats.lostFiles.Add(1)
	pr.log.Error(why+": lines after the offset may never be counted. If the file was rotated (moved, renamed or compressed), count the rest with the replay command, giving it that file: the replay starts where this file was counted. Set the source's `rotated` globs to where rotation puts its files.",
		"path", path, "offset", offset,
		"replay", "logtally replay -config CONFIG -source "+pr.cfg.Source+" ROTATED-FILE")
}

// triggerRescan asks Run to re-expand the globs now.
func (pr *prospector) triggerRescan() {
	select {
	case pr.rescanNow <- struct{}{}:
	default:
	}
}
