//go:build unix

package tailer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/logtally/logtally/stream"
)

// Symlinks: a link whose target leaves the configured directories is not
// read (see Config.FollowSymlinks).

// linkPolicy decides which symbolic links a source may read through.
type linkPolicy struct {
	dirs   []string // the directories of the source's globs and rotated globs (patterns)
	follow bool     // Config.FollowSymlinks: every link is followed
}

func newLinkPolicy(globs, rotated []string, follow bool) linkPolicy {
	lp := linkPolicy{follow: follow}
	seen := map[string]bool{}
	for _, g := range slices.Concat(globs, rotated) {
		d := filepath.Dir(filepath.Clean(g))
		if !seen[d] {
			seen[d] = true
			lp.dirs = append(lp.dirs, d)
		}
	}
	return lp
}

// errRefusedLink is wrapped by the error of a refused link.
var errRefusedLink = errors.New("symbolic link leaves the configured directories")

// refusedLinkError names a refused link and the directory of its target.
type refusedLinkError struct {
	path, targetDir string
}

func (e *refusedLinkError) Error() string {
	return fmt.Sprintf("%s: %v (target in %s; set follow_symlinks = true to read it)", e.path, errRefusedLink, e.targetDir)
}

func (e *refusedLinkError) Unwrap() error { return errRefusedLink }

// resolve returns the path to open for p: p itself when it is not a
// symbolic link, else its target, if that lies in one of the configured
// directories (or every link is followed). A refused link is a
// *refusedLinkError.
func (lp linkPolicy) resolve(p string) (string, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return "", err
	}
	if st.Mode()&os.ModeSymlink == 0 || lp.follow {
		return p, nil
	}
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(target)
	for _, d := range lp.dirs {
		if strings.ContainsAny(d, `*?[\`) {
			if ok, _ := filepath.Match(d, dir); ok {
				return target, nil
			}
			continue
		}
		if d == dir {
			return target, nil
		}
		if r, err := filepath.EvalSymlinks(d); err == nil && r == dir {
			return target, nil
		}
	}
	return "", &refusedLinkError{path: p, targetDir: dir}
}

// open opens p for reading if the policy allows it. Unless every link is
// followed, the file opened is never a symbolic link (O_NOFOLLOW): the
// checked path itself when it is no link, else the link's checked target,
// so a link put in place between the check and the open is not followed.
func (lp linkPolicy) open(p string) (*os.File, error) {
	if lp.follow {
		return os.Open(p)
	}
	target, err := lp.resolve(p)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(target, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("open %s: replaced by a symbolic link while opening: %w", p, errRefusedLink)
		}
		return nil, err
	}
	return f, nil
}

// allowed reports whether p may be read, logging and counting a refused
// link once per path. Other errors (a dangling link, a file gone) are
// left to the stat that follows.
func (d *discovery) allowed(p string) bool {
	_, err := d.links.resolve(p)
	var rl *refusedLinkError
	if !errors.As(err, &rl) {
		return true
	}
	d.refused(rl)
	return false
}

// refused logs a refused link at WARN once per path, and counts it.
func (d *discovery) refused(rl *refusedLinkError) {
	d.mu.Lock()
	seen := d.refusedLinks[rl.path]
	d.refusedLinks[rl.path] = true
	d.mu.Unlock()
	if seen {
		return
	}
	d.stats.refusedLinks.Add(1)
	d.log.Warn("not following a symbolic link that leaves the source's directories (follow_symlinks = true allows it)",
		"path", rl.path, "target_dir", rl.targetDir)
}

// open opens p through the Tailer's link policy; a refused link is logged
// (once per path) and counted.
func (d *discovery) open(p string) (*os.File, error) {
	f, err := d.links.open(p)
	var rl *refusedLinkError
	if errors.As(err, &rl) {
		d.refused(rl)
	}
	return f, err
}

// openID opens path with open and returns it, with its FileInfo, only if
// it is still the file id: a rotation may have put another file at path
// since it was seen. Another file there is an os.ErrNotExist ("replaced
// while opening").
func openID(open func(string) (*os.File, error), path string, id stream.FileID) (*os.File, os.FileInfo, error) {
	f, err := open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if got, _, ok := statID(st); !ok || got != id {
		f.Close()
		return nil, nil, fmt.Errorf("open %s: %w (replaced while opening)", path, os.ErrNotExist)
	}
	return f, st, nil
}

// OpenLocated opens the file a Locate found (path and identity) under the
// source's symbolic-link rule, as a Tailer of src would, and only if path
// still names that file.
func OpenLocated(src SourceFiles, l Located) (*os.File, error) {
	lp := newLinkPolicy(src.Paths, src.Rotated, src.FollowSymlinks)
	f, _, err := openID(lp.open, l.Path, l.ID)
	return f, err
}
