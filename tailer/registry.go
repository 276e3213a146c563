package tailer

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"log/slog"
	"os"
	"slices"

	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/stream"
)

// Registry: the files claimed by followers, and copies of them.

// planHeads returns the leading bytes of the planned followers.
func planHeads(plan []*follower) [][]byte {
	var hs [][]byte
	for _, fl := range plan {
		if len(fl.head) > 0 {
			hs = append(hs, fl.head)
		}
	}
	return hs
}

// copyState compares the first bytes of a file with heads, the leading
// bytes of followed files. full: the file begins with one of them, so it is
// a copy of a followed file and is left alone (if the original is then
// truncated, the copy is adopted at the right offset: Tailer.cut). partial:
// the whole file is a prefix of one of them (a copy being written, or a new
// file too short to tell), so it is not read yet.
func copyState(r io.ReaderAt, heads [][]byte) (full, partial bool) {
	if len(heads) == 0 {
		return false, false
	}
	var buf [stream.FingerprintSize]byte
	n, err := r.ReadAt(buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, false
	}
	b := buf[:n]
	for _, h := range heads {
		switch {
		case len(b) >= len(h) && bytes.Equal(b[:len(h)], h):
			return true, false
		case len(b) < len(h) && bytes.Equal(b, h[:len(b)]):
			partial = true
		}
	}
	return false, partial
}

// isCopy reports whether the file at path begins with one of heads.
func (t *Tailer) isCopy(path string, heads [][]byte) bool {
	f, err := t.open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	full, _ := copyState(f, heads)
	if full {
		t.log.logErr("copy "+path, slog.LevelInfo, "not following a copy of a followed file", "path", path)
	}
	return full
}

// findCopy looks among the rotated candidates of path for a copy of the
// file old describes (another file whose first old.FPLen bytes hash to
// old.FPSum and that holds at least old.Offset bytes, the last of them
// matching old's tail check) that nobody reads.
// The copy is claimed and returned as a follower at old.Offset. A copy that
// a fresh follower holds but has not started reading (found by a rescan
// while it was being written) is taken over.
func (t *Tailer) findCopy(old stream.Checkpoint, path string) *follower {
	if old.FPLen == 0 {
		return nil
	}
	for _, fi := range t.freshCandidates(path) {
		if fi.id == old.File || fi.size < old.Offset {
			continue
		}
		if ok, _ := stream.HasFingerprint(fi.path, old.FPLen, old.FPSum); !ok {
			continue
		}
		if ok, _ := stream.FileTailMatches(fi.path, old); !ok {
			t.log.Info("a rotated file begins like the truncated file but its bytes before the read position differ: not its copy (tail check)", "path", fi.path, "offset", old.Offset)
			continue
		}
		c := old
		c.File, c.Path = fi.id, fi.path
		fl, err := t.openFollower(fi.path, fi.id, c)
		if err != nil {
			t.log.logErr("open "+fi.path, slog.LevelWarn, "cannot open copy of truncated file", "err", err, "path", fi.path)
			continue
		}
		if !t.claimCopy(fl) {
			fl.close()
			continue
		}
		return fl
	}
	return nil
}

// freshCandidates returns the rotated candidates of path, as a look sees
// them, each stat'ed now: a look may give the size an earlier look saw (a
// copy still being written then).
func (t *Tailer) freshCandidates(path string) []fileInfo {
	var out []fileInfo
	for _, c := range t.candidatesIn(t.look().sc, path) {
		if fi, ok, _ := statRegular(c.path); ok && fi.id == c.id {
			fi.matched = c.matched
			out = append(out, fi)
		}
	}
	return out
}

// copyExists reports whether a rotated candidate of path other than
// old's file begins with the bytes old's fingerprint covers.
func (t *Tailer) copyExists(old stream.Checkpoint, path string) bool {
	if old.FPLen == 0 {
		return false
	}
	for _, fi := range t.freshCandidates(path) {
		if fi.id == old.File || fi.size < int64(old.FPLen) {
			continue
		}
		if ok, _ := stream.HasFingerprint(fi.path, old.FPLen, old.FPSum); ok {
			return true
		}
	}
	return false
}

// lostFile logs at ERROR, and counts, a followed file whose lines after
// offset may never be counted, with the replay command that counts them.
func (t *Tailer) lostFile(path string, offset int64, why string) {
	t.stats.lostFiles.Add(1)
	t.log.Error(why+": lines after the offset may never be counted. If the file was rotated (moved, renamed or compressed), count the rest with the replay command, giving it that file: the replay starts where this file was counted. Set the source's `rotated` globs to where rotation puts its files.",
		"path", path, "offset", offset,
		"replay", "logtally replay -config CONFIG -source "+t.cfg.Source+" ROTATED-FILE")
}

// claimCopy registers fl unless its file is claimed by a follower that has
// read from it; a fresh follower that has not is told to stop.
func (t *Tailer) claimCopy(fl *follower) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur, ok := t.files[fl.id]; ok {
		if cur == nil || !cur.steal() {
			return false
		}
		t.fcfg.heads.drop(cur)
	}
	t.files[fl.id] = fl
	t.fcfg.heads.set(fl, fl.head)
	return true
}

// claim registers fl unless its file is already claimed.
func (t *Tailer) claim(fl *follower) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.files[fl.id]; ok {
		return false
	}
	t.files[fl.id] = fl
	t.fcfg.heads.set(fl, fl.head)
	return true
}

