package tailer

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/stream"
)

// Generations rotated away between two looks (issue 29): a file created
// at a glob's path and rotated away again before a rescan saw it (a
// writer rotating several times a second, or while the daemon was busy)
// was never read, and nothing said so. Every rescan now also looks at the
// rotated names (P.* and P-* of each match, literal glob and followed
// file's base, or the matches of Config.Rotated), and remembers each file
// it saw by identity. A rotated file whose identity it never saw (or saw
// with other first bytes: an inode used again) was created since the last
// look, so no line of it was read: it is read from 0 as a rotated file
// (finished once quiet for RotateGrace), unless
//
//   - it is claimed (followed, or reserved),
//   - it is empty (looked at again next time),
//   - it begins with the first bytes of a followed file (a copy: a
//     copytruncate's, adopted by the truncated file's follower), or is
//     a prefix of them (a copy being written: looked at again),
//   - or it was modified more than a second before the newest file the
//     last look saw: it was not created since, it was moved or copied in
//     (restored, uncompressed, renamed from a name no pattern matches),
//     and whether it was counted cannot be told. It is not read: an ERROR
//     names it with the `logtally replay` command that counts it, and
//     Stats.LostFiles counts it.
//
// The files seen at start are remembered without reading (start's own
// rules decided about them). A file remembered is forgotten once two
// complete looks in a row have not seen it.

// seenFiles remembers the files the looks saw. Only the look being made
// (a rescan, on Run's goroutine) numbers looks and forgets files; the
// followers remember theirs when they are done.
type seenFiles struct {
	reg *registry // a followed file is remembered by its follower, at the end

	mu      sync.Mutex
	files   map[stream.FileID]seenFile
	look    uint32 // the number of the last look
	horizon int64  // the newest modification time the last look saw (Unix ns)
}

// seenFile is what a look saw of a file.
type seenFile struct {
	mtime int64  // modification time, Unix ns
	fpSum uint64 // FNV-1a of the first fpLen bytes
	fpLen int32  // -1: not known (a followed file: its follower tells at the end)
	look  uint32 // the last look that saw it
}

func newSeenFiles(reg *registry) *seenFiles {
	return &seenFiles{reg: reg, files: make(map[stream.FileID]seenFile)}
}

// seeFollowed remembers a file a follower is done with: its modification
// time and its fingerprint, so that a later look knows it again.
func (sf *seenFiles) seeFollowed(fl *follower) {
	if fl.f == nil {
		return
	}
	st, err := fl.f.Stat()
	if err != nil {
		return
	}
	fpLen := int32(fl.fpLen)
	if fpLen == 0 { // nothing read: any content would match
		fpLen = -1
	}
	sf.mu.Lock()
	defer sf.mu.Unlock()
	sf.files[fl.id] = seenFile{mtime: st.ModTime().UnixNano(), fpSum: fl.fpSum, fpLen: fpLen, look: sf.look}
}

// seeAtStart remembers the files start found (it decided about each).
func (sf *seenFiles) seeAtStart(files []*fileInfo) {
	var newest int64
	for _, fi := range files {
		newest = max(newest, fi.mtime.UnixNano())
		if !sf.reg.claimed(fi.id) { // a followed one: when its follower is done
			sf.see(fi, false)
		}
	}
	sf.mu.Lock()
	sf.horizon = newest
	sf.mu.Unlock()
}

// see remembers fi as seen by the current look: a file not followed with
// its first bytes' fingerprint (read now if it is new), a followed one
// without (its follower gives it at the end). An empty file that nobody
// follows is not remembered: once written to, it is new.
func (sf *seenFiles) see(fi *fileInfo, followed bool) {
	mt := fi.mtime.UnixNano()
	sf.mu.Lock()
	s, ok := sf.files[fi.id]
	look := sf.look
	sf.mu.Unlock()
	switch {
	case ok && s.mtime == mt:
	case followed:
		s = seenFile{mtime: mt, fpLen: -1}
	case fi.size == 0:
		return
	case ok && s.fpLen >= 0:
		s.mtime = mt // the same file grown (checked by the caller), or
		// rewritten: readMissed decides before calling see
	default:
		sum, n, err := headSum(fi.path)
		if err != nil {
			return
		}
		s = seenFile{mtime: mt, fpSum: sum, fpLen: int32(n)}
	}
	s.look = look
	sf.mu.Lock()
	sf.files[fi.id] = s
	sf.mu.Unlock()
}

