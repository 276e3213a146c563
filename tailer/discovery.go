package tailer

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Discovery: the files the globs match and the rotated candidates of a path.

// fileInfo is a file found by glob or as a rotated candidate.
type fileInfo struct {
	path    string
	id      FileID
	size    int64
	mtime   time.Time
	matched bool // path is a glob match
}

// expand returns the regular, uncompressed files the globs match.
func (t *Tailer) expand() []fileInfo {
	var out []fileInfo
	seen := make(map[string]bool)
	for _, pat := range t.cfg.Paths {
		paths, _ := filepath.Glob(pat) // pattern validated in New
		for _, p := range paths {
			if seen[p] || Compressed(p) {
				continue
			}
			seen[p] = true
			if fi, ok := t.statFile(p); ok {
				fi.matched = true
				out = append(out, fi)
			}
		}
	}
	return out
}

// candidates returns the rotated candidates of path: uncompressed regular
// files named path.* or path-*.
func (t *Tailer) candidates(path string) []fileInfo {
	var out []fileInfo
	base := escapeGlob(path)
	for _, pat := range []string{base + ".*", base + "-*"} {
		paths, _ := filepath.Glob(pat)
		for _, p := range paths {
			if Compressed(p) {
				continue
			}
			if fi, ok := t.statFile(p); ok {
				fi.matched = t.matches(p)
				out = append(out, fi)
			}
		}
	}
	return out
}

// statFile stats a regular file; errors other than not-exist are logged.
func (t *Tailer) statFile(p string) (fileInfo, bool) {
	st, err := os.Stat(p)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			t.log.logErr("stat "+p, slog.LevelWarn, "cannot stat file", "err", err, "path", p)
		}
		return fileInfo{}, false
	}
	if !st.Mode().IsRegular() {
		return fileInfo{}, false
	}
	id, _, ok := statID(st)
	if !ok {
		return fileInfo{}, false
	}
	return fileInfo{path: p, id: id, size: st.Size(), mtime: st.ModTime()}, true
}

// matches reports whether path is matched by one of the globs.
func (t *Tailer) matches(path string) bool {
	if Compressed(path) {
		return false
	}
	for _, pat := range t.cfg.Paths {
		if ok, _ := filepath.Match(pat, path); ok {
			return true
		}
	}
	return false
}

// locate finds the glob match that is the file id, if any.
func (t *Tailer) locate(id FileID) (string, bool) {
	for _, fi := range t.expand() {
		if fi.id == id {
			return fi.path, true
		}
	}
	return "", false
}

var compressedExt = []string{".gz", ".zst", ".bz2", ".xz", ".lz4", ".zip"}

// Compressed reports whether path names a compressed archive by its
// extension (.gz, .zst, .bz2, .xz, .lz4, .zip). The tailer never follows
// those; `logtally replay` reads them.
func Compressed(path string) bool {
	lower := strings.ToLower(path)
	for _, ext := range compressedExt {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}

// escapeGlob quotes the glob metacharacters in a literal path.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// stillMatched reports whether path still names the file id and is a glob
// match. A stat error other than not-exist counts as matched (nothing is
// known) and is logged.
func (t *Tailer) stillMatched(id FileID, path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false
		}
		t.log.logErr("stat "+path, slog.LevelWarn, "cannot stat followed path", "err", err, "path", path)
		return true
	}
	got, _, ok := statID(st)
	return ok && got == id && t.matches(path)
}

// findRenamed looks for the file id among the rotated candidates of path.
func (t *Tailer) findRenamed(id FileID, path string) (string, bool) {
	for _, c := range t.candidates(path) {
		if c.id == id {
			return c.path, true
		}
	}
	return "", false
}
