package tailer

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/fnv1a"
)

// registry is what a follower asks of the Tailer that runs it: the files
// other followers hold, where its own file went, and the copies it adopts.
type registry interface {
	// heads returns the leading bytes of every followed file but skip's.
	heads(skip FileID) [][]byte
	// stillMatched reports whether path still names the file id and is a
	// glob match.
	stillMatched(id FileID, path string) bool
	// locate returns the glob match that is the file id, if any.
	locate(id FileID) (string, bool)
	// findRenamed looks for the file id among the rotated candidates of
	// path.
	findRenamed(id FileID, path string) (string, bool)
	// findCopy claims a copy of the file old describes among the rotated
	// candidates of path and returns it as a follower at old.Offset, or nil.
	findCopy(old Checkpoint, path string) *follower
	// spawn runs fl, a copy findCopy returned, on its own.
	spawn(ctx context.Context, fl *follower)
	// release forgets the claim on id if fl holds it (nil: a reservation).
	release(id FileID, fl *follower)
	// triggerRescan asks for the globs to be expanded again now.
	triggerRescan()
	// copyExists reports whether a rotated candidate of path begins with
	// the bytes old's fingerprint covers, whatever its length.
	copyExists(old Checkpoint, path string) bool
	// lostFile logs (ERROR) and counts a file whose lines after offset
	// may never be counted.
	lostFile(path string, offset int64, why string)
	// countShrunk counts a file shrunk in place.
	countShrunk()
}

// followerConfig is what a follower needs of the Tailer's Config.
type followerConfig struct {
	source       string
	pollInterval time.Duration
	rotateGrace  time.Duration
	maxLineBytes int
	readSize     int
	clk          clock.Clock
}

// follower reads one open file. Its fields belong to the goroutine running
// it, except pub, which other goroutines read.
type follower struct {
	cfg *followerConfig
	log *logger
	out *output
	reg registry

	f    *os.File
	id   FileID
	path string // where the file was last seen

	off      int64  // just past the last line handed on (the checkpoint offset)
	pos      int64  // next byte to read
	pend     []byte // bytes [off, pos): a partial line, unless skipping (a copy, not in buf)
	skipping bool   // discarding an overlong line that starts at off
	buf      []byte // the read buffer while a read is consumed; nil once a chunk took it
	fpLen    int
	fpSum    uint64
	head     []byte // the first fpLen bytes, to recognise copies of this file
	fresh    bool   // found by glob with no checkpoint, nothing read yet: may be a copy
	announce bool   // send the checkpoint before reading (resumed at an offset below the stored one)

	rotated    bool      // the path no longer names this file and no glob matches it
	quietSince time.Time // last growth (or rotation), for RotateGrace

	adopt  *follower   // a copy to read (and then run) before anything else
	retire *Checkpoint // a checkpoint to delete once the file has been caught up

	pub published
}

// published is what other goroutines read of a follower. Lock order:
// Tailer.mu before published.mu.
type published struct {
	mu     sync.Mutex
	path   string
	head   []byte // never modified once published
	fresh  bool   // fresh, as seen by findCopy
	stolen bool   // a truncated file's follower took this (fresh) file over
}

// pubPath returns the path the file was last seen under.
func (fl *follower) pubPath() string {
	fl.pub.mu.Lock()
	defer fl.pub.mu.Unlock()
	return fl.pub.path
}

// pubHead returns the file's leading bytes, as far as they were read.
func (fl *follower) pubHead() []byte {
	fl.pub.mu.Lock()
	defer fl.pub.mu.Unlock()
	return fl.pub.head
}

// steal marks a fresh follower's file as taken over by another follower
// and reports whether it was still fresh (it had read nothing).
func (fl *follower) steal() bool {
	fl.pub.mu.Lock()
	defer fl.pub.mu.Unlock()
	if !fl.pub.fresh {
		return false
	}
	fl.pub.stolen = true
	return true
}

// setFresh marks a new follower as fresh: found by glob with no
// checkpoint, it may be a copy, and findCopy may take its file over until
// it starts reading.
func (fl *follower) setFresh() {
	fl.fresh = true
	fl.pub.mu.Lock()
	fl.pub.fresh = true
	fl.pub.mu.Unlock()
}

// startReading ends freshness; it reports whether the file was taken over.
func (fl *follower) startReading() (stolen bool) {
	fl.pub.mu.Lock()
	defer fl.pub.mu.Unlock()
	fl.pub.fresh = false
	return fl.pub.stolen
}

// run follows the file until it is finished or ctx is cancelled.
func (fl *follower) run(ctx context.Context) {
	defer fl.exit()
	fl.quietSince = fl.cfg.clk.Now()
	if fl.announce {
		fl.announce = false
		if err := fl.out.send(ctx, Chunk{Checkpoint: fl.checkpoint(), Start: fl.off, Shrunk: true}); err != nil {
			return
		}
	}
	if fl.adopt != nil {
		c := fl.adopt
		fl.adopt = nil
		if err := fl.adoptCopy(ctx, c); err != nil {
			return
		}
	}
	if fl.retire != nil {
		if err := fl.catchUp(ctx); err != nil {
			return
		}
		cp := *fl.retire
		if err := fl.out.send(ctx, Chunk{Checkpoint: cp, Start: cp.Offset, Done: true}); err != nil {
			return
		}
		fl.retire = nil
		fl.reg.release(cp.File, nil)
	}
	for {
		finished, err := fl.poll(ctx)
		if err != nil || finished {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-fl.cfg.clk.After(fl.cfg.pollInterval):
		}
	}
}

