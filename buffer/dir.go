package buffer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// accessWX asks access(2) for write and search permission.
const accessWX = 0x2 | 0x1 // W_OK | X_OK

// CheckDir checks that dir can hold a buffer file named name: it is a
// directory (or can be created: its nearest existing parent is a writable
// directory) and is writable. It reports locked when the buffer file there
// exists and another process (a running logtally) holds its lock; that is
// not an error. It changes nothing on disk.
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
	f, err := os.Open(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
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
