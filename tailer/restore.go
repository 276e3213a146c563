package tailer

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/stream"
)

// Restore: matching the restored checkpoints to files at start.

// restorer matches the restored checkpoints (Config.Checkpoints) to the
// files at start, finds the rotated files written while the daemon was
// down (Config.Since, recover.go), and retries at every rescan the
// checkpoints whose files could not be examined (resume.go). What it
// plans, the prospector runs.
type restorer struct {
	cfg   *Config
	log   *logger
	clk   clock.Clock
	out   *output
	stats *tailerStats

	reg   *registry
	disc  *discovery
	slots *slots
	seen  *seenFiles
	pros  *prospector

	// waiting holds restored checkpoints whose file could not be read
	// (an error other than not-exist), retried at every rescan. Their
	// identities are reserved in the registry. Only Run's goroutine uses
	// it.
	waiting map[stream.FileID]stream.Checkpoint
}

// start matches the restored checkpoints to files and starts following, in
// the steps the package doc describes.
func (rs *restorer) start(ctx context.Context) error {
	var r *restore
	var recovered []*follower
	for attempt := 1; ; attempt++ {
		rs.slots.plan()
		r = rs.survey()
		if afterSurvey != nil {
			afterSurvey()
		}
		r.resumeOwn()
		r.findCopies()
		r.settleLost()
		// Rotated files written while the daemon was down that nothing
		// accounts for: read from 0.
		recovered = rs.recoverUnread(r.order, r.planned)
		// The plan holds only if the files did not move while it was
		// made: a rotation renaming them meanwhile (logrotate shifting
		// access.log.N to N+1) makes a file opened by a name it no
		// longer has look gone, and its checkpoint would be dropped.
		if attempt == startAttempts || rs.survey().sameFiles(r) {
			break
		}
		rs.log.Info("files moved while matching the checkpoints at start (a rotation), looking again", "attempt", attempt)
		r.discard(recovered)
		select { // let the rotation finish
		case <-ctx.Done():
			return ctx.Err()
		case <-rs.clk.After(rs.cfg.PollInterval):
		}
	}
	for _, report := range r.reports {
		report()
	}
	if err := r.sendStart(ctx, recovered); err != nil {
		for _, fl := range r.plan {
			rs.pros.unfollow(fl)
		}
		for _, fl := range recovered {
			rs.pros.unfollow(fl)
		}
		return err
	}
	r.plan = append(r.plan, recovered...)
	r.addFresh()
	rs.slots.planned()
	rs.reg.register(r.plan, rs.waiting)
	rs.reg.indexHeads(r.plan)
	rs.seen.seeAtStart(r.order)
	for _, fl := range r.plan {
		rs.pros.spawn(ctx, fl)
	}
	return nil
}

// startAttempts bounds how often start matches the checkpoints to the
// files again when they moved while it did.
const startAttempts = 5

// afterSurvey, when set (tests), is called after each look at the files
// at start, before they are opened.
var afterSurvey func()

// restore is the state of start while it matches the restored checkpoints
// to the files found.
type restore struct {
	rs    *restorer
	byID  map[stream.FileID]*fileInfo
	order []*fileInfo         // deterministic: glob matches first, then candidates
	cps   []stream.Checkpoint // the restored checkpoints, by key

	planned map[stream.FileID]*follower // every file claimed so far
	plan    []*follower                 // the followers to run, in order
	lost    []stream.Checkpoint         // checkpoints whose own file is not resumed
	copies  map[stream.FileID]*follower // a copy of a lost checkpoint's file, by that file
	dropped []stream.Checkpoint         // checkpoints that match nothing
	jumped  []*follower                 // resumed past their checkpoint, where the ledger says (counted)
	reports []func()                    // what is logged and counted once the plan holds
}

// sameFiles reports whether r found the same files as o, each at the same
// path: nothing was renamed, created or removed between the two looks.
// Sizes and times are not compared (the logs are written meanwhile).
func (r *restore) sameFiles(o *restore) bool {
	if len(r.order) != len(o.order) {
		return false
	}
	for _, fi := range r.order {
		ofi, ok := o.byID[fi.id]
		if !ok || ofi.path != fi.path {
			return false
		}
	}
	return true
}

