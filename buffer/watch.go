package buffer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ErrTruncated is returned by every method of a Buffer whose open file was
// found shorter than the pages bbolt uses (a truncate, a cleanup script
// emptying it): reading those pages through bbolt's memory map would kill
// the process with SIGBUS. The Buffer is then unusable: stop, Close it
// without anything else, and let the restart move the file aside and
// rebuild it (Verify reports it as ErrCorrupt).
var ErrTruncated = errors.New("buffer file truncated while open")

// view, update and write run bbolt transactions once checkSize has found
// the open file whole. A truncate between the check and the transaction's
// reads of the map makes a read fault: guard turns that fault into
// ErrTruncated instead of a crash, and every later call returns
// ErrTruncated. update holds wmu; write is update for a caller holding it.
func (b *Buffer) view(fn func(*bolt.Tx) error) error {
	return b.guard(false, func() error { return b.db.View(fn) })
}

func (b *Buffer) update(fn func(*bolt.Tx) error) error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	return b.write(fn)
}

func (b *Buffer) write(fn func(*bolt.Tx) error) error {
	return b.guard(true, func() error { return b.db.Update(fn) })
}

// guard runs tx, a bbolt transaction, with faults of this goroutine made
// panics (runtime/debug.SetPanicOnFault) and recovers one that came from
// the file truncated under the map: a fault with an address, after which
// checkSize finds the file short. It returns checkSize's error then; any
// other panic goes on. A write transaction that faulted may leave bbolt's
// writer lock held (its rollback reads the map too): wedged is set, so
// Close does not wait on it, and no later writer reaches it, as every
// writer holds wmu and checks the size first.
func (b *Buffer) guard(write bool, tx func() error) (err error) {
	if err := b.checkSize(); err != nil {
		return err
	}
	defer func(was bool) {
		debug.SetPanicOnFault(was)
		r := recover()
		if r == nil {
			return
		}
		if _, fault := r.(interface{ Addr() uintptr }); !fault {
			panic(r)
		}
		lost := b.checkSize()
		if lost == nil {
			panic(r)
		}
		if write {
			b.wedged.Store(true)
		}
		err = lost
	}(debug.SetPanicOnFault(true))
	return tx()
}

// Truncated returns an error wrapping ErrTruncated, naming the file's size
// and the size bbolt needs, if the open file is shorter than bbolt's
// high-water mark (the newest meta page's page count times the page size),
// else nil. Once it has found the file truncated, the Buffer stays so.
// It reads the file's size and its two meta pages with plain reads, never
// through the map. A size that cannot be read is not an error here: bbolt
// reports its own.
func (b *Buffer) Truncated() error { return b.checkSize() }

func (b *Buffer) checkSize() error {
	if e := b.lost.Load(); e != nil {
		return *e
	}
	if b.sizer == nil {
		return nil
	}
	st, err := b.sizer.Stat()
	if err != nil {
		return nil
	}
	size := st.Size()
	pageSize := b.pageSize
	var need int64
	var why string
	if m, ok := newestMeta(&verifier{r: b.sizer, size: size}, pageSize); ok {
		need = int64(m.pgid) * int64(m.pageSize)
		if size >= need {
			b.hwm.Store(need)
			return nil
		}
		why = fmt.Sprintf("%d pages of %d bytes (transaction %d)", m.pgid, m.pageSize, m.txid)
	} else {
		need, why = max(2*pageSize, b.hwm.Load()), "when last checked; its meta pages are no longer readable"
		if size >= 2*pageSize {
			why = "when last checked; neither of its meta pages is valid any more"
		}
	}
	err = fmt.Errorf("%w: %s is %d bytes, but bbolt uses %d bytes, %s", ErrTruncated, b.db.Path(), size, need, why)
	b.lost.CompareAndSwap(nil, &err)
	return *b.lost.Load()
}

// newestMeta returns the valid meta page with the greatest transaction id.
func newestMeta(v *verifier, pageSize int64) (meta, bool) {
	m0, err0 := v.readMeta(0)
	m1, err1 := v.readMeta(pageSize)
	switch {
	case err0 == nil && err1 == nil:
		if m1.txid > m0.txid {
			return m1, true
		}
		return m0, true
	case err0 == nil:
		return m0, true
	case err1 == nil:
		return m1, true
	}
	return meta{}, false
}

// fileID is a file's identity: device and inode.
type fileID struct {
	dev, ino uint64
	err      error // why the identity is unknown, if it is
}

