package tailer

// Resume: a checkpoint's file opened again if it is still the checkpoint's
// (size, fingerprint, tail check), and the checkpoints whose files could not
// be examined at start, tried again at every rescan.

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/logtally/logtally/stream"
)

// resume opens the file at path for checkpoint cp if it is still cp's file
// (size at least cp.Offset, fingerprint and tail check matching). wait reports an error
// other than not-exist: the file's state is unknown, so the checkpoint is
// kept and tried again at every rescan.
func (rs *restorer) resume(cp stream.Checkpoint, path string) (fl *follower, wait bool) {
	fl, err := rs.pros.openFollower(path, cp.File, cp)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, false
		}
		rs.log.logErr("keep "+path, slog.LevelWarn, "cannot open file, keeping its checkpoint", "path", path, "err", err)
		return nil, true
	}
	st, err := fl.f.Stat()
	if err != nil {
		fl.close()
		rs.log.logErr("keep "+path, slog.LevelWarn, "cannot stat file, keeping its checkpoint", "path", path, "err", err)
		return nil, true
	}
	if st.Size() < cp.Offset {
		fl.close()
		return nil, false
	}
	ok, err := stream.FingerprintMatches(fl.f, cp.FPLen, cp.FPSum)
	if err != nil {
		fl.close()
		rs.log.logErr("keep "+path, slog.LevelWarn, "cannot read fingerprint, keeping its checkpoint", "path", path, "err", err)
		return nil, true
	}
	if !ok {
		fl.close()
		return nil, false
	}
	if ok, err = stream.TailMatches(fl.f, cp); err != nil {
		fl.close()
		rs.log.logErr("keep "+path, slog.LevelWarn, "cannot read the bytes before the checkpoint's offset, keeping its checkpoint", "path", path, "err", err)
		return nil, true
	}
	if !ok {
		fl.close()
		rs.log.Info("file begins like its checkpoint says but its bytes before the checkpoint's offset differ: another file under the same identity (inode reused), not resumed there (tail check)",
			"path", path, "offset", cp.Offset)
		return nil, false
	}
	return fl, false
}

// retryWaiting tries the checkpoints whose files could not be read at start
// again: resumed once readable, dropped (Done) once the file is gone or is
// no longer the checkpoint's. Only Run's goroutine uses rs.waiting.
func (rs *restorer) retryWaiting(ctx context.Context) error {
	for id, cp := range rs.waiting {
		var fl *follower
		st, err := os.Stat(cp.Path)
		switch {
		case err != nil && !errors.Is(err, os.ErrNotExist):
			rs.log.logErr("keep "+cp.Path, slog.LevelWarn, "cannot stat file, keeping its checkpoint", "path", cp.Path, "err", err)
			continue
		case err == nil:
			if got, _, ok := statID(st); ok && got == id {
				var wait bool
				if fl, wait = rs.resume(cp, cp.Path); wait {
					continue
				}
			}
		}
		delete(rs.waiting, id)
		if fl != nil && fl.off > cp.Offset { // counted further by the ledger: commit the jump first
			if err := rs.out.send(ctx, stream.Chunk{Checkpoint: fl.checkpoint(), Start: fl.off}); err != nil {
				fl.close()
				rs.reg.release(id, nil)
				return err
			}
		}
		if fl != nil {
			rs.reg.hold(fl)
			rs.log.Info("resuming file", "path", cp.Path, "offset", cp.Offset)
			rs.pros.spawn(ctx, fl)
			continue
		}
		rs.pros.lostFile(cp.Path, cp.Offset, "followed file that could not be examined is gone, dropping its checkpoint")
		err = rs.out.send(ctx, stream.Chunk{Checkpoint: cp, Start: cp.Offset, Done: true})
		rs.reg.release(id, nil)
		if err != nil {
			return err
		}
	}
	return nil
}
