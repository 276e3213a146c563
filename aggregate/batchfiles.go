package aggregate

import (
	"fmt"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/stream"
)

// positions are where the chunks a Summer summed since the last commit
// end: what a commit writes beside their sums, so that what it counted is
// never read again (the checkpoints) and what a batch holds can be read
// again (the finished files, the archive parts, the ledger marks).
type positions struct {
	cps   map[string][]byte      // stream.Checkpoint.Key -> encoded checkpoint (nil: deleted)
	marks map[string]buffer.Mark // ledger key (of a stream) -> mark
	// finished holds the last checkpoints of the files finished
	// (stream.Checkpoint.FinishedKey -> encoded checkpoint; see
	// noteFinished).
	finished map[string][]byte
	archives map[string]*buffer.ArchiveRange // replayed archives' parts (noteArchive)
}

// empty reports whether no chunk's position is held.
func (ps *positions) empty() bool {
	return len(ps.cps) == 0 && len(ps.marks) == 0 && len(ps.archives) == 0
}

// noteFinished keeps the last checkpoint of a file finished (a Done
// chunk) for the next commit: the batch that holds its last lines names
// it, so a rebuild of that batch can read it again although no stored
// checkpoint is left of it.
func (ps *positions) noteFinished(cp stream.Checkpoint) error {
	b, err := cp.MarshalBinary()
	if err != nil {
		return fmt.Errorf("aggregator: finished file %s: %w", cp.Path, err)
	}
	if ps.finished == nil {
		ps.finished = map[string][]byte{}
	}
	ps.finished[cp.FinishedKey()] = b
	return nil
}

// noteArchive keeps the part of a replayed archive a chunk covers for the
// next commit, merged per archive: the batch that counts it names it, so
// a rebuild of that batch can read it again.
func (ps *positions) noteArchive(c *stream.Chunk) {
	cp := c.Checkpoint
	k := cp.Source + "\x00" + cp.Path
	if ps.archives == nil {
		ps.archives = map[string]*buffer.ArchiveRange{}
	}
	r := ps.archives[k]
	if r == nil {
		r = &buffer.ArchiveRange{Source: cp.Source, Path: cp.Path, From: c.Start}
		ps.archives[k] = r
	}
	r.From = min(r.From, c.Start)
	if cp.Offset >= r.To {
		r.To, r.FPLen, r.FPSum = cp.Offset, cp.FPLen, cp.FPSum
	}
}

// noteMark moves the ledger mark of c's stream to c's end, if c's
// checkpoint has a fingerprint.
func (ps *positions) noteMark(c *stream.Chunk) {
	cp := c.Checkpoint
	if cp.FPLen == 0 {
		return
	}
	k := cp.LedgerKey()
	// A shrink lowers the stream's entry; the marks after it in the
	// same commit start from there, so they lower it too.
	lower := c.Shrunk || ps.marks[k].Lower
	ps.marks[k] = buffer.Mark{
		FPLen: cp.FPLen, FPSum: cp.FPSum, Offset: cp.Offset, Stream: cp.Stream, TailLen: cp.TailLen, TailSum: cp.TailSum,
		Source: cp.Source, Path: cp.Path, Lower: lower,
	}
}

// archiveRanges returns the archive parts noted since the last commit.
func (ps *positions) archiveRanges() []buffer.ArchiveRange {
	if len(ps.archives) == 0 {
		return nil
	}
	out := make([]buffer.ArchiveRange, 0, len(ps.archives))
	for _, r := range ps.archives {
		out = append(out, *r)
	}
	return out
}

// heldMarks returns the ledger marks held.
func (ps *positions) heldMarks() []buffer.Mark {
	marks := make([]buffer.Mark, 0, len(ps.marks))
	for _, m := range ps.marks {
		marks = append(marks, m)
	}
	return marks
}