// isStolen reports whether another follower took this fresh file over.
func (fl *follower) isStolen() bool {
	fl.pub.mu.Lock()
	defer fl.pub.mu.Unlock()
	return fl.pub.stolen
}

// exit closes the file and unregisters it.
func (fl *follower) exit() {
	if fl.adopt != nil {
		fl.adopt.exit()
		fl.adopt = nil
	}
	fl.close()
	fl.reg.release(fl.id, fl)
	if fl.retire != nil { // never sent: keep nothing reserved
		fl.reg.release(fl.retire.File, nil)
	}
}

func (fl *follower) close() {
	if fl.f != nil {
		fl.f.Close()
		fl.f = nil
	}
}

// poll reads what the file gained, handles truncation, deletion and
// rotation, and reports whether the file is finished (Done sent).
func (fl *follower) poll(ctx context.Context) (bool, error) {
	if fl.fresh {
		full, partial := copyState(fl.f, fl.reg.heads(fl.id))
		if full {
			fl.log.Info("new file is a copy of a followed file, not following it", "path", fl.path)
			return true, nil
		}
		if partial && !fl.isStolen() {
			return false, nil
		}
		if fl.startReading() {
			return true, nil
		}
		fl.fresh = false
	}
	var nlink uint64
	for {
		st, err := fl.f.Stat()
		if err != nil {
			fl.log.logErr("fstat "+fl.path, slog.LevelWarn, "cannot stat open file", "err", err, "path", fl.path)
			return false, nil
		}
		_, nlink, _ = statID(st)
		size := st.Size()
		if size < fl.pos || !fl.fingerprintOK() {
			if err := fl.truncated(ctx, size); err != nil {
				return false, err
			}
			continue
		}
		if size == fl.pos {
			break
		}
		n, err := fl.readToEOF(ctx)
		if err != nil {
			return false, err
		}
		if n == 0 { // size said more, read found none: try next poll
			break
		}
		fl.quietSince = fl.cfg.clk.Now()
	}

	if nlink == 0 {
		fl.log.Info("file deleted, finished", "path", fl.path, "offset", fl.off)
		fl.reg.triggerRescan() // a new file may have taken its place
		return true, fl.done(ctx)
	}
	if !fl.rotated && !fl.reg.stillMatched(fl.id, fl.path) {
		if p, ok := fl.reg.locate(fl.id); ok {
			fl.log.Info("file renamed, still matched", "from", fl.path, "to", p)
			fl.setPath(p)
		} else {
			fl.rotated = true
			fl.quietSince = fl.cfg.clk.Now()
			if p, ok := fl.reg.findRenamed(fl.id, fl.path); ok {
				fl.setPath(p)
			}
			fl.log.Info("file rotated away, reading it until quiet", "path", fl.path, "offset", fl.off)
			fl.reg.triggerRescan()
		}
	}
	if fl.rotated && fl.cfg.clk.Now().Sub(fl.quietSince) >= fl.cfg.rotateGrace {
		if p, ok := fl.reg.locate(fl.id); ok {
			fl.rotated = false
			fl.setPath(p)
			return false, nil
		}
		fl.log.Info("rotated file quiet, finished", "path", fl.path, "offset", fl.off)
		return true, fl.done(ctx)
	}
	return false, nil
}

// fingerprintOK checks the file still begins with the bytes fingerprinted.
func (fl *follower) fingerprintOK() bool {
	if fl.fpLen == 0 {
		return true
	}
	ok, err := fingerprintMatches(fl.f, fl.fpLen, fl.fpSum)
	if err != nil {
		fl.log.logErr("fingerprint "+fl.path, slog.LevelWarn, "cannot read fingerprint", "err", err, "path", fl.path)
		return true
	}
	return ok
}

