package tailer

import (
	"sync/atomic"

	"github.com/logtally/logtally/stream"
)

// Status: read-only facts for the status endpoint and `logtally state`.

// Followed returns the files the Tailer follows now, each under the path
// it was last seen at, sorted by path. It is safe to call while Run runs.
// An identity reserved for a retired checkpoint is not listed.
func (t *Tailer) Followed() []File { return t.reg.followed() }

// Stat finds the file id, last seen at path, and returns where it is now
// and its size: at path itself, or else among path's rotated candidates
// (path.* and path-*, uncompressed), where a rotated file still being read
// is. found is false when neither is the file (deleted, or rotated
// somewhere else). It reads no file and never blocks on one.
func Stat(path string, id stream.FileID) (at string, size int64, found bool) {
	return NewStater().Stat(path, id)
}

// Stater is Stat for many files at one moment: each directory is read
// once, however many files it holds (a status of thousands of files). It
// is not safe for concurrent use; make one per look.
type Stater struct{ sc *scan }

// NewStater returns a Stater that has read nothing yet.
func NewStater() *Stater { return &Stater{sc: newScan()} }

// Stat is the package's Stat, through s's directory listings.
func (s *Stater) Stat(path string, id stream.FileID) (at string, size int64, found bool) {
	if fi, ok, _ := statRegular(path); ok && fi.id == id {
		return path, fi.size, true
	}
	for _, p := range s.sc.rotatedNames(path) {
		if fi, ok, _ := s.sc.stat(p); ok && fi.id == id {
			return p, fi.size, true
		}
	}
	return "", 0, false
}

// Stats are a Tailer's counters since New.
type Stats struct {
	// LostFiles counts followed files that could not be found again with
	// lines possibly unread: a checkpoint whose file is gone at start, a
	// file truncated with no copy found among its rotated files. Each is
	// logged at ERROR with the path, the offset and the `logtally replay`
	// command that counts the rest.
	LostFiles uint64
	// RefusedLinks counts symbolic links not followed because their
	// target leaves the source's directories (Config.FollowSymlinks), each
	// path once.
	RefusedLinks uint64
	// Shrunk counts files found shrunk in place (their first bytes
	// unchanged, no copy beside them), resumed at their new size.
	Shrunk uint64
	// Rewatched counts rotated files followed again: written to after
	// they were finished (quiet for RotateGrace), each time logged at
	// WARN.
	Rewatched uint64
}

// tailerStats holds Stats' counters.
type tailerStats struct {
	lostFiles, refusedLinks, shrunk, rewatched atomic.Uint64
}

// Stats returns the Tailer's counters. It is safe to call while Run runs.
func (t *Tailer) Stats() Stats {
	return Stats{
		LostFiles:    t.stats.lostFiles.Load(),
		RefusedLinks: t.stats.refusedLinks.Load(),
		Shrunk:       t.stats.shrunk.Load(),
		Rewatched:    t.stats.rewatched.Load(),
	}
}
