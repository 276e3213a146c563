package tailer

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/stream"
)

// Rewatch: rotated files written to after they were finished.
//
// A rotated file is finished once quiet for RotateGrace; a writer that
// reopens its logs later than that (or a job appending to the rotated
// file) writes lines nobody reads. So a finished rotated file stays
// watched, by its path alone (a stat at every rescan, no open file): if
// it grows, still the same file beginning with the same bytes and with the
// same bytes before the offset it was finished at, it is followed again
// from there (its checkpoint sent again first), and finished again once
// quiet. A watch ends when its path no longer names the file (rotated on,
// compressed, deleted), after RotateWatch, or when more than
// maxRotateWatches are watched (the oldest first).

// RotateWatch is how long a finished rotated file is watched for lines
// written to it later (see the package doc).
const RotateWatch = 24 * time.Hour

// maxRotateWatches bounds the finished rotated files watched per Tailer.
const maxRotateWatches = 64

// rotateWatch is a finished rotated file watched for growth.
type rotateWatch struct {
	cp    stream.Checkpoint // its last checkpoint (Path: where it was finished)
	until time.Time
}

// watchList holds the finished rotated files watched, oldest first.
type watchList struct {
	clk clock.Clock

	mu      sync.Mutex
	watched []rotateWatch
}

// add starts watching the rotated file fl, just finished.
func (wl *watchList) add(fl *follower) {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	if len(wl.watched) >= maxRotateWatches {
		wl.watched = wl.watched[1:]
	}
	wl.watched = append(wl.watched, rotateWatch{cp: fl.checkpoint(), until: wl.clk.Now().Add(RotateWatch)})
}

// take returns the watched files and watches none until keep.
func (wl *watchList) take() []rotateWatch {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	ws := wl.watched
	wl.watched = nil
	return ws
}

// keep watches ws again, older than those added since take.
func (wl *watchList) keep(ws []rotateWatch) {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	wl.watched = append(ws, wl.watched...)
}

// rewatch follows again the watched files that grew, and forgets those
// that are gone, moved or watched long enough. Only Run's goroutine calls
// it.
func (pr *prospector) rewatch(ctx context.Context) {
	ws := pr.watched.take()
	now := pr.clk.Now()
	var keep []rotateWatch
	defer func() { pr.watched.keep(keep) }()
	for i, w := range ws {
		if ctx.Err() != nil {
			keep = append(keep, ws[i:]...)
			return
		}
		cp := w.cp
		st, err := os.Stat(cp.Path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			pr.log.logErr("stat "+cp.Path, slog.LevelWarn, "cannot stat a finished rotated file", "path", cp.Path, "err", err)
		}
		if err != nil || now.After(w.until) {
			continue
		}
		if id, _, ok := statID(st); !ok || id != cp.File {
			continue
		}
		if st.Size() <= cp.Offset || pr.reg.claimed(cp.File) {
			keep = append(keep, w)
			continue
		}
		fl, err := pr.openFollower(cp.Path, cp.File, cp)
		if err != nil {
			continue
		}
		fpOK, err1 := stream.FingerprintMatches(fl.f, cp.FPLen, cp.FPSum)
		tailOK, err2 := stream.TailMatches(fl.f, cp)
		if err1 != nil || err2 != nil || !fpOK || !tailOK {
			fl.close()
			continue // rewritten: not the file that was finished
		}
		if !pr.reg.claim(fl) {
			fl.close()
			keep = append(keep, w)
			continue
		}
		pr.stats.rewatched.Add(1)
		pr.log.Warn("lines written to a rotated file after it was finished (quiet for the rotate grace): following it again",
			"path", cp.Path, "offset", cp.Offset, "size", st.Size())
		// Its checkpoint exists again before any of its new lines.
		if err := pr.out.send(ctx, stream.Chunk{Checkpoint: fl.checkpoint(), Start: fl.off}); err != nil {
			pr.unfollow(fl)
			keep = append(keep, ws[i:]...)
			return
		}
		fl.decided.rotated = true
		pr.spawn(ctx, fl)
	}
}
