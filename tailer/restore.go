package tailer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"
)

// Restore: matching the restored checkpoints to files at start.

// start matches the restored checkpoints to files and starts following.
func (t *Tailer) start(ctx context.Context) error {
	byID := make(map[FileID]*fileInfo)
	var order []*fileInfo // deterministic: glob matches first, then candidates
	add := func(fi fileInfo) {
		if _, ok := byID[fi.id]; ok {
			return
		}
		p := &fi
		byID[fi.id] = p
		order = append(order, p)
	}
	matches := t.expand()
	bases := make([]string, 0, len(matches)+len(t.cfg.Paths)+len(t.cfg.Checkpoints))
	for _, m := range matches {
		add(m)
		bases = append(bases, m.path)
	}
	for _, pat := range t.cfg.Paths {
		if !strings.ContainsAny(pat, `*?[\`) {
			bases = append(bases, pat) // a literal path, even while it is missing
		}
	}
	for _, cp := range t.cfg.Checkpoints {
		if cp.Path != "" {
			bases = append(bases, cp.Path)
		}
	}
	seenBase := make(map[string]bool, len(bases))
	for _, b := range bases {
		if seenBase[b] {
			continue
		}
		seenBase[b] = true
		for _, c := range t.candidates(b) {
			add(c)
		}
	}

	cps := slices.Clone(t.cfg.Checkpoints)
	slices.SortFunc(cps, func(a, b Checkpoint) int { return strings.Compare(a.Key(), b.Key()) })
	planned := make(map[FileID]*follower)
	var plan []*follower
	var lost []Checkpoint
	fpOK := func(fi *fileInfo, cp Checkpoint) bool {
		if fi.size < cp.Offset {
			return false
		}
		ok, err := fileFingerprintMatches(fi.path, cp.FPLen, cp.FPSum)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.logErr("fingerprint "+fi.path, slog.LevelWarn, "cannot read fingerprint", "path", fi.path, "err", err)
		}
		return ok
	}
	// Checkpoints that resume their own file, or wait until it can be read.
	for _, cp := range cps {
		fi, ok := byID[cp.File]
		if !ok {
			if _, err := os.Stat(cp.Path); cp.Path != "" && err != nil && !errors.Is(err, os.ErrNotExist) {
				t.logErr("keep "+cp.Path, slog.LevelWarn, "cannot stat file, keeping its checkpoint", "path", cp.Path, "err", err)
				t.waiting[cp.File] = cp
				continue
			}
			lost = append(lost, cp)
			continue
		}
		fl, wait := t.resume(cp, fi.path)
		if wait {
			cp.Path = fi.path
			t.waiting[cp.File] = cp
			continue
		}
		if fl == nil {
			lost = append(lost, cp)
			continue
		}
		planned[cp.File] = fl
		plan = append(plan, fl)
		t.log.Info("resuming file", "path", fi.path, "offset", cp.Offset, "rotated", !fi.matched)
	}
	// The others: a copy (copytruncate while down) first, for all of them,
	// so no copy is mistaken for new content below.
	var dropped []Checkpoint
	copies := make(map[FileID]*follower, len(lost)) // by the checkpoint's own file
	for _, cp := range lost {
		if cp.FPLen == 0 {
			continue
		}
		for _, fi := range order {
			if _, wait := t.waiting[fi.id]; wait || fi.id == cp.File || planned[fi.id] != nil || !fpOK(fi, cp) {
				continue
			}
			c := cp
			c.File, c.Path = fi.id, fi.path
			fl, err := t.openFollower(fi.path, fi.id, c)
			if err != nil {
				continue
			}
			planned[fl.id] = fl
			copies[cp.File] = fl
			t.log.Info("found copy of a truncated file", "path", fl.path, "offset", cp.Offset, "was", cp.Path)
			break
		}
	}
	isCopyOfLost := func(fi *fileInfo) bool {
		for _, cp := range lost {
			if cp.FPLen > 0 && cp.File != fi.id && fpOK(fi, cp) {
				return true
			}
		}
		return false
	}
	for _, cp := range lost {
		cpy := copies[cp.File]
		// The checkpoint's own file, if it is still there, holds new
		// content (truncated and rewritten, or its inode reused): read it
		// from 0, whether the glob still matches it or it was rotated away
		// since (copytruncate, then rename, while logtally was down).
		own, ok := byID[cp.File]
		_, wait := t.waiting[cp.File]
		if ok && !wait && planned[own.id] == nil && own.size > 0 && !isCopyOfLost(own) {
			fl, err := t.openFollower(own.path, own.id, Checkpoint{Source: t.cfg.Source})
			if err == nil {
				// It reads the copy's tail first, then resets its
				// checkpoint (same key) and reads itself from 0.
				fl.adopt = cpy
				planned[own.id] = fl
				plan = append(plan, fl)
				if !own.matched {
					t.log.Info("rotated file changed while down, reading it from 0", "path", own.path, "was", cp.Path)
				}
				continue
			}
		}
		if cpy == nil {
			dropped = append(dropped, cp)
			continue
		}
		retire := cp
		cpy.retire = &retire
		plan = append(plan, cpy)
	}
	// Rotated files written while the daemon was down that nothing
	// accounts for: read from 0.
	recovered := t.recoverUnread(order, planned)
	abort := func(err error) error {
		for _, fl := range plan {
			fl.exit()
		}
		for _, fl := range recovered {
			fl.exit()
		}
		return err
	}
	// Checkpoints matching nothing: the caller deletes them before anything
	// else is sent, so no later chunk can be deleted by mistake.
	for _, cp := range dropped {
		t.log.Info("dropping checkpoint of a file that is gone", "path", cp.Path, "offset", cp.Offset)
		if err := t.send(ctx, Chunk{Checkpoint: cp, Start: cp.Offset, Done: true}); err != nil {
			return abort(err)
		}
	}
	// The recovered files' checkpoints (at 0) come next, before any line of
	// this run: the first commit of this run, which moves the caller's
	// Since past their modification times, holds them.
	for _, fl := range recovered {
		if err := t.send(ctx, Chunk{Checkpoint: fl.checkpoint(), Start: 0}); err != nil {
			return abort(err)
		}
	}
	plan = append(plan, recovered...)
	// Glob matches nobody claimed: new files, read from 0.
	var fresh []*follower
	for _, fi := range order {
		if _, wait := t.waiting[fi.id]; wait || !fi.matched || planned[fi.id] != nil {
			continue
		}
		if t.isCopy(fi.path, planHeads(plan)) {
			continue
		}
		fl, err := t.openFollower(fi.path, fi.id, Checkpoint{Source: t.cfg.Source})
		if err != nil {
			t.logErr("open "+fi.path, slog.LevelWarn, "cannot open file", "err", err, "path", fi.path)
			continue
		}
		fl.fresh, fl.pubFresh = true, true
		fresh = append(fresh, fl)
	}
	plan = append(plan, fresh...)

	t.mu.Lock()
	for id := range t.waiting {
		t.files[id] = nil
	}
	for _, fl := range plan {
		t.files[fl.id] = fl
		if fl.adopt != nil {
			t.files[fl.adopt.id] = fl.adopt
		}
		if fl.retire != nil {
			if _, ok := t.files[fl.retire.File]; !ok {
				t.files[fl.retire.File] = nil
			}
		}
	}
	t.mu.Unlock()
	for _, fl := range plan {
		t.spawn(ctx, fl)
	}
	return nil
}

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
func (t *Tailer) recoverUnread(order []*fileInfo, planned map[FileID]*follower) []*follower {
	since := t.cfg.Since
	if since.IsZero() {
		return nil
	}
	claimed := func(id FileID) bool {
		if planned[id] != nil {
			return true
		}
		if _, ok := t.waiting[id]; ok {
			return true
		}
		return slices.ContainsFunc(t.cfg.Checkpoints, func(cp Checkpoint) bool { return cp.File == id })
	}
	heads := make(map[FileID][]byte, len(order))
	headOf := func(fi *fileInfo) ([]byte, error) {
		if h, ok := heads[fi.id]; ok {
			return h, nil
		}
		h, err := readHead(fi.path)
		if err != nil {
			return nil, err
		}
		heads[fi.id] = h
		return h, nil
	}
	after := since.Add(-time.Second)
	var cands []*fileInfo
	eligible := make(map[FileID]bool)
	for _, fi := range order {
		if fi.matched || fi.size == 0 || !fi.mtime.After(after) || claimed(fi.id) {
			continue
		}
		h, err := headOf(fi)
		if err != nil {
			t.logErr("recover "+fi.path, slog.LevelWarn, "cannot read rotated file written while down, not reading it", "path", fi.path, "err", err)
			continue
		}
		if len(h) == 0 {
			continue
		}
		if cp, ok := t.coveredBy(h); ok {
			t.log.Debug("rotated file begins like a checkpointed file, not reading it", "path", fi.path, "checkpoint", cp.Path)
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
			t.log.Info("rotated file written while down is a copy of another file, not reading it", "path", r.path, "copy_of", f.path)
			isCopy = true
			break
		}
		if isCopy {
			continue
		}
		fl, err := t.openFollower(r.path, r.id, Checkpoint{Source: t.cfg.Source})
		if err != nil {
			t.logErr("recover "+r.path, slog.LevelWarn, "cannot open rotated file written while down, not reading it", "path", r.path, "err", err)
			continue
		}
		t.log.Info("reading rotated file written while logtally was down", "path", r.path, "bytes", r.size, "modified", r.mtime, "since", since)
		out = append(out, fl)
	}
	return out
}

// coveredBy returns a restored checkpoint whose fingerprint covers the
// start of head: a file beginning with head holds what that checkpoint's
// file held when it was read (up to FPLen bytes at least).
func (t *Tailer) coveredBy(head []byte) (Checkpoint, bool) {
	for _, cp := range t.cfg.Checkpoints {
		if cp.FPLen > 0 && cp.FPLen <= len(head) && fnvExtend(fnvOffset64, head[:cp.FPLen]) == cp.FPSum {
			return cp, true
		}
	}
	return Checkpoint{}, false
}

// readHead returns the first (up to FingerprintSize) bytes of the file at
// path.
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, FingerprintSize)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return buf[:n], nil
}

// resume opens the file at path for checkpoint cp if it is still cp's file
// (size at least cp.Offset, fingerprint matching). wait reports an error
// other than not-exist: the file's state is unknown, so the checkpoint is
// kept and tried again at every rescan.
func (t *Tailer) resume(cp Checkpoint, path string) (fl *follower, wait bool) {
	fl, err := t.openFollower(path, cp.File, cp)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, false
		}
		t.logErr("keep "+path, slog.LevelWarn, "cannot open file, keeping its checkpoint", "path", path, "err", err)
		return nil, true
	}
	st, err := fl.f.Stat()
	if err != nil {
		fl.close()
		t.logErr("keep "+path, slog.LevelWarn, "cannot stat file, keeping its checkpoint", "path", path, "err", err)
		return nil, true
	}
	if st.Size() < cp.Offset {
		fl.close()
		return nil, false
	}
	ok, err := fingerprintMatches(fl.f, cp.FPLen, cp.FPSum)
	if err != nil {
		fl.close()
		t.logErr("keep "+path, slog.LevelWarn, "cannot read fingerprint, keeping its checkpoint", "path", path, "err", err)
		return nil, true
	}
	if !ok {
		fl.close()
		return nil, false
	}
	return fl, false
}

// retryWaiting tries the checkpoints whose files could not be read at start
// again: resumed once readable, dropped (Done) once the file is gone or is
// no longer the checkpoint's. Only Run's goroutine uses t.waiting.
func (t *Tailer) retryWaiting(ctx context.Context) error {
	for id, cp := range t.waiting {
		var fl *follower
		st, err := os.Stat(cp.Path)
		switch {
		case err != nil && !errors.Is(err, os.ErrNotExist):
			t.logErr("keep "+cp.Path, slog.LevelWarn, "cannot stat file, keeping its checkpoint", "path", cp.Path, "err", err)
			continue
		case err == nil:
			if got, _, ok := statID(st); ok && got == id {
				var wait bool
				if fl, wait = t.resume(cp, cp.Path); wait {
					continue
				}
			}
		}
		delete(t.waiting, id)
		if fl != nil {
			t.mu.Lock()
			t.files[id] = fl
			t.mu.Unlock()
			t.log.Info("resuming file", "path", cp.Path, "offset", cp.Offset)
			t.spawn(ctx, fl)
			continue
		}
		t.log.Info("dropping checkpoint of a file that is gone", "path", cp.Path, "offset", cp.Offset)
		err = t.send(ctx, Chunk{Checkpoint: cp, Start: cp.Offset, Done: true})
		t.release(id, nil)
		if err != nil {
			return err
		}
	}
	return nil
}
