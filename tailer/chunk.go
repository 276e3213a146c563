package tailer

import "bytes"

// Chunk is a run of complete lines from one file, or a notice about the file.
//
// Exactly one of these holds:
//   - Data chunk: Skipped == 0, Done == false. Data is exactly the bytes
//     [Start, Checkpoint.Offset) of the file: whole lines, each ending in '\n'
//     (a '\r' before the '\n' is left in). Data may be empty: a chunk with
//     no data still carries a checkpoint to persist (a file adopted at an
//     offset, or a file found truncated, which has Start == Offset == 0).
//   - Skip chunk: Skipped > 0, Data is empty. [Start, Checkpoint.Offset)
//     holds exactly Skipped lines longer than MaxLineBytes, each with its '\n'.
//   - Done chunk: Done == true, Data is empty, Start == Checkpoint.Offset. The
//     file is finished (deleted, or rotated away and drained) and the stored
//     checkpoint under Checkpoint.Key() should be deleted.
//
// After the consumer has processed every line of a chunk, Checkpoint is the
// state to persist (or to delete, for a Done chunk), in the same transaction
// as the counts of those lines. Chunks of one file arrive in file order.
type Chunk struct {
	Checkpoint Checkpoint
	Start      int64
	Data       []byte
	Skipped    int
	Done       bool
}

// Lines calls fn for each line in c.Data (without the trailing '\n') with the
// file offset just past that line. line aliases c.Data.
func (c *Chunk) Lines(fn func(line []byte, end int64)) {
	data := c.Data
	pos := c.Start
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 { // cannot happen for chunks made by a Tailer
			pos += int64(len(data))
			fn(data, pos)
			return
		}
		pos += int64(i) + 1
		fn(data[:i], pos)
		data = data[i+1:]
	}
}
