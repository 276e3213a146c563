package tailer

import (
	"bytes"
	"errors"
	"io"
	"log/slog"

	"github.com/logtally/logtally/stream"
)

// Copies: a file that begins with a followed file's first bytes, and the
// copy a copytruncate leaves among the rotated candidates.

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
// truncated, the copy is adopted at the right offset: prospector.cut). partial:
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

// findCopy looks among the rotated candidates of path for a copy of the
// file old describes (another file whose first old.FPLen bytes hash to
// old.FPSum and that holds at least old.Offset bytes, the last of them
// matching old's tail check) that nobody reads.
// The copy is claimed and returned as a follower at old.Offset. A copy that
// a fresh follower holds but has not started reading (found by a rescan
// while it was being written) is taken over.
func (pr *prospector) findCopy(old stream.Checkpoint, path string) *follower {
	if old.FPLen == 0 {
		return nil
	}
	for _, fi := range pr.disc.freshCandidates(path) {
		if fi.id == old.File || fi.size < old.Offset {
			continue
		}
		if ok, _ := stream.HasFingerprint(fi.path, old.FPLen, old.FPSum); !ok {
			continue
		}
		if ok, _ := stream.FileTailMatches(fi.path, old); !ok {
			pr.log.Info("a rotated file begins like the truncated file but its bytes before the read position differ: not its copy (tail check)", "path", fi.path, "offset", old.Offset)
			continue
		}
		c := old
		c.File, c.Path = fi.id, fi.path
		fl, err := pr.openFollower(fi.path, fi.id, c)
		if err != nil {
			pr.log.logErr("open "+fi.path, slog.LevelWarn, "cannot open copy of truncated file", "err", err, "path", fi.path)
			continue
		}
		if !pr.reg.claimCopy(fl) {
			fl.close()
			continue
		}
		return fl
	}
	return nil
}

// copyExists reports whether a rotated candidate of path other than
// old's file begins with the bytes old's fingerprint covers.
func (pr *prospector) copyExists(old stream.Checkpoint, path string) bool {
	if old.FPLen == 0 {
		return false
	}
	for _, fi := range pr.disc.freshCandidates(path) {
		if fi.id == old.File || fi.size < int64(old.FPLen) {
			continue
		}
		if ok, _ := stream.HasFingerprint(fi.path, old.FPLen, old.FPSum); ok {
			return true
		}
	}
	return false
}
