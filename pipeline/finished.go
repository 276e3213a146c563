package pipeline

import (
	"fmt"

	"github.com/logtally/logtally/tailer"
)

// noteFinished keeps the last checkpoint of a file finished (a Done
// chunk) for the next commit: the batch that holds its last lines names
// it, so a rebuild of that batch can read it again although no stored
// checkpoint is left of it.
func (a *Aggregator) noteFinished(cp tailer.Checkpoint) error {
	b, err := cp.MarshalBinary()
	if err != nil {
		return fmt.Errorf("aggregator: finished file %s: %w", cp.Path, err)
	}
	if a.finished == nil {
		a.finished = map[string][]byte{}
	}
	a.finished[finishedKey(cp)] = b
	return nil
}

// finishedKey names one finished file: its checkpoint key (source and
// identity) and its fingerprint, so that a reused inode finished again is
// another entry.
func finishedKey(cp tailer.Checkpoint) string {
	return fmt.Sprintf("%s\x00%d:%016x", cp.Key(), cp.FPLen, cp.FPSum)
}
