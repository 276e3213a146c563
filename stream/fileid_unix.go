//go:build unix

package stream

import (
	"os"
	"syscall"
)

// IDOf returns the identity of the file fi describes (from os.Stat,
// os.Lstat or File.Stat); ok is false where the system gives none.
func IDOf(fi os.FileInfo) (id FileID, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileID{}, false
	}
	return FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, true
}
