package pipeline

// watchBuffer notices a buffer.db deleted or replaced while the daemon runs
// and stops the run. Run starts it beside the tailers, aggregator and
// flusher, and when it returns ErrBufferReplaced, Run stops as for any
// component error: final commit, drain, and then p.buf.Restore(), which
// writes the open (unlinked) file's data back to the path. watchBuffer does
// not restore the file itself: a copy taken before the final commit and
// drain would miss them, and the restart would read their lines again.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A buffer.db truncated in place (its size below bbolt's high-water mark)
// is found by the same watch, and by every buffer call before it touches
// bbolt's map or when its read of the map faults: buffer.ErrTruncated.
// Run then stops without touching the
// buffer again (no final commit, drain or restore: its pages are gone), and
// the restart moves the file aside as corrupt and rebuilds it from MongoDB's
// progress record.

// ErrBufferReplaced is returned by Run when the buffer file was deleted or
// replaced while it ran. The process should exit: the file has been
// restored at its path from the open file, and a restart resumes from it
// exactly.
var ErrBufferReplaced = errors.New("buffer file deleted or replaced while running")

// watchBuffer checks every period that the buffer's path still names the
// open file, and that the file is not shorter than bbolt's high-water mark.
// It returns an error wrapping ErrBufferReplaced or buffer.ErrTruncated
// once one fails, and nil when ctx is done. A failed check (the path
// cannot be examined) is logged and retried at the next period.
func (p *Pipeline) watchBuffer(ctx context.Context, every time.Duration) error {
	var lastErr string
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.cfg.Clock.After(every):
		}
		if err := p.buf.Truncated(); err != nil {
			return err // logged by Run
		}
		replaced, err := p.buf.Replaced()
		if err != nil {
			if err.Error() != lastErr {
				p.log.Warn("cannot check the buffer file", "path", p.buf.Path(), "err", err)
				lastErr = err.Error()
			}
			continue
		}
		lastErr = ""
		if replaced {
			p.log.Error("buffer file deleted or replaced while running: stopping; it is restored at the path "+
				"from the open file, so the restart resumes exactly", "path", p.buf.Path())
			return fmt.Errorf("%w: %s", ErrBufferReplaced, p.buf.Path())
		}
	}
}
