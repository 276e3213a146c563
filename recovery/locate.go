package recovery

import (
	"fmt"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/record"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
)

// decodeRecord decodes the record's checkpoints, by buffer key.
func decodeRecord(cps []record.Checkpoint) (map[string]stream.Checkpoint, error) {
	out := make(map[string]stream.Checkpoint, len(cps))
	for _, c := range cps {
		var cp stream.Checkpoint
		if err := cp.UnmarshalBinary(c.Value); err != nil {
			return nil, fmt.Errorf("progress record: checkpoint %q: %w", c.Key, err)
		}
		out[c.Key] = cp
	}
	return out, nil
}

// encodeLocated encodes cps for the buffer, each with the identity and
// path its file was found under; one not found keeps its own (the tailer
// then finds it gone). The stored checkpoints are filed under their new
// key, as the aggregator files them; a snapshot's keep their own
// (keepKey), since an older generation of a truncated log is found in its
// copy, which the snapshot may name as well.
func encodeLocated(cps map[string]stream.Checkpoint, loc *locator, keepKey bool) (map[string][]byte, int, int, error) {
	out := make(map[string][]byte, len(cps))
	remapped, missing := 0, 0
	for k, cp := range cps {
		if l, ok := loc.locate(cp); ok {
			if l.ID != cp.File {
				remapped++
			}
			cp.File, cp.Path = l.ID, l.Path
		} else {
			missing++
		}
		b, err := cp.MarshalBinary()
		if err != nil {
			return nil, 0, 0, err
		}
		if !keepKey {
			k = cp.Key()
		}
		out[k] = b
	}
	return out, remapped, missing, nil
}

// decodeFinished decodes the record's finished files.
func decodeFinished(cps []record.Checkpoint) ([]stream.Checkpoint, error) {
	out := make([]stream.Checkpoint, 0, len(cps))
	for _, c := range cps {
		var cp stream.Checkpoint
		if err := cp.UnmarshalBinary(c.Value); err != nil {
			return nil, fmt.Errorf("progress record: finished file %q: %w", c.Key, err)
		}
		out = append(out, cp)
	}
	return out, nil
}

// locator finds checkpoints' files again (tailer.LocateSource: the
// source's globs and rotated globs, under its symlink rule), each checkpoint
// once: a file of one generation of a checkpoint key (a log truncated by
// copytruncate is another generation under the same key) is looked for
// by its own fingerprint, so it may be found in its copy.
type locator struct {
	globs map[string]tailer.SourceFiles
	clock clock.Clock
	found map[locKey]locResult
}

type locKey struct {
	key    string
	offset int64
	fpLen  int
	fpSum  uint64
}

type locResult struct {
	loc tailer.Located
	ok  bool
}

// relocate looks for cp's file again, its last answer forgotten: the file
// found there moved since (a rotation renaming files).
func (l *locator) relocate(cp stream.Checkpoint) (tailer.Located, bool) {
	delete(l.found, locKey{cp.Key(), cp.Offset, cp.FPLen, cp.FPSum})
	return l.locate(cp)
}

func (l *locator) locate(cp stream.Checkpoint) (tailer.Located, bool) {
	k := locKey{cp.Key(), cp.Offset, cp.FPLen, cp.FPSum}
	if r, done := l.found[k]; done {
		return r.loc, r.ok
	}
	var r locResult
	// A logrotate run renaming files while we look can hide one: look
	// again a few times before giving it up.
	for try := 0; try < 5; try++ {
		if r.loc, r.ok = tailer.LocateSource(l.globs[cp.Source], cp); r.ok {
			break
		}
		<-l.clock.After(20 * time.Millisecond)
	}
	l.found[k] = r
	return r.loc, r.ok
}