// truncated handles a file that shrank below what was read (to size) or
// whose first bytes changed. A copy among the rotated candidates
// (copytruncate) holds the lines written between the last read and the
// truncation: they are read from it, then the file restarts at 0.
// Without a copy, a file that shrank but still begins with the bytes read
// was shrunk in place: see shrunk. Otherwise the file restarts at 0, and
// the lines written after the last read before the truncation, if any,
// are lost (ERROR).
func (fl *follower) truncated(ctx context.Context, size int64) error {
	old := fl.checkpoint()
	c := fl.reg.findCopy(old, fl.path)
	if c == nil && size < fl.pos && fl.headKept(size) {
		return fl.shrunk(ctx, size)
	}
	switch {
	case c != nil:
		fl.log.Warn("file truncated, restarting at 0", "path", fl.path, "offset", old.Offset)
		fl.log.Info("reading copy of truncated file", "path", c.path, "offset", old.Offset)
	case old.FPLen > 0 && fl.reg.copyExists(old, fl.path):
		// A copy shorter than what was read: the file was read between
		// the copy and the truncation; what was written after is in no
		// copy (copytruncate's own loss).
		fl.log.Warn("file truncated, restarting at 0; its copy holds less than was read", "path", fl.path, "offset", old.Offset)
	default:
		fl.reg.lostFile(fl.path, old.Offset, "file truncated and no copy of it found among its rotated files, restarting it at 0")
	}
	fl.off, fl.pos, fl.pend, fl.skipping = 0, 0, nil, false
	fl.fpLen, fl.fpSum, fl.head = 0, fnv1a.Offset, nil
	fl.publish()
	return fl.adoptCopy(ctx, c)
}

// headKept reports whether the file, now size bytes, still begins with the
// bytes the fingerprint covers (or, shorter than those, with as many of
// them as it holds).
func (fl *follower) headKept(size int64) bool {
	if fl.fpLen == 0 || size == 0 {
		return false
	}
	k := min(int64(fl.fpLen), size)
	if int64(len(fl.head)) < k {
		return false
	}
	buf := make([]byte, k)
	n, _ := fl.f.ReadAt(buf, 0)
	return int64(n) == k && bytes.Equal(buf, fl.head[:k])
}

// shrunk handles a file shrunk in place to size, below what was read, its
// first bytes unchanged and no copy of it found: not a copytruncate, whose
// copy would hold the old bytes and whose truncated file would begin with
// new ones. The lines before size were counted, so reading goes on at
// size: a line the cut split was counted whole, and what the writer
// appends after the cut begins at size. A cut within the unfinished line
// after the last line handed on only shortens that line.
func (fl *follower) shrunk(ctx context.Context, size int64) error {
	fl.reg.countShrunk()
	if size >= fl.off {
		if !fl.skipping {
			fl.pend = fl.pend[:size-fl.off]
		}
		fl.pos = size
		fl.log.Warn("file shrank in place within its unfinished last line: reading on from its new end", "path", fl.path, "offset", fl.off, "size", size)
		return nil
	}
	old := fl.off
	fl.off, fl.pos, fl.pend, fl.skipping = size, size, nil, false
	if int64(fl.fpLen) > size {
		fl.fpLen = int(size)
		fl.head = fl.head[:size:size]
		fl.fpSum = fnv1a.Extend(fnv1a.Offset, fl.head)
		fl.publish()
	}
	fl.log.Warn("file shrank in place, its first bytes unchanged and no copy of it found: the lines before its new end were counted, reading on from there",
		"path", fl.path, "offset", old, "size", size)
	return fl.out.send(ctx, Chunk{Checkpoint: fl.checkpoint(), Start: fl.off, Shrunk: true})
}

// adoptCopy reads the copy c (may be nil) to its end under its own
// identity, then sends this file's checkpoint at 0, then runs c on its own
// (it finishes like any rotated file). The order makes a restart between any
// two sends correct: the old checkpoint still finds the copy until the
// copy's own checkpoint exists, and the copy's checkpoint is deleted only
// after the old one was replaced.
func (fl *follower) adoptCopy(ctx context.Context, c *follower) error {
	if c != nil {
		if err := c.catchUp(ctx); err != nil {
			c.exit()
			return err
		}
	}
	if err := fl.out.send(ctx, Chunk{Checkpoint: fl.checkpoint(), Start: fl.off}); err != nil {
		if c != nil {
			c.exit()
		}
		return err
	}
	if c != nil {
		fl.reg.spawn(ctx, c)
	}
	return nil
}

// catchUp sends the file's checkpoint at its start offset, so it exists
// before anything that depends on it, and reads the file to its end.
func (fl *follower) catchUp(ctx context.Context) error {
	if err := fl.out.send(ctx, Chunk{Checkpoint: fl.checkpoint(), Start: fl.off}); err != nil {
		return err
	}
	_, err := fl.readToEOF(ctx)
	return err
}

// done sends the Done chunk.
func (fl *follower) done(ctx context.Context) error {
	if len(fl.pend) > 0 || fl.skipping {
		fl.log.Warn("file finished with an unterminated last line, dropped", "path", fl.path, "bytes", fl.pos-fl.off)
	}
	return fl.out.send(ctx, Chunk{Checkpoint: fl.checkpoint(), Start: fl.off, Done: true})
}

func (fl *follower) checkpoint() Checkpoint {
	return Checkpoint{
		Source: fl.cfg.source,
		Path:   fl.path,
		File:   fl.id,
		Offset: fl.off,
		FPLen:  fl.fpLen,
		FPSum:  fl.fpSum,
	}
}

func (fl *follower) setPath(p string) {
	fl.path = p
	fl.publish()
}

// publish copies what other goroutines may read.
func (fl *follower) publish() {
	fl.pub.mu.Lock()
	fl.pub.path, fl.pub.head = fl.path, fl.head
	fl.pub.mu.Unlock()
}
