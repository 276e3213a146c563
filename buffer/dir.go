package buffer

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"syscall"
)

// geteuid is os.Geteuid; the tests change it to check ownership as
// another user than root.
var geteuid = os.Geteuid

// accessWX asks access(2) for write and search permission.
const accessWX = 0x2 | 0x1 // W_OK | X_OK

// CheckDir checks that dir can hold a buffer file named name: it is a
// directory (or can be created: its nearest existing parent is a writable
// directory) and is writable, and that no one but this process's user and
// root can replace what is in it (its owner is this process's user or root, and neither it nor a directory above it is writable by others). It reports locked when
// the buffer file there exists and another process (a running logtally)
// holds its lock; that is not an error. It changes nothing on disk.
func CheckDir(dir, name string) (locked bool, err error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		parent := filepath.Dir(dir)
		for {
			pst, perr := os.Stat(parent)
			if perr == nil {
				if !pst.IsDir() {
					return false, fmt.Errorf("%q cannot be created: %s is not a directory", dir, parent)
				}
				if err := syscall.Access(parent, accessWX); err != nil {
					return false, fmt.Errorf("%q cannot be created: %s is not writable", dir, parent)
				}
				if err := checkAncestors(parent, dir); err != nil {
					return false, err
				}
				return false, nil
			}
			if !errors.Is(perr, os.ErrNotExist) {
				return false, fmt.Errorf("%q cannot be created: %w", dir, perr)
			}
			if next := filepath.Dir(parent); next != parent {
				parent = next
				continue
			}
			return false, fmt.Errorf("%q cannot be created: no existing parent", dir)
		}
	case errors.Is(err, syscall.ENOTDIR):
		return false, fmt.Errorf("%q cannot be created: a parent is a file, not a directory", dir)
	case err != nil:
		return false, fmt.Errorf("%q: %w", dir, err)
	case !st.IsDir():
		return false, fmt.Errorf("%q is not a directory", dir)
	}
	if err := syscall.Access(dir, accessWX); err != nil {
		return false, fmt.Errorf("%q is not writable: %w", dir, err)
	}
	if err := checkAncestors(dir, dir); err != nil {
		return false, err
	}
	path := filepath.Join(dir, name)
	fst, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !fst.Mode().IsRegular() {
		return false, fmt.Errorf("%s is not a regular file (%v): refusing it as the buffer; remove it", path, fst.Mode().Type())
	}
	if err := checkSafe(path, fst, false); err != nil {
		return false, err
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return false, nil // the lock goes with the file's close
}

// checkAncestors checks dir and every directory above it with checkSafe
// (stateDir names the state dir in messages): whoever can write in one of
// them can rename the state dir away and put another in its place.
// Directories above dir may be writable by others if their sticky bit is
// set (/tmp): then only an entry's owner may rename it.
func checkAncestors(dir, stateDir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("state dir %q: %w", stateDir, err)
	}
	absState, _ := filepath.Abs(stateDir)
	for d, first := abs, true; ; first = false {
		st, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("state dir %q: %w", stateDir, err)
		}
		if err := checkSafe(d, st, !first); err != nil {
			if d != absState {
				return fmt.Errorf("state dir %q: %w", stateDir, err)
			}
			return err
		}
		next := filepath.Dir(d)
		if next == d {
			return nil
		}
		d = next
	}
}

// checkSafe refuses a file or directory that someone other than this
// process's user and root could replace or change, as OpenSSH refuses a
// key file others can write: its owner must be this process's effective
// user or root (root itself accepts any owner: `sudo logtally replay` on
// the daemon user's state dir), and it must not be writable by its group
// or by others (unless, when stickyOK, it is a directory with the sticky
// bit set).
func checkSafe(path string, fi os.FileInfo, stickyOK bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil // not a Unix file system view: nothing to check
	}
	euid := geteuid()
	if euid != 0 && st.Uid != 0 && int(st.Uid) != euid {
		return fmt.Errorf("%s is owned by %s, not by this process's user (%s) or root: "+
			"its owner could replace the buffer or the control socket; chown it to %s or use another state_dir",
			path, userName(st.Uid), userName(uint32(euid)), userName(uint32(euid)))
	}
	mode := fi.Mode()
	if mode.Perm()&0o022 != 0 && !(stickyOK && mode.IsDir() && mode&os.ModeSticky != 0) {
		who := "its group and others"
		switch mode.Perm() & 0o022 {
		case 0o020:
			who = "its group (gid " + fmt.Sprint(st.Gid) + ")"
		case 0o002:
			who = "every user"
		}
		return fmt.Errorf("%s has mode %#o, owner %s: %s can write in it and could replace the buffer or the control socket; "+
			"run chmod go-w %s", path, mode.Perm(), userName(st.Uid), who, path)
	}
	return nil
}

// userName returns "name (uid N)", or "uid N" when the name is unknown.
func userName(uid uint32) string {
	if u, err := user.LookupId(fmt.Sprint(uid)); err == nil {
		return fmt.Sprintf("%s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}
