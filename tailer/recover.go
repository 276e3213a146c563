package tailer

import (
	"bytes"
	"log/slog"
	"slices"
	"time"

	"github.com/logtally/logtally/stream"
)

// Recovery: rotated files written while the daemon was down (Config.Since).

// recoverUnread returns followers at offset 0 for the rotated files written
// while the daemon was down that were never read: with a non-zero
// Config.Since, every rotated candidate (in order, not a glob match) that
//   - is claimed by no checkpoint: neither its own (by identity, resumed or
//     waiting) nor as the copy of one (in planned),
//   - is not empty and was modified after Since minus one second,
//   - does not begin with the bytes a restored checkpoint's fingerprint
//     covers (a copy of a file read up to there or further),
//   - and whose first bytes (up to FingerprintSize) are not the beginning of
//     another file found (a copy, complete or being written, of a file that
//     is read or accounted for; of two such candidates the longer is read).
//
// The package doc explains why none of them can have been counted.
func (rs *restorer) recoverUnread(order []*fileInfo, planned map[stream.FileID]*follower) []*follower {
	since := rs.cfg.Since
	if since.IsZero() {
		return nil
	}
	claimed := func(id stream.FileID) bool {
		if planned[id] != nil {
			return true
		}
		if _, ok := rs.waiting[id]; ok {
			return true
		}
		return slices.ContainsFunc(rs.cfg.Checkpoints, func(cp stream.Checkpoint) bool { return cp.File == id })
	}
	heads := make(map[stream.FileID][]byte, len(order))
	headOf := func(fi *fileInfo) ([]byte, error) {
		if h, ok := heads[fi.id]; ok {
			return h, nil
		}
		h, err := rs.disc.readHead(fi.path)
		if err != nil {
			return nil, err
		}
		heads[fi.id] = h
		return h, nil
	}
	after := since.Add(-time.Second)
	var cands []*fileInfo
	eligible := make(map[stream.FileID]bool)
	for _, fi := range order {
		if fi.matched || fi.size == 0 || !fi.mtime.After(after) || claimed(fi.id) {
			continue
		}
		h, err := headOf(fi)
		if err != nil {
			rs.log.logErr("recover "+fi.path, slog.LevelWarn, "cannot read rotated file written while down, not reading it", "path", fi.path, "err", err)
			continue
		}
		if len(h) == 0 {
			continue
		}
		if cp, ok := rs.coveredBy(fi, h); ok {
			rs.log.Debug("rotated file begins like a checkpointed file, not reading it", "path", fi.path, "checkpoint", cp.Path)
			continue
		}
		cands = append(cands, fi)
		eligible[fi.id] = true
	}
	var out []*follower
	for i, r := range cands {
		hr := heads[r.id]
		isCopy := false
		for _, f := range order {
			if f.id == r.id {
				continue
			}
			hf, err := headOf(f)
			if err != nil || len(hf) < len(hr) || !bytes.Equal(hf[:len(hr)], hr) {
				continue
			}
			// f begins with all of r's first bytes: r is a copy of f (or
			// f of r). Of two candidates, the longer one is read, or
			// the first of two of the same size.
			if eligible[f.id] && (f.size < r.size || f.size == r.size && slices.Index(cands, f) > i) {
				continue
			}
			rs.log.Info("rotated file written while down is a copy of another file, not reading it", "path", r.path, "copy_of", f.path)
			isCopy = true
			break
		}
		if isCopy {
			continue
		}
		fl, err := rs.pros.openFollower(r.path, r.id, stream.Checkpoint{Source: rs.cfg.Source})
		if err != nil {
			rs.log.logErr("recover "+r.path, slog.LevelWarn, "cannot open rotated file written while down, not reading it", "path", r.path, "err", err)
			continue
		}
		rs.log.Info("reading rotated file written while logtally was down", "path", r.path, "bytes", r.size, "modified", r.mtime, "since", since)
		out = append(out, fl)
	}
	return out
}

// coveredBy returns a restored checkpoint whose fingerprint covers the
// start of head, the first bytes of fi: fi holds what that checkpoint's
// file held when it was read (up to FPLen bytes at least), unless it
// reaches the checkpoint's offset with other bytes before it (its tail
// check): then it is another file that begins the same way.
func (rs *restorer) coveredBy(fi *fileInfo, head []byte) (stream.Checkpoint, bool) {
	for _, cp := range rs.cfg.Checkpoints {
		if !stream.Same(cp, head) {
			continue
		}
		if fi.size >= cp.Offset {
			if ok, err := stream.FileTailMatches(fi.path, cp); err == nil && !ok {
				rs.log.Info("rotated file begins like a checkpointed file but its bytes before the checkpoint's offset differ: not its copy (tail check)",
					"path", fi.path, "checkpoint", cp.Path, "offset", cp.Offset)
				continue
			}
		}
		return cp, true
	}
	return stream.Checkpoint{}, false
}