// statFile returns the identity of the file at path. Open records it right
// after bbolt opened the file, so that Replaced can tell whether the path
// still names the file the Buffer writes to.
func statFile(path string) fileID {
	st, err := os.Stat(path)
	if err != nil {
		return fileID{err: err}
	}
	return idOf(st)
}

func idOf(st fs.FileInfo) fileID {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{err: errors.New("no device and inode in the file's status")}
	}
	return fileID{dev: uint64(sys.Dev), ino: sys.Ino} // Dev is not a uint64 on every platform
}

// Replaced reports whether the buffer's path no longer names the file the
// Buffer has open: the file was deleted (a cleanup script, a wrong
// logrotate glob) or another file was put in its place. The Buffer goes on
// working on the unlinked file, but nothing it writes survives a restart,
// which would start from what the path then holds: the counts pending in
// the open file would be lost and, with no checkpoints, every log file read
// and counted again. Stop the process and call Restore.
//
// An error means the path could not be checked (not that it is missing);
// the answer is then false.
func (b *Buffer) Replaced() (bool, error) {
	if b.file.err != nil {
		// The identity was not taken at Open: only a missing path can
		// still be told.
		if _, err := os.Lstat(b.Path()); errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
		return false, fmt.Errorf("buffer %s: identity of the open file unknown: %w", b.Path(), b.file.err)
	}
	st, err := os.Stat(b.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("check buffer %s: %w", b.Path(), err)
	}
	id := idOf(st)
	return id.err != nil || id != b.file, nil
}

// Restore writes a consistent copy of the open database to the buffer's
// path, in the state of the last committed transaction: to a temporary
// file in the same directory (recreated if it was removed too), synced,
// then renamed over the path, and the directory synced. If another file
// sits at the path, it is first kept under the name
// "<path>.replaced-<UTC time>", which Restore returns; the path is never
// left empty. If the path still names the open file, Restore does nothing.
//
// Call it when Replaced reports true, after the last Commit, Seal,
// SaveProgress or Ack: what is written to the Buffer after the copy is
// lost. The copy is a new file, so Replaced still reports true afterwards,
// and the Buffer keeps writing to the unlinked one: the caller must stop
// using it, Close it, and Open the path again (in practice: exit, and let
// the restart open the restored file).
func (b *Buffer) Restore() (movedAside string, err error) {
	path := b.Path()
	replaced, err := b.Replaced()
	if err != nil {
		return "", fmt.Errorf("restore buffer: %w", err)
	}
	if !replaced {
		return "", nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", fmt.Errorf("restore buffer %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".restore-*")
	if err != nil {
		return "", fmt.Errorf("restore buffer %s: %w", path, err)
	}
	tmpPath := tmp.Name()
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmpPath)
		}
	}()
	// WriteTo reads through bbolt's own handle, the open (unlinked)
	// file, never through the path.
	if err = b.view(func(tx *bolt.Tx) error {
		_, err := tx.WriteTo(tmp)
		return err
	}); err != nil {
		return "", fmt.Errorf("restore buffer %s: copy: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return "", fmt.Errorf("restore buffer %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return "", fmt.Errorf("restore buffer %s: %w", path, err)
	}
	if _, serr := os.Lstat(path); serr == nil {
		if movedAside, err = keepAside(path, b.clock.Now()); err != nil {
			return "", fmt.Errorf("restore buffer %s: keep the file found there: %w", path, err)
		}
	}
	if err = os.Rename(tmpPath, path); err != nil {
		return movedAside, fmt.Errorf("restore buffer %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return movedAside, fmt.Errorf("restore buffer %s: %w", path, err)
	}
	return movedAside, nil
}

// keepAside gives the file at path a second name, path.replaced-<UTC
// time now>, and returns it. A regular file is hard-linked, so the path names
// it until the restored copy is renamed over it; anything else is renamed.
func keepAside(path string, now time.Time) (string, error) {
	base := path + ".replaced-" + now.UTC().Format("20060102T150405Z")
	for i := 0; ; i++ {
		aside := base
		if i > 0 {
			aside = fmt.Sprintf("%s.%d", base, i)
		}
		if _, err := os.Lstat(aside); err == nil {
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		err := os.Link(path, aside)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			err = os.Rename(path, aside)
		}
		if err != nil {
			return "", err
		}
		return aside, nil
	}
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
