//go:build unix

package tailer

import (
	"os"
	"syscall"
)

// statID returns the identity and hard-link count of a file from its
// os.FileInfo (which must come from Stat/Lstat/File.Stat on a Unix system).
func statID(fi os.FileInfo) (FileID, uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileID{}, 0, false
	}
	return FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, uint64(st.Nlink), true
}

// IDOf returns the identity of the file fi describes (from os.Stat or
// File.Stat); ok is false where the system gives none.
func IDOf(fi os.FileInfo) (id FileID, ok bool) {
	id, _, ok = statID(fi)
	return id, ok
}
