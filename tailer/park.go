package tailer

import (
	"context"
	"errors"
	"log/slog"
	"os"
)

// Open files: a Tailer keeps at most Config.MaxOpenFiles of its files open
// (issue 29: 10,000 matches held 10,000 descriptors and as many
// goroutines). A follower whose file is open runs in a goroutine of its
// own (prospector.go). Past the limit, files wait closed, without a
// goroutine, in one of two states:
//
//   - queued: waiting for a slot, first come first opened: a file found
//     (at start, by a rescan) while every slot is taken, or a parked file
//     that changed;
//   - parked: a quiet file closed to give its slot to a queued one. Run
//     stats its path every idle poll (parkedPoll); once its size or
//     modification time changes, or its path no longer names it, it is
//     queued.
//
// A running follower gives its slot up (yields) when a file is queued and
// its own file read nothing at its last poll, has no decision pending
// (a fresh file, a rotated one, a copy to adopt, a checkpoint to retire
// or announce) and is not skipping an overlong line. It forgets the
// partial line it holds (it reads it again) and parks. A queued file is
// opened again by identity: at the path it was last seen at, or else,
// moved meanwhile, wherever a look finds its device and inode (a glob
// match, or among the rotated names); then its follower checks the
// fingerprint at its first poll, as at every poll. A file found nowhere
// was deleted while closed: it is finished, and lines it gained after it
// was closed, if any, were not read (an ERROR when its size had grown).
// Files opened for a moment (to compare first bytes, to look for a copy)
// are not counted, nor is a copy being adopted: the limit is exceeded by
// those few.

// DefaultMaxOpenFiles is the most files a Tailer keeps open when
// Config.MaxOpenFiles is zero.
const DefaultMaxOpenFiles = 1024

// slotFree reports whether a follower may open a file now.
func (t *Tailer) slotFree() bool {
	return t.fcfg.open.Load() < int64(t.cfg.MaxOpenFiles)
}

// planOpened notes a file start opened while it plans: past the limit, the
// oldest file still open in the plan is closed (its follower is queued
// when start spawns it). start checks each file right after opening it,
// so only the newest is in use.
func (t *Tailer) planOpened(fl *follower) {
	if !t.planning {
		return
	}
	t.plannedOpen = append(t.plannedOpen, fl)
	for len(t.plannedOpen) > 1 && t.fcfg.open.Load() > int64(t.cfg.MaxOpenFiles) {
		old := t.plannedOpen[0]
		t.plannedOpen[0] = nil
		t.plannedOpen = t.plannedOpen[1:]
		old.shelve()
	}
}

// overLimit closes the file of a new follower that would exceed
// MaxOpenFiles: spawn queues it.
func (t *Tailer) overLimit(fl *follower) {
	if t.fcfg.open.Load() > int64(t.cfg.MaxOpenFiles) {
		fl.shelve()
	}
}

// needsOpen reports whether fl, or the copy it is to adopt, is closed.
func needsOpen(fl *follower) bool {
	return fl.f == nil || fl.decided.adopt != nil && fl.decided.adopt.f == nil
}

// enqueue puts a closed follower in the queue and wakes Run.
func (t *Tailer) enqueue(fl *follower) {
	t.mu.Lock()
	t.queue = append(t.queue, fl)
	t.mu.Unlock()
	t.wakeRun()
}

// wakeRun tells Run to open queued files.
func (t *Tailer) wakeRun() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// yields reports whether fl should give its slot to a queued file, and if
// so counts it as yielding: as many followers yield as files are queued.
func (t *Tailer) yields(fl *follower) bool {
	d := &fl.decided
	if d.fresh || d.announce || d.rotated || d.adopt != nil || d.retire != nil || fl.skipping ||
		t.clk.Now().Sub(fl.quietSince) < t.cfg.PollInterval {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.queue) <= t.yielding {
		return false
	}
	t.yielding++
	return true
}

// park closes fl's file (it is quiet and yields) and hands fl to Run,
// which polls its path. It returns false, fl still open, when the file
// cannot be examined.
func (t *Tailer) park(fl *follower) bool {
	st, err := fl.f.Stat()
	t.mu.Lock()
	t.yielding--
	t.mu.Unlock()
	if err != nil {
		return false
	}
	fl.parked.size, fl.parked.mtime = st.Size(), st.ModTime().UnixNano()
	fl.pend, fl.pos = nil, fl.off // the partial line is read again
	fl.close()
	t.mu.Lock()
	t.parked[fl.id] = fl
	t.mu.Unlock()
	t.wakeRun()
	return true
}

