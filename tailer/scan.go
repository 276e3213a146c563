package tailer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/logtally/logtally/stream"
)

// Scan: one look at a source's directories. Each directory is read once
// and each path examined once, however many globs, glob matches and
// rotated names ask for them: a survey of n files in one directory costs
// O(n), where a filepath.Glob of P.* for each of them read the directory n
// times (issue 29: 10,000 files took minutes to start).

// scan caches directory listings and stats for one look at the files. It
// is not safe for concurrent use, and it is not kept: what it says is true
// of the moment it looked.
type scan struct {
	dirs    map[string][]dirEnt   // sorted by name; nil: not a readable directory
	stats   map[string]statResult // statRegular of each path
	rotated []string              // the matches of Config.Rotated (rotatedAll)
	rotDone bool
	// frozen: shared by goroutines (a look): nothing more is stored,
	// what is not cached is looked at again at each ask.
	frozen bool
	// partial: a directory could not be read for another reason than
	// not existing: files may be missing from the scan.
	partial bool
	// known holds what the previous look stat'ed of the regular files of
	// its listings, by path: a file whose directory entry still has the
	// same inode number is not stat'ed again (nil: every file is).
	// learnt is what this scan stat'ed, for the next.
	known, learnt map[string]knownFile
}

// dirEnt is a directory entry: its name, inode number (0: not known) and
// type.
type dirEnt struct {
	name string
	ino  uint64
	typ  entType
}

// entType is what a directory entry says a file is.
type entType uint8

const (
	entOther     entType = iota // a directory, device, socket...: not followed
	entRegular                  // a regular file
	entMaybeLink                // a symbolic link, or the type is not known
)

// knownFile is what a look saw of a regular file through its directory
// entry.
type knownFile struct {
	ino         uint64 // the entry's inode number
	id          stream.FileID
	size, mtime int64 // mtime in Unix ns
}

// statResult is what statRegular returned for a path.
type statResult struct {
	fi  fileInfo
	ok  bool
	err error
}

func newScan() *scan {
	return &scan{dirs: make(map[string][]dirEnt), stats: make(map[string]statResult)}
}

// list returns the entries of dir sorted by name, nil if it cannot be
// read (missing, not a directory, no permission: as filepath.Glob, which
// ignores those).
func (s *scan) list(dir string) []dirEnt {
	if es, ok := s.dirs[dir]; ok {
		return es
	}
	es, err := readDir(dir)
	if err != nil {
		es = nil
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			s.partial = true
		}
	}
	if !s.frozen {
		s.dirs[dir] = es
	}
	return es
}

// entry returns the directory entry of p if its directory was listed.
func (s *scan) entry(p string) (dirEnt, bool) {
	dir, name := filepath.Split(p)
	es, ok := s.dirs[cleanGlobPath(dir)]
	if !ok {
		return dirEnt{}, false
	}
	i := sort.Search(len(es), func(i int) bool { return es[i].name >= name })
	if i < len(es) && es[i].name == name {
		return es[i], true
	}
	return dirEnt{}, false
}

// file examines p, a glob match or a rotated name: refused by the link
// policy (allowed, only asked about what may be a symbolic link) or not
// a regular file, ok is false; err is a stat error other than
// not-exist. A regular file whose directory entry has the inode number
// the previous look saw is not stat'ed again: its size and modification
// time are then those the previous look saw, unless it was empty.
func (s *scan) file(p string, allowed func(string) bool) (fileInfo, bool, error) {
	e, listed := s.entry(p)
	return s.fileAt(globHit{path: p, ent: e, listed: listed}, allowed)
}

// fileAt is file for a path whose directory entry is known.
func (s *scan) fileAt(h globHit, allowed func(string) bool) (fileInfo, bool, error) {
	p, e, listed := h.path, h.ent, h.listed
	if listed && e.typ == entOther {
		return fileInfo{}, false, nil
	}
	if (!listed || e.typ != entRegular) && !allowed(p) {
		return fileInfo{}, false, nil
	}
	cacheable := listed && e.typ == entRegular && e.ino != 0 && !s.frozen
	if cacheable {
		if k, ok := s.known[p]; ok && k.ino == e.ino && k.size > 0 {
			s.learnt[p] = k
			return fileInfo{path: p, id: k.id, size: k.size, mtime: time.Unix(0, k.mtime)}, true, nil
		}
	}
	fi, ok, err := s.stat(p)
	if ok && cacheable && s.learnt != nil {
		s.learnt[p] = knownFile{ino: e.ino, id: fi.id, size: fi.size, mtime: fi.mtime.UnixNano()}
	}
	return fi, ok, err
}

// globHit is a path a glob matched, with its directory entry when the
// glob read its directory (listed).
type globHit struct {
	path   string
	ent    dirEnt
	listed bool
}

