package tailer

import (
	"errors"
	"path/filepath"

	"github.com/logtally/logtally/stream"
)

// Located is where Locate found a checkpoint's file.
type Located struct {
	// Path is the file's path now.
	Path string
	// ID is the file's identity now: another than the checkpoint's when
	// the file was copied or restored (a rebuilt host).
	ID stream.FileID
	// Size is the file's size now.
	Size int64
}

// Locate is LocateSource for a source with only globs: rotated files
// beside its files, symbolic links leaving their directories not followed.
func Locate(globs []string, cp stream.Checkpoint) (loc Located, ok bool) {
	return LocateSource(SourceFiles{Paths: globs}, cp)
}

// LocateSource looks for the file a checkpoint (possibly written on another host,
// or before the files were restored from a backup) describes: a regular,
// uncompressed file at least cp.Offset bytes long whose first cp.FPLen
// bytes have the checkpoint's fingerprint and whose bytes before cp.Offset
// pass its tail check (when it records one). It tries cp.Path first, then
// its rotated names (P.*, P-*, or the matches of src.Rotated when set),
// then the files the globs match, also with a rotation suffix, preferring
// the checkpoint's own identity. A symbolic link src does not allow is
// not read. Files
// being renamed while it looks can be missed: a caller that finds nothing
// may look again. A checkpoint with an empty fingerprint
// (FPLen 0) matches only by identity. ok is false when no file fits.
func LocateSource(src SourceFiles, cp stream.Checkpoint) (loc Located, ok bool) {
	globs := src.Paths
	lp := newLinkPolicy(src.Paths, src.Rotated, src.FollowSymlinks)
	var found []fileInfo
	seen := map[string]bool{}
	try := func(p string) {
		if seen[p] || Compressed(p) {
			return
		}
		seen[p] = true
		if _, err := lp.resolve(p); errors.Is(err, errRefusedLink) {
			return
		}
		fi, isFile, err := statRegular(p)
		if err != nil || !isFile || fi.size < cp.Offset {
			return
		}
		if fi.id != cp.File {
			if cp.FPLen == 0 {
				return
			}
			if match, err := stream.HasFingerprint(p, cp.FPLen, cp.FPSum); err != nil || !match {
				return
			}
		} else if cp.FPLen > 0 {
			if match, err := stream.HasFingerprint(p, cp.FPLen, cp.FPSum); err != nil || !match {
				return // a reused inode
			}
		}
		if match, err := stream.FileTailMatches(p, cp); err != nil || !match {
			return // another file that begins with the same bytes
		}
		found = append(found, fi)
	}
	if cp.Path != "" {
		try(cp.Path)
	}
	// The rotated names of the checkpoint's path, and every match of each
	// glob and of the glob with a rotation suffix: the base file itself
	// may be missing for a moment (renamed, not yet created again).
	if cp.Path != "" {
		for _, p := range rotatedPaths(cp.Path, src.Rotated) {
			try(p)
		}
	}
	var pats []string
	for _, pat := range globs {
		pats = append(pats, pat, pat+".*", pat+"-*")
	}
	pats = append(pats, src.Rotated...)
	for _, pat := range pats {
		paths, _ := filepath.Glob(pat)
		for _, p := range paths {
			try(p)
		}
	}
	for _, fi := range found {
		if fi.id == cp.File {
			return Located{Path: fi.path, ID: fi.id, Size: fi.size}, true
		}
	}
	if len(found) > 0 {
		fi := found[0]
		return Located{Path: fi.path, ID: fi.id, Size: fi.size}, true
	}
	return Located{}, false
}
