package tailer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/logtally/logtally/stream"
)

// Discovery: the files the globs match and the rotated candidates of a path.

// discovery finds a source's files: the files its globs match, the
// rotated candidates of a path (P.* and P-*, or Config.Rotated), and looks
// at all of them shared by those who ask together (scan.go). It opens
// them through the source's link policy (symlink.go), and compares their
// first bytes with the followed files' (the registry's heads). It decides
// nothing about them.
type discovery struct {
	cfg   *Config
	log   *logger
	stats *tailerStats
	reg   *registry // the followed files: their bases are looked at too
	links linkPolicy

	mu           sync.Mutex
	refusedLinks map[string]bool // refused links already logged, by path

	looks lookShare            // looks at the files shared by those who ask together
	known map[string]knownFile // what the last look stat'ed (only the look being made uses it)
}

func newDiscovery(cfg *Config, log *logger, stats *tailerStats, reg *registry) *discovery {
	return &discovery{
		cfg: cfg, log: log, stats: stats, reg: reg,
		links:        newLinkPolicy(cfg.Paths, cfg.Rotated, cfg.FollowSymlinks),
		refusedLinks: make(map[string]bool),
	}
}

// fileInfo is a file found by glob or as a rotated candidate.
type fileInfo struct {
	path    string
	id      stream.FileID
	size    int64
	mtime   time.Time
	matched bool // path is a glob match
}

// File is a file a Tailer follows: the path it is found at and its
// identity.
type File struct {
	Path string
	ID   stream.FileID
}

// Discover returns the files a Tailer with these globs (Config.Paths)
// follows when it starts without restored checkpoints: the regular,
// uncompressed files the globs match, each once (by identity, under the
// first path that reaches it), in the order of the globs and of their
// matches. It uses the Tailer's own discovery, and does not read the files:
// of two matches that begin with the same bytes the Tailer follows only
// the first one it reads, and takes the other for a copy (see the package
// doc); both are listed. A symbolic link whose target leaves the globs'
// directories is not listed (see DiscoverSource).
//
// A bad pattern is an error, as for New. A match that cannot be examined
// (an error other than not-exist, which the Tailer logs and tries again at
// every rescan) is not listed; its *fs.PathError is returned, joined with
// the others, along with the files.
func Discover(globs []string) ([]File, error) {
	return DiscoverSource(SourceFiles{Paths: globs})
}

// SourceFiles is what a source's files are found by: its globs
// (Config.Paths), where its rotated files go (Config.Rotated) and whether
// symbolic links leaving their directories are followed
// (Config.FollowSymlinks).
type SourceFiles struct {
	Paths          []string
	Rotated        []string
	FollowSymlinks bool
}

// DiscoverSource is Discover for a source with rotated globs and a
// symlink setting: the links a Tailer with them refuses are not listed.
func DiscoverSource(src SourceFiles) ([]File, error) {
	if err := checkGlobs(src.Paths); err != nil {
		return nil, err
	}
	lp := newLinkPolicy(src.Paths, src.Rotated, src.FollowSymlinks)
	var errs []error
	var out []File
	seen := make(map[stream.FileID]bool)
	keep := func(p string) bool { _, err := lp.resolve(p); return !errors.Is(err, errRefusedLink) }
	for _, fi := range globFiles(newScan(), src.Paths, keep, func(err error) { errs = append(errs, err) }) {
		if !seen[fi.id] {
			seen[fi.id] = true
			out = append(out, File{Path: fi.path, ID: fi.id})
		}
	}
	return out, errors.Join(errs...)
}

// Holds reports whether path is one of the source's file names by
// pattern alone (no I/O): matched by a glob, by a glob followed by a
// rotation suffix (P.*, P-*) or by a rotated glob, and not compressed.
// These are the names LocateSource looks for a checkpoint's file under.
func (src SourceFiles) Holds(path string) bool {
	if Compressed(path) {
		return false
	}
	for _, pat := range src.Paths {
		for _, p := range [...]string{pat, pat + ".*", pat + "-*"} {
			if ok, _ := filepath.Match(p, path); ok {
				return true
			}
		}
	}
	for _, pat := range src.Rotated {
		if ok, _ := filepath.Match(pat, path); ok {
			return true
		}
	}
	return false
}

// checkGlobs reports the first bad pattern.
func checkGlobs(globs []string) error {
	for _, p := range globs {
		if _, err := filepath.Match(p, ""); err != nil {
			return fmt.Errorf("glob %q: %w", p, err)
		}
	}
	return nil
}

// expandIn returns the regular, uncompressed files the globs match, as s
// sees them.
func (d *discovery) expandIn(s *scan) []fileInfo {
	return globFiles(s, d.cfg.Paths, d.allowed, d.logStatErr)
}