// glob is filepath.Glob with the directories read through the cache: the
// same matches, in the same order. The pattern must be valid.
func (s *scan) glob(pattern string) []globHit {
	if !hasMeta(pattern) {
		if _, err := os.Lstat(pattern); err != nil {
			return nil
		}
		return []globHit{{path: pattern}}
	}
	dir, file := filepath.Split(pattern)
	dir = cleanGlobPath(dir)
	if !hasMeta(dir) {
		return s.globDir(dir, file, nil)
	}
	if dir == pattern { // as filepath.Glob: no infinite recursion
		return nil
	}
	var out []globHit
	for _, d := range s.glob(dir) {
		out = s.globDir(d.path, file, out)
	}
	return out
}

// globDir appends the entries of dir whose names match pattern.
func (s *scan) globDir(dir, pattern string, out []globHit) []globHit {
	match := nameMatcher(pattern)
	for _, e := range s.list(dir) {
		if match(e.name) {
			out = append(out, globHit{path: filepath.Join(dir, e.name), ent: e, listed: true})
		}
	}
	return out
}

// nameMatcher returns filepath.Match(pattern, name) for names (which
// hold no separator), with the common patterns "*SUFFIX" and "PREFIX*"
// compared directly.
func nameMatcher(pattern string) func(string) bool {
	if rest, ok := strings.CutPrefix(pattern, "*"); ok && !hasMeta(rest) {
		return func(name string) bool { return strings.HasSuffix(name, rest) }
	}
	if rest, ok := strings.CutSuffix(pattern, "*"); ok && !hasMeta(rest) {
		return func(name string) bool { return strings.HasPrefix(name, rest) }
	}
	return func(name string) bool {
		ok, _ := filepath.Match(pattern, name)
		return ok
	}
}

// hasMeta reports whether p holds a glob metacharacter (Unix).
func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// cleanGlobPath prepares a directory of a glob as filepath.Glob does.
func cleanGlobPath(p string) string {
	switch p {
	case "":
		return "."
	case string(filepath.Separator):
		return p
	default:
		return p[:len(p)-1] // chop off the trailing separator
	}
}

// stat is statRegular of p, once per scan.
func (s *scan) stat(p string) (fileInfo, bool, error) {
	if r, ok := s.stats[p]; ok {
		return r.fi, r.ok, r.err
	}
	fi, ok, err := statRegular(p)
	if !s.frozen {
		s.stats[p] = statResult{fi, ok, err}
	}
	return fi, ok, err
}

// rotatedNames returns the names beside path that its rotated files may
// have: path.* and path-*, compressed ones left out, sorted.
func (s *scan) rotatedNames(path string) []string {
	dir, base := filepath.Split(path)
	dir = cleanGlobPath(dir)
	es := s.list(dir)
	// The names that begin with base follow each other, and '-' sorts
	// before '.': from the first name not below base+"-", those that
	// go on with '-' or '.'.
	var out []string
	from := base + "-"
	i := sort.Search(len(es), func(i int) bool { return es[i].name >= from })
	for ; i < len(es) && strings.HasPrefix(es[i].name, base); i++ {
		if c := es[i].name[len(base)]; c != '-' && c != '.' {
			break
		}
		if p := filepath.Join(dir, es[i].name); !Compressed(p) {
			out = append(out, p)
		}
	}
	return out
}

