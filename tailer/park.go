package tailer

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/stream"
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
//     stats its path every idle poll (slots.pollParked); once its size or
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

// slots keeps a Tailer's open files within Config.MaxOpenFiles: it counts
// them, holds the files that wait closed (parked, queued) and the
// followers that yield their slot, and opens a queued file again by
// identity. Which followers run is the prospector's (openQueued).
type slots struct {
	cfg  *Config
	clk  clock.Clock
	log  *logger
	disc *discovery // finds a file moved while closed

	open atomic.Int64 // followers' files open

	// Closed files, under mu: parked ones polled by Run, queued ones
	// waiting for a slot, and how many followers are closing theirs
	// for them.
	mu       sync.Mutex
	parked   map[stream.FileID]*follower
	queue    []*follower
	yielding int
	wake     chan struct{} // tells Run to open queued files

	// While start plans (only its goroutine): the followers it opened,
	// the oldest closed past MaxOpenFiles.
	planning    bool
	plannedOpen []*follower
}

func newSlots(cfg *Config, log *logger, disc *discovery) *slots {
	return &slots{
		cfg: cfg, clk: cfg.Clock, log: log, disc: disc,
		parked: make(map[stream.FileID]*follower),
		wake:   make(chan struct{}, 1),
	}
}

// plan has the files opened from now on counted as start's plan (see
// planOpened), anew.
func (s *slots) plan() { s.planning, s.plannedOpen = true, nil }

// planned ends start's plan.
func (s *slots) planned() { s.planning, s.plannedOpen = false, nil }

// slotFree reports whether a follower may open a file now.
func (s *slots) slotFree() bool {
	return s.open.Load() < int64(s.cfg.MaxOpenFiles)
}

// planOpened notes a file start opened while it plans: past the limit, the
// oldest file still open in the plan is closed (its follower is queued
// when start spawns it). start checks each file right after opening it,
// so only the newest is in use.
func (s *slots) planOpened(fl *follower) {
	if !s.planning {
		return
	}
	s.plannedOpen = append(s.plannedOpen, fl)
	for len(s.plannedOpen) > 1 && s.open.Load() > int64(s.cfg.MaxOpenFiles) {
		old := s.plannedOpen[0]
		s.plannedOpen[0] = nil
		s.plannedOpen = s.plannedOpen[1:]
		old.shelve()
	}
}

// overLimit closes the file of a new follower that would exceed
// MaxOpenFiles: spawn queues it.
func (s *slots) overLimit(fl *follower) {
	if s.open.Load() > int64(s.cfg.MaxOpenFiles) {
		fl.shelve()
	}
}

// needsOpen reports whether fl, or the copy it is to adopt, is closed.
func needsOpen(fl *follower) bool {
	return fl.f == nil || fl.decided.adopt != nil && fl.decided.adopt.f == nil
}

// enqueue puts a closed follower in the queue and wakes Run.
func (s *slots) enqueue(fl *follower) {
	s.mu.Lock()
	s.queue = append(s.queue, fl)
	s.mu.Unlock()
	s.wakeRun()
}

// wakeRun tells Run to open queued files.
func (s *slots) wakeRun() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// yields reports whether fl should give its slot to a queued file, and if
// so counts it as yielding: as many followers yield as files are queued.
func (s *slots) yields(fl *follower) bool {
	d := &fl.decided
	if d.fresh || d.announce || d.rotated || d.adopt != nil || d.retire != nil || fl.skipping ||
		s.clk.Now().Sub(fl.quietSince) < s.cfg.PollInterval {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) <= s.yielding {
		return false
	}
	s.yielding++
	return true
}

// park closes fl's file (it is quiet and yields) and hands fl to Run,
// which polls its path. It returns false, fl still open, when the file
// cannot be examined.
func (s *slots) park(fl *follower) bool {
	st, err := fl.f.Stat()
	s.mu.Lock()
	s.yielding--
	s.mu.Unlock()
	if err != nil {
		return false
	}
	fl.parked.size, fl.parked.mtime = st.Size(), st.ModTime().UnixNano()
	fl.pend, fl.pos = nil, fl.off // the partial line is read again
	fl.close()
	s.mu.Lock()
	s.parked[fl.id] = fl
	s.mu.Unlock()
	s.wakeRun()
	return true
}

