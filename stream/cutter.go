package stream

import (
	"bytes"
)

// Cutter is the one rule for what a line is, used by every reader of log
// bytes: the follower, a replay's Stream (and the dry run through it) and
// the state-dir rebuild's re-read. The rebuild is exact only because its
// re-read cuts exactly as the follower did.
//
// The rules:
//   - A line ends with '\n' and keeps all its bytes: a '\r' before the
//     '\n' (CRLF), a '\r' alone, a NUL are left in; the parser strips a
//     trailing '\r'. An empty line is a line.
//   - A line longer than MaxLine bytes ('\n' not included) is never handed
//     on: it becomes a skip chunk (Skipped 1) spanning it and its '\n'.
//     Its bytes are not kept while it is read.
//   - The unterminated last line is a line only when the caller cuts the
//     stream's last bytes with final set: the stream ended and is whole (an
//     intact archive that is not a copy of a live file). A followed file's
//     last line is never final: the writer may still finish it. A damaged
//     stream (archive.DamagedError) is cut up to the damage without final:
//     only the whole lines before it, never the cut tail.
//
// The caller reads; the Cutter never copies. The caller hands Cut the bytes
// from the pending line's start (Off) on: the partial line Cut gave to keep
// last time, followed by what was read since; while Skipping, only what was
// read since. A chunk's Data aliases those bytes.
type Cutter struct {
	// MaxLine is the longest line, '\n' not included; longer lines are
	// skipped.
	MaxLine int
	// Off is the stream offset just past the last line handed on: where
	// the pending (partial or skipped) line begins.
	Off int64
	// Skipping: the pending line is longer than MaxLine; its bytes are not
	// kept and it ends as a skip chunk.
	Skipping bool
}

// Cut cuts data, the stream's bytes from at on, into chunks. Unless
// c.Skipping, at must be c.Off (data begins with the partial line kept
// last time). final: data ends the stream, which is whole, so its
// unterminated last line is a line.
//
// keep is called once, before any chunk is sent, with the partial last
// line to carry into the next Cut (nil when there is none, or when it is
// too long and is being skipped); it aliases data. send is called, in
// stream order, with each chunk: a data chunk (Start, Data, and
// Checkpoint.Offset the end of Data) or a skip chunk (Start, Skipped 1,
// Checkpoint.Offset the end of the skipped line); the caller fills in the
// rest of the checkpoint. last is true for the last chunk Cut sends from
// data: only it may take data's buffer, the data of a chunk before it must
// be copied if kept. A send error stops Cut and is returned.
//
// When no line can be too long (the complete lines are at most MaxLine
// bytes together), data is not scanned line by line.
func (c *Cutter) Cut(data []byte, at int64, final bool, keep func(partial []byte), send func(ch Chunk, last bool) error) error {
	skipEnd := int64(-1) // the end of a skipped line that ends in data
	if c.Skipping {
		i := bytes.IndexByte(data, '\n')
		switch {
		case i >= 0:
			skipEnd, data, at = at+int64(i)+1, data[i+1:], at+int64(i)+1
		case final:
			skipEnd, data, at = at+int64(len(data)), nil, at+int64(len(data))
		default:
			keep(nil)
			return nil
		}
	}
	last := bytes.LastIndexByte(data, '\n')
	complete, rest := data[:last+1], data[last+1:]
	if final {
		complete, rest = data, nil
	}
	skipNext := len(rest) > c.MaxLine
	if skipNext {
		keep(nil)
	} else {
		keep(rest)
	}
	if skipEnd >= 0 {
		ch := Chunk{Start: c.Off, Skipped: 1}
		ch.Checkpoint.Offset = skipEnd
		if err := send(ch, len(complete) == 0); err != nil {
			return err
		}
		c.Off, c.Skipping = skipEnd, false
	}
	run := 0                       // start of the lines not sent yet
	if len(complete) > c.MaxLine { // some line may be too long
		for i := 0; i < len(complete); {
			j := bytes.IndexByte(complete[i:], '\n')
			end, n := len(complete), len(complete)-i // an unterminated last line
			if j >= 0 {
				end, n = i+j+1, j
			}
			if n > c.MaxLine {
				if run < i {
					if err := c.sendData(complete[run:i], at+int64(run), false, send); err != nil {
						return err
					}
				}
				ch := Chunk{Start: at + int64(i), Skipped: 1}
				ch.Checkpoint.Offset = at + int64(end)
				if err := send(ch, end == len(complete)); err != nil {
					return err
				}
				c.Off = at + int64(end)
				run = end
			}
			i = end
		}
	}
	if run < len(complete) {
		if err := c.sendData(complete[run:], at+int64(run), true, send); err != nil {
			return err
		}
	}
	c.Skipping = skipNext
	return nil
}

// sendData sends lines, beginning at stream offset at, as one data chunk.
func (c *Cutter) sendData(lines []byte, at int64, last bool, send func(Chunk, bool) error) error {
	ch := Chunk{Start: at, Data: lines[:len(lines):len(lines)]}
	ch.Checkpoint.Offset = at + int64(len(lines))
	if err := send(ch, last); err != nil {
		return err
	}
	c.Off = ch.Checkpoint.Offset
	return nil
}