// rotatedAll returns the uncompressed matches of the rotated globs, each
// once, in the globs' order.
func (s *scan) rotatedAll(rotated []string) []string {
	if s.rotDone {
		return s.rotated
	}
	seen := make(map[string]bool)
	var out []string
	for _, pat := range rotated {
		for _, h := range s.glob(pat) { // checked by New
			if p := h.path; !seen[p] && !Compressed(p) {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	if !s.frozen {
		s.rotated, s.rotDone = out, true
	}
	return out
}

// rotatedPaths returns the names path's rotated files may have: the
// matches of the rotated globs, or without them path.* and path-*;
// compressed ones and path itself left out.
func (s *scan) rotatedPaths(path string, rotated []string) []string {
	if len(rotated) == 0 {
		return s.rotatedNames(path)
	}
	all := s.rotatedAll(rotated)
	if i := slices.Index(all, path); i >= 0 {
		return slices.Delete(slices.Clone(all), i, i+1)
	}
	return all
}

// look is one scan of the source's files shared by every goroutine that
// asked for one while the previous one was being made: the glob matches,
// and the rotated names of the matches, of the literal globs, of the
// followed files' bases (where they were found) and of the restored
// checkpoints' paths (or the matches of Config.Rotated). When every
// follower notices a rotation at once (logrotate renaming thousands of
// files), they share a few looks instead of globbing the directory each.
type look struct {
	seq     uint64 // looks are numbered as they begin (lookShare.seq)
	sc      *scan
	matches []fileInfo                  // the glob matches, as expand
	rotated []fileInfo                  // the rotated names that are no glob match of a file found before
	byID    map[stream.FileID]*fileInfo // the first path of each file
}

// newLook looks at the files now.
func (d *discovery) newLook() *look {
	sc := newScan()
	sc.known, sc.learnt = d.known, make(map[string]knownFile, len(d.known))
	defer func() { d.known = sc.learnt }() // looks are made one at a time
	lk := &look{sc: sc, byID: make(map[stream.FileID]*fileInfo)}
	lk.matches = d.expandIn(sc)
	for i := range lk.matches {
		if _, ok := lk.byID[lk.matches[i].id]; !ok {
			lk.byID[lk.matches[i].id] = &lk.matches[i]
		}
	}
	var cands []fileInfo
	if len(d.cfg.Rotated) > 0 {
		cands = d.statAll(sc, sc.rotatedAll(d.cfg.Rotated))
	} else {
		for _, b := range d.bases(lk) {
			cands = append(cands, d.candidatesIn(sc, b)...)
		}
	}
	for _, c := range cands {
		if _, ok := lk.byID[c.id]; !ok {
			lk.byID[c.id] = nil // placed below
			lk.rotated = append(lk.rotated, c)
		}
	}
	for i := range lk.rotated {
		lk.byID[lk.rotated[i].id] = &lk.rotated[i]
	}
	sc.frozen = true
	return lk
}

// bases returns the paths whose rotated names a look covers: the
// matches, the literal globs (even while their file is missing), the
// followed files' bases and the restored checkpoints' paths. A followed
// file or checkpoint whose file lk found as a match at its base is not
// repeated (a path may still come twice: its candidates are found twice).
func (d *discovery) bases(lk *look) []string {
	out := make([]string, 0, len(lk.matches))
	for _, m := range lk.matches {
		out = append(out, m.path)
	}
	for _, pat := range d.cfg.Paths {
		if !hasMeta(pat) {
			out = append(out, pat)
		}
	}
	atMatch := func(id stream.FileID, p string) bool {
		fi := lk.byID[id]
		return fi != nil && fi.matched && fi.path == p
	}
	out = append(out, d.reg.bases(atMatch)...)
	for _, cp := range d.cfg.Checkpoints {
		if cp.Path != "" && !atMatch(cp.File, cp.Path) {
			out = append(out, cp.Path)
		}
	}
	return out
}

// locate finds the glob match that is the file id, if any.
func (lk *look) locate(id stream.FileID) (string, bool) {
	if fi := lk.byID[id]; fi != nil && fi.matched {
		return fi.path, true
	}
	return "", false
}

// find finds the file id anywhere in the look: a glob match or a rotated
// name.
func (lk *look) find(id stream.FileID) (string, bool) {
	if fi := lk.byID[id]; fi != nil {
		return fi.path, true
	}
	return "", false
}

// lookMark returns a mark for lookSince: take it before looking at a
// file, and a look begun after it saw the file as it was then or later.
func (d *discovery) lookMark() uint64 {
	d.looks.mu.Lock()
	defer d.looks.mu.Unlock()
	return d.looks.seq
}

// lookSince returns the last look made if it began after mark, else a new
// one (look): when thousands of files are found moved at once (logrotate),
// the first look made after they were noticed serves them all.
func (d *discovery) lookSince(mark uint64) *look {
	d.looks.mu.Lock()
	last := d.looks.last
	d.looks.mu.Unlock()
	if last != nil && last.seq > mark {
		return last
	}
	return d.look()
}

// lookShare hands out looks: one made after the ask, shared by everyone
// who asked while the previous one was being made.
type lookShare struct {
	mu      sync.Mutex
	running bool
	next    *lookBatch // the askers waiting for the next look
	seq     uint64     // the number of the last look begun
	last    *look      // the last look made
}

type lookBatch struct {
	done chan struct{}
	lk   *look
}

// look returns a look at the files begun after the call.
func (d *discovery) look() *look {
	ls := &d.looks
	ls.mu.Lock()
	if ls.next == nil {
		ls.next = &lookBatch{done: make(chan struct{})}
	}
	mine := ls.next
	if ls.running {
		ls.mu.Unlock()
		<-mine.done
		return mine.lk
	}
	// Make looks until nobody waits: this one, and one for whoever
	// asks meanwhile.
	ls.running = true
	for ls.next != nil {
		b := ls.next
		ls.next = nil
		ls.seq++
		seq := ls.seq
		ls.mu.Unlock()
		b.lk = d.newLook()
		b.lk.seq = seq
		close(b.done)
		ls.mu.Lock()
		ls.last = b.lk
	}
	ls.running = false
	ls.mu.Unlock()
	return mine.lk
}
