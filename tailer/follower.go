package tailer

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/stream"
)

// followerConfig is what a follower needs of the Tailer's Config, the
// count of the open files (slots) and the index of the followed heads
// (registry).
type followerConfig struct {
	source       string
	maxLineBytes int
	readSize     int
	clk          clock.Clock
	open         *atomic.Int64 // followers' files open (slots.open)
	heads        *headIndex    // the followed files' heads (registry.heads)
}

// follower reads one open file (the harvester): it reads what the file
// gains, hands on its lines with their checkpoints, and reports what a
// read observes (readOn). It decides nothing about its file's fate and
// knows nothing of the others: the prospector (prospector.go) does, and moves
// it (restart, resumeAt, setPath, finish). Its fields belong to the
// goroutine running it, except pub, which other goroutines read.
type follower struct {
	cfg *followerConfig
	log *logger
	out *output

	f    *os.File // nil while the file is closed (parked or queued, see park.go)
	id   stream.FileID
	path string // where the file was last seen
	base string // where it was found: its rotated names are looked at (generations.go)

	off      int64  // just past the last line handed on (the checkpoint offset)
	pos      int64  // next byte to read
	pend     []byte // bytes [off, pos): a partial line, unless skipping (a copy, not in buf)
	skipping bool   // discarding an overlong line that starts at off
	buf      []byte // the read buffer while a read is consumed; nil once a chunk took it
	fpLen    int
	fpSum    uint64
	head     []byte // the first fpLen bytes, to recognise copies of this file; an array never modified once published (the head index refers to it)
	tailLen  int    // the tail check at off (Checkpoint.TailLen, TailSum)
	tailSum  uint64
	stream   uint64 // Checkpoint.Stream

	quietSince time.Time // last growth (or rotation), for RotateGrace

	parked parked // while closed to be parked (park.go)

	decided decided // the prospector's decisions about the file

	pub published

	// The head the registry's headIndex counts for the follower, and
	// whether it is in the index (claimed): under headIndex.mu.
	idxHead []byte
	indexed bool
}

// parked is what a follower keeps of its file while it is closed to be
// parked (park.go, shelve).
type parked struct {
	// The file's size and modification time (Unix ns) when it was
	// closed: it is opened again once either changes.
	size, mtime int64
	// movedMark is the look mark (discovery.lookMark) taken before the poll
	// that saw the parked file changed: a look begun after it finds the
	// file where it went.
	movedMark uint64
}

// decided is what the prospector (or start) has decided about a
// follower's file and not yet carried out, or the state of its decision.
// Only their code reads and writes it (prospector.go, restore.go), before
// the follower runs or on its goroutine.
type decided struct {
	fresh    bool               // found by glob with no checkpoint, nothing read yet: may be a copy
	announce bool               // send the checkpoint before reading (resumed at an offset below the stored one)
	rotated  bool               // the path no longer names this file and no glob matches it
	adopt    *follower          // a copy to read (and then run) before anything else
	retire   *stream.Checkpoint // a checkpoint to delete once the file has been caught up
}

// published is what other goroutines read of a follower. Lock order:
// registry.mu before published.mu.
type published struct {
	mu     sync.Mutex
	path   string
	fresh  bool // fresh, as seen by findCopy
	stolen bool // a truncated file's follower took this (fresh) file over
}

