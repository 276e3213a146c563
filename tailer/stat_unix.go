//go:build unix

package tailer

import (
	"os"
	"syscall"

	"github.com/logtally/logtally/stream"
)

// statID returns the identity and hard-link count of a file from its
// os.FileInfo (which must come from Stat/Lstat/File.Stat on a Unix system).
func statID(fi os.FileInfo) (stream.FileID, uint64, bool) {
	id, ok := stream.IDOf(fi)
	if !ok {
		return stream.FileID{}, 0, false
	}
	return id, uint64(fi.Sys().(*syscall.Stat_t).Nlink), true
}
