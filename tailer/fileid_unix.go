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