// discard closes what r planned, and forgets the checkpoints it set
// waiting, so that start can match them again.
func (r *restore) discard(recovered []*follower) {
	for _, fl := range r.plan {
		r.rs.pros.unfollow(fl)
	}
	for _, fl := range recovered {
		r.rs.pros.unfollow(fl)
	}
	for _, fl := range r.copies { // closed already when planned
		fl.close()
	}
	clear(r.rs.waiting)
}

// survey finds the glob matches and the rotated candidates of the matches,
// of the literal globs (even while their file is missing) and of the
// checkpoints' paths.
func (rs *restorer) survey() *restore {
	r := &restore{rs: rs, byID: make(map[stream.FileID]*fileInfo), planned: make(map[stream.FileID]*follower)}
	add := func(fi fileInfo) {
		if _, ok := r.byID[fi.id]; ok {
			return
		}
		p := &fi
		r.byID[fi.id] = p
		r.order = append(r.order, p)
	}
	sc := newScan()
	matches := rs.disc.expandIn(sc)
	bases := make([]string, 0, len(matches)+len(rs.cfg.Paths)+len(rs.cfg.Checkpoints))
	for _, m := range matches {
		add(m)
		bases = append(bases, m.path)
	}
	for _, pat := range rs.cfg.Paths {
		if !strings.ContainsAny(pat, `*?[\`) {
			bases = append(bases, pat) // a literal path, even while it is missing
		}
	}
	for _, cp := range rs.cfg.Checkpoints {
		if cp.Path != "" {
			bases = append(bases, cp.Path)
		}
	}
	if len(rs.cfg.Rotated) > 0 { // the same candidates for every base
		bases = nil
		for _, c := range rs.disc.statAll(sc, sc.rotatedAll(rs.cfg.Rotated)) {
			add(c)
		}
	}
	seenBase := make(map[string]bool, len(bases))
	for _, b := range bases {
		if seenBase[b] {
			continue
		}
		seenBase[b] = true
		for _, c := range rs.disc.candidatesIn(sc, b) {
			add(c)
		}
	}
	r.cps = slices.Clone(rs.cfg.Checkpoints)
	slices.SortFunc(r.cps, func(a, b stream.Checkpoint) int { return strings.Compare(a.Key(), b.Key()) })
	r.copies = make(map[stream.FileID]*follower)
	return r
}

// fpOK reports whether fi may be cp's file or a copy of it: at least
// cp.Offset bytes, beginning with the bytes cp's fingerprint covers, and
// with the bytes its tail check covers just before cp.Offset.
func (r *restore) fpOK(fi *fileInfo, cp stream.Checkpoint) bool {
	if fi.size < cp.Offset {
		return false
	}
	ok, err := stream.HasFingerprint(fi.path, cp.FPLen, cp.FPSum)
	if err == nil && ok {
		if ok, err = stream.FileTailMatches(fi.path, cp); err == nil && !ok {
			r.rs.log.Info("a file begins like a checkpointed file but its bytes before the checkpoint's offset differ: not a copy of it (tail check)",
				"path", fi.path, "checkpoint", cp.Path, "offset", cp.Offset)
		}
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		r.rs.log.logErr("fingerprint "+fi.path, slog.LevelWarn, "cannot read fingerprint", "path", fi.path, "err", err)
	}
	return ok
}

// waits reports whether id is a checkpointed file that could not be read.
func (r *restore) waits(id stream.FileID) bool {
	_, ok := r.rs.waiting[id]
	return ok
}

// resumeOwn resumes the checkpoints whose own file is there, unchanged, and
// keeps waiting those whose file cannot be examined. The others are lost.
func (r *restore) resumeOwn() {
	rs := r.rs
	for _, cp := range r.cps {
		fi, ok := r.byID[cp.File]
		if !ok {
			if _, err := os.Stat(cp.Path); cp.Path != "" && err != nil && !errors.Is(err, os.ErrNotExist) {
				rs.log.logErr("keep "+cp.Path, slog.LevelWarn, "cannot stat file, keeping its checkpoint", "path", cp.Path, "err", err)
				rs.waiting[cp.File] = cp
				continue
			}
			r.lost = append(r.lost, cp)
			continue
		}
		fl, wait := rs.resume(cp, fi.path)
		if wait {
			cp.Path = fi.path
			rs.waiting[cp.File] = cp
			continue
		}
		if fl == nil {
			r.lost = append(r.lost, cp)
			continue
		}
		r.planned[cp.File] = fl
		r.plan = append(r.plan, fl)
		if fl.off > cp.Offset {
			r.jumped = append(r.jumped, fl)
		}
		rs.log.Info("resuming file", "path", fi.path, "offset", fl.off, "rotated", !fi.matched)
	}
}

// findCopies looks for a copy (copytruncate while down) of each lost
// checkpoint's file, for all of them before anything else, so that no copy
// is mistaken for new content by settleLost.
func (r *restore) findCopies() {
	for _, cp := range r.lost {
		if cp.FPLen == 0 {
			continue
		}
		for _, fi := range r.order {
			if r.waits(fi.id) || fi.id == cp.File || r.planned[fi.id] != nil || !r.fpOK(fi, cp) {
				continue
			}
			c := cp
			c.File, c.Path = fi.id, fi.path
			fl, err := r.rs.pros.openFollower(fi.path, fi.id, c)
			if err != nil {
				continue
			}
			r.planned[fl.id] = fl
			r.copies[cp.File] = fl
			r.rs.log.Info("found copy of a truncated file", "path", fl.path, "offset", cp.Offset, "was", cp.Path)
			break
		}
	}
}

// isCopyOfLost reports whether fi begins like a lost checkpoint's file.
func (r *restore) isCopyOfLost(fi *fileInfo) bool {
	for _, cp := range r.lost {
		if cp.FPLen > 0 && cp.File != fi.id && r.fpOK(fi, cp) {
			return true
		}
	}
	return false
}

// settleLost decides each lost checkpoint: its own file, if it is still
// there, holds new content (truncated and rewritten, or its inode reused)
// and is read from 0 after the copy's tail, whether the glob still matches
// it or it was rotated away since (copytruncate, then rename, while
// logtally was down); otherwise the copy is read and the checkpoint retired
// once it has caught up; with neither, the checkpoint is dropped.
func (r *restore) settleLost() {
	rs := r.rs
	for _, cp := range r.lost {
		cpy := r.copies[cp.File]
		if cpy == nil {
			if fl := r.resumeShrunk(cp); fl != nil {
				r.planned[fl.id] = fl
				r.plan = append(r.plan, fl)
				continue
			}
		}
		own, ok := r.byID[cp.File]
		if ok && !r.waits(cp.File) && r.planned[own.id] == nil && own.size > 0 && !r.isCopyOfLost(own) {
			fl, err := rs.pros.openFollower(own.path, own.id, stream.Checkpoint{Source: rs.cfg.Source})
			if err == nil {
				// It reads the copy's tail first, then resets its
				// checkpoint (same key) and reads itself from 0.
				fl.decided.adopt = cpy
				r.planned[own.id] = fl
				r.plan = append(r.plan, fl)
				if !own.matched {
					rs.log.Info("rotated file changed while down, reading it from 0", "path", own.path, "was", cp.Path)
				}
				if cpy == nil && cp.Offset > 0 {
					r.reports = append(r.reports, func() {
						rs.pros.lostFile(cp.Path, cp.Offset, "followed file truncated or replaced while logtally was down and no copy of it found among its rotated files, reading it from 0")
					})
				}
				continue
			}
		}
		if cpy == nil {
			r.dropped = append(r.dropped, cp)
			continue
		}
		retire := cp
		cpy.decided.retire = &retire
		r.plan = append(r.plan, cpy)
	}
}

// resumeShrunk returns a follower for cp's own file if it shrank in place
// while logtally was down: it is there, shorter than cp.Offset but still
// cp.FPLen bytes or more, beginning with the bytes cp's fingerprint covers,
// and no copy of it was found (a copytruncate would leave one, and a
// truncated file that begins with new bytes). The lines before its size
// were counted: it resumes there, its new checkpoint sent before it reads
// (see prospector.cut and follower.resumeAt). A file shrunk below cp.FPLen cannot be told from
// one rewritten and is read from 0.
func (r *restore) resumeShrunk(cp stream.Checkpoint) *follower {
	rs := r.rs
	own, ok := r.byID[cp.File]
	if !ok || r.waits(cp.File) || r.planned[cp.File] != nil || cp.FPLen == 0 || own.size >= cp.Offset || own.size < int64(cp.FPLen) {
		return nil
	}
	if match, err := stream.HasFingerprint(own.path, cp.FPLen, cp.FPSum); err != nil || !match {
		return nil
	}
	c := cp
	c.Path, c.Offset = own.path, own.size
	fl, err := rs.pros.openFollower(own.path, own.id, c)
	if err != nil {
		return nil
	}
	fl.decided.announce = true
	r.reports = append(r.reports, func() {
		rs.stats.shrunk.Add(1)
		rs.log.Warn("file shrank in place while logtally was down, its first bytes unchanged and no copy of it found: the lines before its new end were counted, reading on from there",
			"path", own.path, "offset", cp.Offset, "size", own.size)
	})
	return fl
}

// sendStart sends the Done chunks of the dropped checkpoints, then the
// checkpoints of the files resumed past their restored checkpoint, then
// the checkpoints of the recovered files (at 0, or where the ledger says).
func (r *restore) sendStart(ctx context.Context, recovered []*follower) error {
	// Checkpoints matching nothing: the caller deletes them before
	// anything else is sent, so no later chunk can be deleted by mistake.
	for _, cp := range r.dropped {
		r.rs.pros.lostFile(cp.Path, cp.Offset, "followed file not found again at start (not at its path, by identity among the glob matches and rotated files, nor as a copy), dropping its checkpoint")
		if err := r.rs.out.send(ctx, stream.Chunk{Checkpoint: cp, Start: cp.Offset, Done: true}); err != nil {
			return err
		}
	}
	// A file resumed past its checkpoint, where the ledger says its stream
	// is counted (a copy of it was replayed): the new checkpoint is
	// committed before its follower reads on, so that the jump holds
	// whatever happens to the ledger entry.
	for _, fl := range r.jumped {
		if err := r.rs.out.send(ctx, stream.Chunk{Checkpoint: fl.checkpoint(), Start: fl.off}); err != nil {
			return err
		}
	}
	// The recovered files' checkpoints come next, before any line of this
	// run: the first commit of this run, which moves the caller's Since
	// past their modification times, holds them.
	for _, fl := range recovered {
		if err := r.rs.out.send(ctx, stream.Chunk{Checkpoint: fl.checkpoint(), Start: fl.off}); err != nil {
			return err
		}
	}
	return nil
}

// addFresh plans the glob matches nobody claimed, new files read from 0,
// unless they begin like a planned file (a copy of it).
func (r *restore) addFresh() {
	rs := r.rs
	var fresh []*follower
	for _, fi := range r.order {
		if r.waits(fi.id) || !fi.matched || r.planned[fi.id] != nil {
			continue
		}
		if rs.disc.isCopy(fi.path, planHeads(r.plan)) {
			continue
		}
		fl, err := rs.pros.openFollower(fi.path, fi.id, stream.Checkpoint{Source: rs.cfg.Source})
		if err != nil {
			rs.log.logErr("open "+fi.path, slog.LevelWarn, "cannot open file", "err", err, "path", fi.path)
			continue
		}
		fl.setFresh()
		fresh = append(fresh, fl)
	}
	r.plan = append(r.plan, fresh...)
}