// globFiles returns the regular, uncompressed files the globs (valid
// patterns) match that keep allows (the link policy), each path once. It
// calls statErr with the error of each match that cannot be examined
// (other than not-exist).
func globFiles(s *scan, globs []string, keep func(string) bool, statErr func(error)) []fileInfo {
	var out []fileInfo
	var seen map[string]bool // with one glob, no path comes twice
	if len(globs) > 1 {
		seen = make(map[string]bool)
	}
	for _, pat := range globs {
		for _, h := range s.glob(pat) {
			p := h.path
			if seen[p] || Compressed(p) {
				continue
			}
			if seen != nil {
				seen[p] = true
			}
			fi, ok, err := s.fileAt(h, keep)
			if err != nil {
				statErr(err)
			}
			if ok {
				fi.matched = true
				out = append(out, fi)
			}
		}
	}
	return out
}

// candidatesIn returns the rotated candidates of path, as s sees them:
// uncompressed regular files named path.* or path-*, or matched by
// Config.Rotated when it is set.
func (d *discovery) candidatesIn(s *scan, path string) []fileInfo {
	return d.statAll(s, s.rotatedPaths(path, d.cfg.Rotated))
}

// statAll returns the regular files among paths that the link policy
// allows, each marked matched if a glob matches it.
func (d *discovery) statAll(s *scan, paths []string) []fileInfo {
	var out []fileInfo
	for _, p := range paths {
		fi, ok, err := s.file(p, d.allowed)
		if err != nil {
			d.logStatErr(err)
		}
		if ok {
			fi.matched = d.matches(p)
			out = append(out, fi)
		}
	}
	return out
}

// rotatedPaths returns the names path's rotated files may have: the
// matches of the rotated globs, or without them path.* and path-*;
// compressed ones and path itself left out.
func rotatedPaths(path string, rotated []string) []string {
	return newScan().rotatedPaths(path, rotated)
}

// logStatErr logs a stat error of statRegular.
func (d *discovery) logStatErr(err error) {
	var pe *fs.PathError
	p := ""
	if errors.As(err, &pe) {
		p = pe.Path
	}
	d.log.logErr("stat "+p, slog.LevelWarn, "cannot stat file", "err", err, "path", p)
}

// statRegular stats a regular file that statID can identify: ok reports
// one. err is a stat error other than not-exist.
func statRegular(p string) (fi fileInfo, ok bool, err error) {
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
		return fileInfo{}, false, err
	}
	if !st.Mode().IsRegular() {
		return fileInfo{}, false, nil
	}
	id, _, ok := statID(st)
	if !ok {
		return fileInfo{}, false, nil
	}
	return fileInfo{path: p, id: id, size: st.Size(), mtime: st.ModTime()}, true, nil
}

// matches reports whether path is matched by one of the globs.
func (d *discovery) matches(path string) bool {
	if Compressed(path) {
		return false
	}
	for _, pat := range d.cfg.Paths {
		if ok, _ := filepath.Match(pat, path); ok {
			return true
		}
	}
	return false
}

var compressedExt = []string{".gz", ".zst", ".bz2", ".xz", ".lz4", ".zip"}

// Compressed reports whether path names a compressed archive by its
// extension (.gz, .zst, .bz2, .xz, .lz4, .zip). The tailer never follows
// those; `logtally replay` reads them.
func Compressed(path string) bool {
	for _, ext := range compressedExt {
		if len(path) >= len(ext) && strings.EqualFold(path[len(path)-len(ext):], ext) {
			return true
		}
	}
	return false
}

// stillMatched reports whether path still names the file id and is a glob
// match. A stat error other than not-exist counts as matched (nothing is
// known) and is logged.
func (d *discovery) stillMatched(id stream.FileID, path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false
		}
		d.log.logErr("stat "+path, slog.LevelWarn, "cannot stat followed path", "err", err, "path", path)
		return true
	}
	got, _, ok := statID(st)
	return ok && got == id && d.matches(path)
}

// isCopy reports whether the file at path begins with one of heads.
func (d *discovery) isCopy(path string, heads [][]byte) bool {
	f, err := d.open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	full, _ := copyState(f, heads)
	if full {
		d.log.logErr("copy "+path, slog.LevelInfo, "not following a copy of a followed file", "path", path)
	}
	return full
}

// isCopyOfFollowed reports whether the file at path begins with a
// followed file's head (partial: or is a prefix of one). A file that
// cannot be opened is neither.
func (d *discovery) isCopyOfFollowed(path string) (full, partial bool) {
	f, err := d.open(path)
	if err != nil {
		return false, false
	}
	defer f.Close()
	return d.reg.copyOf(f, nil)
}

// freshCandidates returns the rotated candidates of path, as a look sees
// them, each stat'ed now: a look may give the size an earlier look saw (a
// copy still being written then).
func (d *discovery) freshCandidates(path string) []fileInfo {
	var out []fileInfo
	for _, c := range d.candidatesIn(d.look().sc, path) {
		if fi, ok, _ := statRegular(c.path); ok && fi.id == c.id {
			fi.matched = c.matched
			out = append(out, fi)
		}
	}
	return out
}

// readHead returns the first (up to FingerprintSize) bytes of the file at
// path.
func (d *discovery) readHead(path string) ([]byte, error) {
	f, err := d.open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, stream.FingerprintSize)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return buf[:n], nil
}