func (t *Tailer) claimed(id stream.FileID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.files[id]
	return ok
}

// release forgets id if it is held by fl (nil for a reservation).
func (t *Tailer) release(id stream.FileID, fl *follower) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur, ok := t.files[id]; ok && cur == fl {
		delete(t.files, id)
		if fl != nil {
			t.fcfg.heads.drop(fl)
		}
	}
}

// openFollower opens path and checks it is still the file id.
func (t *Tailer) openFollower(path string, id stream.FileID, cp stream.Checkpoint) (*follower, error) {
	f, st, err := openID(t.open, path, id)
	if err != nil {
		return nil, err
	}
	if t.cfg.Counted != nil {
		cp = t.counted(f, path, st.Size(), cp)
	}
	fpLen, fpSum := cp.FPLen, cp.FPSum
	if fpLen == 0 {
		fpSum = fnv1a.Offset
	}
	head := make([]byte, fpLen)
	n, _ := f.ReadAt(head, 0) // a short read shows as a fingerprint mismatch later
	head = head[:n]
	t.fcfg.open.Add(1)
	fl := &follower{
		cfg: &t.fcfg, log: t.log, out: t.out,
		f: f, id: id, path: path, base: path,
		off: cp.Offset, pos: cp.Offset,
		fpLen: fpLen, fpSum: fpSum, head: head,
		stream: cp.Stream,
		pub:    published{path: path},
	}
	if fl.stream == 0 { // a new file, or a checkpoint of an older logtally
		fl.stream = stream.NewID()
	}
	fl.setTail(nil)
	t.planOpened(fl)
	return fl, nil
}

// lineEndAt reports whether off is a line end of f (size bytes): the byte
// before it is '\n'.
func lineEndAt(f *os.File, off, size int64) bool {
	if off <= 0 || off > size {
		return false
	}
	var b [1]byte
	n, _ := f.ReadAt(b[:], off-1)
	return n == 1 && b[0] == '\n'
}

// counted returns the checkpoint a file starts from: cp (a restored
// checkpoint, or one at 0 for a file found without one), or, when
// Config.Counted says its stream is counted further (a replay of a copy of
// it, or an earlier run that forgot it), that offset (countedAt). A
// restored checkpoint whose file no longer begins with its fingerprint, or
// is shorter than its offset, is left as it is: the rotation rules settle
// it.
func (t *Tailer) counted(f *os.File, path string, size int64, cp stream.Checkpoint) stream.Checkpoint {
	if size < cp.Offset {
		return cp
	}
	var buf [stream.FingerprintSize]byte
	n, err := f.ReadAt(buf[:min(int64(stream.FingerprintSize), size)], 0)
	if n == 0 || err != nil && !errors.Is(err, io.EOF) {
		return cp
	}
	head := buf[:n]
	restored := cp.FPLen > 0
	if restored && !stream.Same(cp, head) {
		return cp
	}
	off := t.countedAt(f, path, size, t.cfg.Counted(head))
	if off <= cp.Offset {
		return cp
	}
	if restored {
		t.log.Info("checkpoint behind the ledger (a copy of the file was counted): starting where the ledger says",
			"path", path, "checkpoint", cp.Offset, "offset", off, "size", size)
	} else {
		t.log.Info("file already counted in part: starting where the ledger says", "path", path, "offset", off, "size", size)
	}
	cp.Offset = off
	cp.FPLen = int(min(off, stream.FingerprintSize))
	cp.FPSum = fnv1a.Extend(fnv1a.Offset, buf[:cp.FPLen])
	return cp
}

// countedAt returns the furthest of ps that is a position of the file f
// (size bytes, at path), 0 when none is. A position is the file's when it
// lies within the file and the file's bytes that end there pass its tail
// check (one without a check, an older logtally's: when it is a line end
// of the file). One beyond the file's end cannot be checked and is not
// taken: the file begins like a stream counted further, but a new file
// with the same first lines is shorter too. Each position not taken is
// logged with the rule that decided.
func (t *Tailer) countedAt(f *os.File, path string, size int64, ps []Position) int64 {
	slices.SortFunc(ps, func(a, b Position) int { return cmp.Compare(b.Offset, a.Offset) })
	for _, p := range ps {
		switch {
		case p.Offset <= 0:
			return 0
		case p.Offset > size:
			t.log.Info("the ledger says a stream beginning like this file is counted further than the file is long: another file, or a shorter copy, not moved there (its bytes there cannot be compared)",
				"path", path, "ledger", p.Offset, "size", size)
			continue
		case p.TailLen == 0:
			if lineEndAt(f, p.Offset, size) {
				return p.Offset
			}
			t.log.Info("the ledger says a stream beginning like this file is counted to an offset that is not a line end of it: another file, not moved there",
				"path", path, "ledger", p.Offset, "size", size)
			continue
		}
		ok, err := stream.TailMatches(f, stream.Checkpoint{Offset: p.Offset, TailLen: p.TailLen, TailSum: p.TailSum})
		if err != nil {
			t.log.logErr("tail "+path, slog.LevelWarn, "cannot read the file where the ledger says it is counted: not moved there", "path", path, "err", err)
			continue
		}
		if ok {
			return p.Offset
		}
		t.log.Info("the ledger says a stream beginning like this file is counted to an offset where this file's bytes differ: another file, not moved there (tail check)",
			"path", path, "ledger", p.Offset, "size", size)
	}
	return 0
}
