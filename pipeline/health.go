package pipeline

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/flusher"
)

// Health is nil while the pipeline makes progress, else why not (for
// /healthz and /status): Alive's error (a stage stuck); commits failing
// on a full state dir (reading paused); reading paused on a full buffer
// for longer than Config.UnhealthyAfter; or hits pending with nothing
// written to MongoDB for longer than Config.UnhealthyAfter, saying since
// when and how the writes fail (MongoDB unreachable, refusing the
// credentials). An idle pipeline, nothing pending, is healthy however
// long ago its last batch was. Health failing stops nothing: the pipeline
// goes on reading into the buffer. A watchdog uses Alive instead, which
// none of these fail, so that a daemon waiting for MongoDB or for space is
// not killed.
func (p *Pipeline) Health(now time.Time) error {
	if err := p.Alive(now); err != nil {
		return err
	}
	h := health{flush: p.flush.Progress(), bufferFull: p.agg.BufferFull()}
	h.stateDirFull, h.stateDirErr = p.agg.Full()
	// An error (a truncated file: the watch reports it) leaves zero.
	_ = p.buf.View(func(tx *buffer.ReadTx) error {
		h.pendingKeys, h.pendingHits = tx.Unacked()
		return nil
	})
	return h.check(now, p.cfg.UnhealthyAfter)
}

// health is what Health decides on, read from the components.
type health struct {
	stateDirFull time.Time // aggregate.Aggregator.Full
	stateDirErr  error
	bufferFull   time.Time // aggregate.Aggregator.BufferFull
	pendingKeys  int       // buffer.ReadTx.Unacked
	pendingHits  uint64
	flush        flusher.Progress
}

// check returns why h is not healthy at now, every reason joined by "; ",
// or nil. Times are UTC, RFC 3339. Nothing read from the logs, and no
// address or secret, is in it.
func (h health) check(now time.Time, after time.Duration) error {
	var why []string
	if !h.stateDirFull.IsZero() {
		why = append(why, fmt.Sprintf("state dir full: commit failing since %s, reading paused: %v", utc(h.stateDirFull), h.stateDirErr))
	}
	if !h.bufferFull.IsZero() && now.Sub(h.bufferFull) > after {
		why = append(why, fmt.Sprintf("buffer full since %s: reading paused until MongoDB acknowledges batches (longer than http.unhealthy_after %s)",
			utc(h.bufferFull), after))
	}
	if h.pendingKeys > 0 && now.Sub(h.flush.At) > after {
		s := fmt.Sprintf("%d hits pending, nothing written to MongoDB since %s (longer than http.unhealthy_after %s); reading goes on into the buffer",
			h.pendingHits, utc(h.flush.At), after)
		if !h.flush.FailingSince.IsZero() {
			s = fmt.Sprintf("%s since %s: %s", h.flush.Failure, utc(h.flush.FailingSince), s)
		}
		why = append(why, s)
	}
	if len(why) == 0 {
		return nil
	}
	return errors.New(strings.Join(why, "; "))
}

// utc formats t for a health message.
func utc(t time.Time) string { return t.UTC().Format(time.RFC3339) }