// parkedPoll stats the parked files' paths and queues those that changed
// or moved, then opens what it can. Run calls it every idle poll.
func (t *Tailer) parkedPoll(ctx context.Context) {
	t.mu.Lock()
	fls := make([]*follower, 0, len(t.parked))
	for _, fl := range t.parked {
		fls = append(fls, fl)
	}
	t.mu.Unlock()
	mark := t.disc.lookMark()
	var changed []*follower
	for _, fl := range fls {
		fi, ok, err := statRegular(fl.path)
		if err != nil {
			t.disc.logStatErr(err)
			continue
		}
		if ok && fi.id == fl.id && fi.size == fl.parked.size && fi.mtime.UnixNano() == fl.parked.mtime {
			continue
		}
		fl.parked.movedMark = mark
		changed = append(changed, fl)
	}
	if len(changed) > 0 {
		// Oldest changes first: the queue is served in order.
		t.mu.Lock()
		for _, fl := range changed {
			delete(t.parked, fl.id)
		}
		t.queue = append(t.queue, changed...)
		t.mu.Unlock()
	}
	t.openQueued(ctx)
}

// hasParked reports whether files are parked (Run then polls them).
func (t *Tailer) hasParked() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.parked) > 0
}

// openQueued opens queued files while slots are free and runs their
// followers. A file moved while closed is looked for by identity; one
// found nowhere is finished (gone).
func (t *Tailer) openQueued(ctx context.Context) {
	var lk *look // one look at the files for every file that moved
	for ctx.Err() == nil && t.slotFree() {
		t.mu.Lock()
		if len(t.queue) == 0 {
			t.mu.Unlock()
			return
		}
		fl := t.queue[0]
		t.queue[0] = nil
		t.queue = t.queue[1:]
		if len(t.queue) == 0 {
			t.queue = nil // let the array go
		}
		t.mu.Unlock()
		err := t.reopen(fl, &lk)
		if err == nil && fl.decided.adopt != nil && fl.decided.adopt.f == nil {
			err = t.reopen(fl.decided.adopt, &lk)
		}
		switch {
		case err == nil:
			t.spawn(ctx, fl)
		case errors.Is(err, os.ErrNotExist):
			t.gone(ctx, fl)
		default:
			// Not examinable now: try again at the next idle poll.
			t.log.logErr("open "+fl.path, slog.LevelWarn, "cannot open file again", "err", err, "path", fl.path)
			fl.close()
			t.mu.Lock()
			t.parked[fl.id] = fl
			t.mu.Unlock()
		}
	}
}

// reopen opens fl's file again, by identity: at the path it was last seen
// at, or where a look (*lk, made once for all the files opened together)
// finds it, a glob match or a rotated name of where it was.
func (t *Tailer) reopen(fl *follower, lk **look) error {
	if fl.f != nil {
		return nil
	}
	mark := fl.parked.movedMark // the poll that saw it moved, if it was parked
	if mark == 0 {
		mark = t.disc.lookMark()
	}
	fl.parked.movedMark = 0
	f, _, err := openID(t.disc.open, fl.path, fl.id)
	if errors.Is(err, os.ErrNotExist) {
		if *lk == nil || (*lk).seq <= mark {
			*lk = t.disc.lookSince(mark)
		}
		p, ok := (*lk).find(fl.id)
		if !ok {
			return err
		}
		if f, _, err = openID(t.disc.open, p, fl.id); err != nil {
			return err
		}
		t.log.Info("file moved while closed, found again", "from", fl.path, "to", p)
		fl.setPath(p)
	}
	if err != nil {
		return err
	}
	fl.f = f
	t.fcfg.open.Add(1)
	return nil
}

// gone finishes a closed file that is nowhere to be found: deleted while
// it was closed. What it gained after it was closed, if anything, was
// not read.
func (t *Tailer) gone(ctx context.Context, fl *follower) {
	if c := fl.decided.adopt; c != nil {
		fl.decided.adopt = nil
		c.close()
		t.reg.release(c.id, c)
	}
	if fl.parked.size > fl.off {
		t.lostFile(fl.path, fl.off, "file deleted while closed (max_open_files) before its last lines were read")
	} else {
		t.log.Info("file deleted while closed (max_open_files), finished", "path", fl.path, "offset", fl.off)
	}
	fl.finish(ctx) // only a cancelled ctx fails: then nothing matters
	t.unfollow(fl)
}