// headSum returns the FNV-1a of the first bytes (up to FingerprintSize)
// of the file at path, and how many.
func headSum(path string) (uint64, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	var buf [stream.FingerprintSize]byte
	n, err := f.ReadAt(buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, 0, err
	}
	return fnv1a.Extend(fnv1a.Offset, buf[:n]), n, nil
}

// isNew reports whether fi, not followed, is a file no look saw: its
// identity unknown, or known with other first bytes (the inode used
// again by a new file).
func (sf *seenFiles) isNew(fi *fileInfo) bool {
	sf.mu.Lock()
	s, ok := sf.files[fi.id]
	sf.mu.Unlock()
	switch {
	case !ok:
		return true
	case s.mtime == fi.mtime.UnixNano():
		return false
	case s.fpLen < 0:
		return true
	}
	match, err := stream.HasFingerprint(fi.path, int(s.fpLen), s.fpSum)
	return err == nil && !match
}

// beginLook numbers a new look and returns its number and the newest
// modification time the last look saw.
func (sf *seenFiles) beginLook() (look uint32, horizon int64) {
	sf.mu.Lock()
	defer sf.mu.Unlock()
	sf.look++
	return sf.look, sf.horizon
}

// endLook ends the look numbered look, which saw files modified up to
// newest: unless it may have missed files (partial), the files not
// followed that neither it nor the look before saw are forgotten.
func (sf *seenFiles) endLook(look uint32, newest int64, partial bool) {
	sf.mu.Lock()
	defer sf.mu.Unlock()
	sf.horizon = newest
	if partial {
		return // files may be missing from the look: forget nothing
	}
	for id, s := range sf.files {
		if s.look+1 < look {
			if !sf.reg.claimed(id) {
				delete(sf.files, id)
			}
		}
	}
}

// readMissed reads the rotated files of lk that no look saw (see above),
// and remembers what lk saw.
func (pr *prospector) readMissed(ctx context.Context, lk *look) {
	look, horizon := pr.seen.beginLook()
	var newest int64
	for _, fis := range [][]fileInfo{lk.matches, lk.rotated} {
		for i := range fis {
			newest = max(newest, fis[i].mtime.UnixNano())
		}
	}
	// A followed file is remembered when its follower is done with it
	// (seeFollowed): only the others are remembered now.
	for _, fi := range pr.reg.unclaimed(lk.matches) {
		pr.seen.see(fi, false)
	}
	after := horizon - int64(time.Second)
	for _, c := range pr.reg.unclaimed(lk.rotated) {
		if ctx.Err() != nil {
			return
		}
		if c.matched || c.size == 0 || !pr.seen.isNew(c) {
			pr.seen.see(c, false)
			continue
		}
		if full, partial := pr.disc.isCopyOfFollowed(c.path); full || partial {
			if full {
				pr.seen.see(c, false)
			}
			continue
		}
		if c.mtime.UnixNano() < after {
			pr.seen.see(c, false)
			pr.stats.lostFiles.Add(1)
			pr.log.Error("a rotated file appeared that was modified before the files seen last, so it was not created since: it was moved or copied in, and whether its lines were counted is not known. Not reading it: if they were not, count it with the replay command",
				"path", c.path, "modified", c.mtime,
				"replay", "logtally replay -config CONFIG -source "+pr.cfg.Source+" "+c.path)
			continue
		}
		pr.readGeneration(ctx, c)
	}
	pr.seen.endLook(look, newest, lk.sc.partial)
}

// readGeneration follows c, a rotated file no look saw, from 0 (or where
// the ledger says) until it is quiet for RotateGrace.
func (pr *prospector) readGeneration(ctx context.Context, c *fileInfo) {
	fl, err := pr.openFollower(c.path, c.id, stream.Checkpoint{Source: pr.cfg.Source})
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			pr.log.logErr("open "+c.path, slog.LevelWarn, "cannot open rotated file", "err", err, "path", c.path)
		}
		return
	}
	fl.decided.rotated = true
	if !pr.reg.claim(fl) {
		fl.close()
		return
	}
	pr.seen.see(c, true)
	pr.log.Info("reading a rotated file created and rotated away since the last look", "path", c.path, "bytes", c.size)
	pr.slots.overLimit(fl)
	pr.spawn(ctx, fl)
}
