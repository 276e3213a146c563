package aggregate

import (
	"fmt"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/stream"
)

// noteFinished keeps the last checkpoint of a file finished (a Done
// chunk) for the next commit: the batch that holds its last lines names
// it, so a rebuild of that batch can read it again although no stored
// checkpoint is left of it.
func (a *Aggregator) noteFinished(cp stream.Checkpoint) error {
	b, err := cp.MarshalBinary()
	if err != nil {
		return fmt.Errorf("aggregator: finished file %s: %w", cp.Path, err)
	}
	if a.finished == nil {
		a.finished = map[string][]byte{}
	}
	a.finished[cp.FinishedKey()] = b
	return nil
}

// noteArchive keeps the part of a replayed archive a chunk covers for the
// next commit, merged per archive: the batch that counts it names it, so
// a rebuild of that batch can read it again.
func (a *Aggregator) noteArchive(c *stream.Chunk) {
	cp := c.Checkpoint
	k := cp.Source + "\x00" + cp.Path
	if a.archives == nil {
		a.archives = map[string]*buffer.ArchiveRange{}
	}
	r := a.archives[k]
	if r == nil {
		r = &buffer.ArchiveRange{Source: cp.Source, Path: cp.Path, From: c.Start}
		a.archives[k] = r
	}
	r.From = min(r.From, c.Start)
	if cp.Offset >= r.To {
		r.To, r.FPLen, r.FPSum = cp.Offset, cp.FPLen, cp.FPSum
	}
}

// archiveRanges returns the archive parts noted since the last commit.
func (a *Aggregator) archiveRanges() []buffer.ArchiveRange {
	if len(a.archives) == 0 {
		return nil
	}
	out := make([]buffer.ArchiveRange, 0, len(a.archives))
	for _, r := range a.archives {
		out = append(out, *r)
	}
	return out
}