// pollParked stats the parked files' paths and queues those that changed
// or moved. Run calls it every idle poll, and then opens what it can.
func (s *slots) pollParked() {
	s.mu.Lock()
	fls := make([]*follower, 0, len(s.parked))
	for _, fl := range s.parked {
		fls = append(fls, fl)
	}
	s.mu.Unlock()
	mark := s.disc.lookMark()
	var changed []*follower
	for _, fl := range fls {
		fi, ok, err := statRegular(fl.path)
		if err != nil {
			s.disc.logStatErr(err)
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
		s.mu.Lock()
		for _, fl := range changed {
			delete(s.parked, fl.id)
		}
		s.queue = append(s.queue, changed...)
		s.mu.Unlock()
	}
}

// next takes the first queued file, nil when none is.
func (s *slots) next() *follower {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return nil
	}
	fl := s.queue[0]
	s.queue[0] = nil
	s.queue = s.queue[1:]
	if len(s.queue) == 0 {
		s.queue = nil // let the array go
	}
	return fl
}

// putParked parks fl, closed, again: its file could not be opened.
func (s *slots) putParked(fl *follower) {
	s.mu.Lock()
	s.parked[fl.id] = fl
	s.mu.Unlock()
}

// hasParked reports whether files are parked (Run then polls them).
func (s *slots) hasParked() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.parked) > 0
}

// openQueued opens queued files while slots are free and runs their
// followers. A file moved while closed is looked for by identity; one
// found nowhere is finished (gone).
func (pr *prospector) openQueued(ctx context.Context) {
	var lk *look // one look at the files for every file that moved
	for ctx.Err() == nil && pr.slots.slotFree() {
		fl := pr.slots.next()
		if fl == nil {
			return
		}
		err := pr.slots.reopen(fl, &lk)
		if err == nil && fl.decided.adopt != nil && fl.decided.adopt.f == nil {
			err = pr.slots.reopen(fl.decided.adopt, &lk)
		}
		switch {
		case err == nil:
			pr.spawn(ctx, fl)
		case errors.Is(err, os.ErrNotExist):
			pr.gone(ctx, fl)
		default:
			// Not examinable now: try again at the next idle poll.
			pr.log.logErr("open "+fl.path, slog.LevelWarn, "cannot open file again", "err", err, "path", fl.path)
			fl.close()
			pr.slots.putParked(fl)
		}
	}
}

// reopen opens fl's file again, by identity: at the path it was last seen
// at, or where a look (*lk, made once for all the files opened together)
// finds it, a glob match or a rotated name of where it was.
func (s *slots) reopen(fl *follower, lk **look) error {
	if fl.f != nil {
		return nil
	}
	mark := fl.parked.movedMark // the poll that saw it moved, if it was parked
	if mark == 0 {
		mark = s.disc.lookMark()
	}
	fl.parked.movedMark = 0
	f, _, err := openID(s.disc.open, fl.path, fl.id)
	if errors.Is(err, os.ErrNotExist) {
		if *lk == nil || (*lk).seq <= mark {
			*lk = s.disc.lookSince(mark)
		}
		p, ok := (*lk).find(fl.id)
		if !ok {
			return err
		}
		if f, _, err = openID(s.disc.open, p, fl.id); err != nil {
			return err
		}
		s.log.Info("file moved while closed, found again", "from", fl.path, "to", p)
		fl.setPath(p)
	}
	if err != nil {
		return err
	}
	fl.f = f
	s.open.Add(1)
	return nil
}

// gone finishes a closed file that is nowhere to be found: deleted while
// it was closed. What it gained after it was closed, if anything, was
// not read.
func (pr *prospector) gone(ctx context.Context, fl *follower) {
	if c := fl.decided.adopt; c != nil {
		fl.decided.adopt = nil
		c.close()
		pr.reg.release(c.id, c)
	}
	if fl.parked.size > fl.off {
		pr.lostFile(fl.path, fl.off, "file deleted while closed (max_open_files) before its last lines were read")
	} else {
		pr.log.Info("file deleted while closed (max_open_files), finished", "path", fl.path, "offset", fl.off)
	}
	fl.finish(ctx) // only a cancelled ctx fails: then nothing matters
	pr.unfollow(fl)
}
