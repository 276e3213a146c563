package tailer

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
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
	dirs    map[string][]fs.DirEntry // sorted by name; nil: not a readable directory
	stats   map[string]statResult    // statRegular of each path
	rotated []string                 // the matches of Config.Rotated (rotatedAll)
	rotDone bool
}

// statResult is what statRegular returned for a path.
type statResult struct {
	fi  fileInfo
	ok  bool
	err error
}

func newScan() *scan {
	return &scan{dirs: make(map[string][]fs.DirEntry), stats: make(map[string]statResult)}
}

// list returns the entries of dir sorted by name, nil if it cannot be
// read (missing, not a directory, no permission: as filepath.Glob, which
// ignores those).
func (s *scan) list(dir string) []fs.DirEntry {
	if es, ok := s.dirs[dir]; ok {
		return es
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		es = nil
	}
	s.dirs[dir] = es
	return es
}

// glob is filepath.Glob with the directories read through the cache: the
// same matches, in the same order. The pattern must be valid.
func (s *scan) glob(pattern string) []string {
	if !hasMeta(pattern) {
		if _, err := os.Lstat(pattern); err != nil {
			return nil
		}
		return []string{pattern}
	}
	dir, file := filepath.Split(pattern)
	dir = cleanGlobPath(dir)
	if !hasMeta(dir) {
		return s.globDir(dir, file, nil)
	}
	if dir == pattern { // as filepath.Glob: no infinite recursion
		return nil
	}
	var out []string
	for _, d := range s.glob(dir) {
		out = s.globDir(d, file, out)
	}
	return out
}

// globDir appends the names in dir that match pattern, joined to dir.
func (s *scan) globDir(dir, pattern string, out []string) []string {
	for _, e := range s.list(dir) {
		if ok, _ := filepath.Match(pattern, e.Name()); ok {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
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
	s.stats[p] = statResult{fi, ok, err}
	return fi, ok, err
}

// rotatedNames returns the names beside path that its rotated files may
// have: path.* and path-*, compressed ones left out, sorted.
func (s *scan) rotatedNames(path string) []string {
	dir, base := filepath.Split(path)
	dir = cleanGlobPath(dir)
	es := s.list(dir)
	var out []string
	for _, sep := range []string{".", "-"} {
		prefix := base + sep
		i := sort.Search(len(es), func(i int) bool { return es[i].Name() >= prefix })
		for ; i < len(es) && strings.HasPrefix(es[i].Name(), prefix); i++ {
			if p := filepath.Join(dir, es[i].Name()); !Compressed(p) {
				out = append(out, p)
			}
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
	for _, pat := range rotated {
		for _, p := range s.glob(pat) { // checked by New
			if !seen[p] && !Compressed(p) {
				seen[p] = true
				s.rotated = append(s.rotated, p)
			}
		}
	}
	s.rotDone = true
	return s.rotated
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