// pubPath returns the path the file was last seen under.
func (fl *follower) pubPath() string {
	fl.pub.mu.Lock()
	defer fl.pub.mu.Unlock()
	return fl.pub.path
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
	fl.decided.fresh = true
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

// isStolen reports whether another follower took this fresh file over.
func (fl *follower) isStolen() bool {
	fl.pub.mu.Lock()
	defer fl.pub.mu.Unlock()
	return fl.pub.stolen
}

// shelve closes the file of a follower that does not run yet, noting its
// size and modification time (see park.go).
func (fl *follower) shelve() {
	if fl.f == nil {
		return
	}
	if st, err := fl.f.Stat(); err == nil {
		fl.parked.size, fl.parked.mtime = st.Size(), st.ModTime().UnixNano()
	}
	fl.close()
}

func (fl *follower) close() {
	if fl.f != nil {
		fl.f.Close()
		fl.f = nil
		fl.cfg.open.Add(-1)
	}
}

// observation is what readOn saw of the file.
type observation struct {
	// statFailed: the open file could not be examined (logged); nothing
	// is known this poll.
	statFailed bool
	// cut: the file is smaller than what was read (size), or its first
	// bytes no longer match the fingerprint. Nothing was read past it.
	cut  bool
	size int64
	// deleted: read to its end, the file has no link left.
	deleted bool
}

// readOn reads what the file gained and reports what it saw: read to its
// end (deleted or not), cut, or not examinable. Only a cancelled ctx is an
// error.
func (fl *follower) readOn(ctx context.Context) (observation, error) {
	for {
		st, err := fl.f.Stat()
		if err != nil {
			fl.log.logErr("fstat "+fl.path, slog.LevelWarn, "cannot stat open file", "err", err, "path", fl.path)
			return observation{statFailed: true}, nil
		}
		_, nlink, _ := statID(st)
		size := st.Size()
		if size < fl.pos || !fl.fingerprintOK() {
			return observation{cut: true, size: size}, nil
		}
		if size == fl.pos {
			return observation{deleted: nlink == 0}, nil
		}
		n, err := fl.readToEOF(ctx)
		if err != nil {
			return observation{}, err
		}
		if n == 0 { // size said more, read found none: try next poll
			return observation{deleted: nlink == 0}, nil
		}
		fl.quietSince = fl.cfg.clk.Now()
	}
}

// fingerprintOK checks the file still begins with the bytes fingerprinted.
func (fl *follower) fingerprintOK() bool {
	if fl.fpLen == 0 {
		return true
	}
	ok, err := stream.FingerprintMatches(fl.f, fl.fpLen, fl.fpSum)
	if err != nil {
		fl.log.logErr("fingerprint "+fl.path, slog.LevelWarn, "cannot read fingerprint", "err", err, "path", fl.path)
		return true
	}
	return ok
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

// resumeAt moves the follower to size, the new size of a file shrunk in
// place below what was read (see prospector.cut). The lines before size were
// counted, so reading goes on at size: a line the cut split was counted
// whole, and what the writer appends after the cut begins at size. A cut
// within the unfinished line after the last line handed on only shortens
// that line; otherwise the new checkpoint is sent.
func (fl *follower) resumeAt(ctx context.Context, size int64) error {
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
	fl.setTail(nil)
	if int64(fl.fpLen) > size {
		fl.fpLen = int(size)
		fl.head = fl.head[:size:size]
		fl.fpSum = fnv1a.Extend(fnv1a.Offset, fl.head)
		fl.publish()
	}
	fl.log.Warn("file shrank in place, its first bytes unchanged and no copy of it found: the lines before its new end were counted, reading on from there",
		"path", fl.path, "offset", old, "size", size)
	return fl.sendCheckpoint(ctx, true)
}

// restart moves the follower to the file's start, forgetting what was
// read and the fingerprint: a new stream; it sends nothing (see
// prospector.adoptCopy).
func (fl *follower) restart() {
	fl.off, fl.pos, fl.pend, fl.skipping = 0, 0, nil, false
	fl.fpLen, fl.fpSum, fl.head = 0, fnv1a.Offset, nil
	fl.tailLen, fl.tailSum, fl.stream = 0, fnv1a.Offset, stream.NewID()
	fl.publish()
}

// setTail sets the tail check at fl.off from data, the file's bytes that
// end there (nil, or fewer than the check covers: read from the file).
// A file that cannot be read there leaves the check unrecorded (zero),
// and the checkpoint resumes by identity and fingerprint alone.
func (fl *follower) setTail(data []byte) {
	if n := min(fl.off, stream.TailSize); int64(len(data)) >= n {
		fl.tailLen, fl.tailSum = stream.TailOf(data[int64(len(data))-n:])
		return
	}
	n, sum, ok, err := stream.TailAt(fl.f, fl.off)
	if !ok {
		if err != nil {
			fl.log.logErr("tail "+fl.path, slog.LevelWarn, "cannot read the bytes before the read position", "err", err, "path", fl.path)
		}
		n, sum = 0, fnv1a.Offset
	}
	fl.tailLen, fl.tailSum = n, sum
}

// sendCheckpoint sends the file's checkpoint alone (a chunk without
// lines); shrunk: it moves below the stored one (Chunk.Shrunk).
func (fl *follower) sendCheckpoint(ctx context.Context, shrunk bool) error {
	return fl.out.send(ctx, stream.Chunk{Checkpoint: fl.checkpoint(), Start: fl.off, Shrunk: shrunk})
}

// catchUp sends the file's checkpoint at its start offset, so it exists
// before anything that depends on it, and reads the file to its end.
func (fl *follower) catchUp(ctx context.Context) error {
	if err := fl.sendCheckpoint(ctx, false); err != nil {
		return err
	}
	_, err := fl.readToEOF(ctx)
	return err
}

// finish sends the Done chunk.
func (fl *follower) finish(ctx context.Context) error {
	if len(fl.pend) > 0 || fl.skipping {
		fl.log.Warn("file finished with an unterminated last line, dropped", "path", fl.path, "bytes", fl.pos-fl.off)
	}
	return fl.out.send(ctx, stream.Chunk{Checkpoint: fl.checkpoint(), Start: fl.off, Done: true})
}

func (fl *follower) checkpoint() stream.Checkpoint {
	return stream.Checkpoint{
		Source: fl.cfg.source,
		Path:   fl.path,
		File:   fl.id,
		Offset: fl.off,
		FPLen:  fl.fpLen,
		FPSum:  fl.fpSum,

		TailLen: fl.tailLen,
		TailSum: fl.tailSum,
		Stream:  fl.stream,
	}
}

func (fl *follower) setPath(p string) {
	fl.path = p
	fl.publish()
}

// publish copies what other goroutines may read, and gives the head
// index the file's head.
func (fl *follower) publish() {
	fl.pub.mu.Lock()
	fl.pub.path = fl.path
	fl.pub.mu.Unlock()
	fl.cfg.heads.update(fl, fl.head)
}
