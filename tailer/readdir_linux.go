package tailer

import (
	"encoding/binary"
	"os"
	"slices"
	"strings"
	"syscall"
)

// readDir returns the entries of dir sorted by name, with their inode
// numbers and types as getdents64 gives them: no stat per entry.
func readDir(dir string) ([]dirEnt, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var out []dirEnt
	buf := make([]byte, 32<<10)
	for {
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, rerr = syscall.ReadDirent(int(fd), buf)
			return rerr != syscall.EAGAIN
		}); err != nil {
			return nil, err
		}
		if rerr != nil {
			return nil, &os.PathError{Op: "readdirent", Path: dir, Err: rerr}
		}
		if n <= 0 {
			break
		}
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8,
		// name (NUL-terminated).
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			name := b[19:reclen]
			if i := slices.Index(name, 0); i >= 0 {
				name = name[:i]
			}
			if s := string(name); s != "." && s != ".." {
				out = append(out, dirEnt{name: s, ino: binary.NativeEndian.Uint64(b), typ: direntType(b[18])})
			}
			b = b[reclen:]
		}
	}
	slices.SortFunc(out, func(a, b dirEnt) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// direntType maps a d_type to the entType of a regular file, a symbolic
// link or anything else.
func direntType(t byte) entType {
	switch t {
	case syscall.DT_REG:
		return entRegular
	case syscall.DT_LNK, syscall.DT_UNKNOWN:
		return entMaybeLink
	}
	return entOther
}
