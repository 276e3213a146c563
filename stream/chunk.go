package stream

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
//     holds exactly Skipped lines longer than the reader's limit (the
//     Cutter's MaxLine), each with its '\n'.
//   - Done chunk: Done == true, Data is empty, Start == Checkpoint.Offset. The
//     file is finished (deleted, or rotated away and drained) and the stored
//     checkpoint under Checkpoint.Key() should be deleted.
//   - Barrier: Barrier != nil, nothing else set; of no file. Its consumer
//     calls Barrier once what it made of the chunks before it on the same
//     channel is durable (see the field).
//
// After the consumer has processed every line of a chunk, Checkpoint is the
// state to persist (or to delete, for a Done chunk), in the same transaction
// as the counts of those lines. Chunks of one file arrive in file order.
//
// A large chunk's Data may be its reader's read buffer itself (a
// Tailer's: WithBuffer): the consumer should call Release once it is done
// with Data, so the buffer is read into again instead of a new one being
// allocated.
type Chunk struct {
	Checkpoint Checkpoint
	Start      int64
	Data       []byte
	Skipped    int
	Done       bool
	// Archive marks a chunk of a replayed file, not a followed one: its
	// Checkpoint (File zero) moves only the ledger, never the stored
	// checkpoints. A Tailer never sets it.
	Archive bool
	// Shrunk marks the checkpoint-only chunk of a file shrunk in place:
	// its offset is below what was counted of its stream, and the
	// stream's ledger entry moves down with it (else a restart would take
	// the old, greater offset for the stream and skip the lines written
	// after the cut).
	Shrunk bool
	// Ahead holds Data's lines parsed ahead of the aggregator by the
	// goroutine that read them (aggregate.Preparser.Prepare), or nil: the
	// aggregator parses Data. The aggregator takes it over with the chunk.
	// A Tailer never sets it.
	Ahead Parsed
	// Barrier, when not nil, makes the chunk a barrier: no file's, it
	// holds nothing, and its consumer, having handled every chunk sent
	// before it on the same channel, makes them durable (the aggregator:
	// commits them to the buffer) and calls Barrier with the error that
	// kept it from doing so, nil when they are. Barrier must not block.
	// A Tailer never sets it.
	Barrier func(error)

	buf  []byte // the pooled read buffer Data is part of, if any
	pool Pool   // where buf goes back to

	release func() // WithRelease's
}

// Parsed is a chunk's lines parsed ahead of its consumer (Chunk.Ahead).
// Its type is the consumer's (aggregate's, made of parser's types), which
// this package, a leaf, cannot name; the consumer takes it over from the
// chunk and releases it.
type Parsed interface {
	// Release hands it back to be parsed into again; it is not used
	// after.
	Release()
}

// Pool takes back the read buffers of the chunks made from it (a Tailer's
// free list): see WithBuffer.
type Pool interface {
	Put(buf []byte)
}

// WithBuffer returns c whose Data is part of buf, a read buffer of pool:
// Release hands buf back to pool, to be read into again.
func (c Chunk) WithBuffer(buf []byte, pool Pool) Chunk {
	c.buf, c.pool = buf, pool
	return c
}

// Buffer returns the pooled read buffer c.Data is part of (WithBuffer),
// nil when there is none or it was released.
func (c *Chunk) Buffer() []byte { return c.buf }

// WithRelease returns c whose Release also calls release: a chunk made
// outside a Tailer (a replay's) whose Data is a buffer its maker reuses.
func (c Chunk) WithRelease(release func()) Chunk {
	c.release = release
	return c
}

// Release hands the read buffer behind c.Data back to its Pool (that of
// the Tailer that sent c), to be read into again, and calls WithRelease's
// function. Call it once, after the last use of c.Data (and of the lines
// Lines passed on); neither may be used after, and c.Data is
// set to nil. It is safe on every chunk: a no-op for a chunk not backed by
// a pooled buffer (a small read, which is copied out, a skip or Done chunk,
// a chunk not made by a Tailer) and for a chunk released already through
// the same variable. Never calling it is safe too: the garbage collector
// then takes the buffer.
func (c *Chunk) Release() {
	if c.pool != nil {
		c.pool.Put(c.buf)
	}
	if c.release != nil {
		c.release()
	}
	c.Data, c.buf, c.pool, c.release = nil, nil, nil, nil
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
