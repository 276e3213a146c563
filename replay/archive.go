package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/tailer"
)

// DefaultChunkSize is about how many bytes of lines a Stream chunk holds.
const DefaultChunkSize = 256 << 10

// Head returns the first bytes of name's decompressed stream, up to
// tailer.FingerprintSize: what identifies it in the ledger, whatever its
// compression. A stream shorter than that is returned whole. A stream
// damaged within them gives the bytes before the damage and the
// *DamagedError.
func Head(name string) ([]byte, Compression, error) {
	r, kind, err := Open(name)
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	head := make([]byte, tailer.FingerprintSize)
	n, err := io.ReadFull(r, head)
	switch {
	case IsDamaged(err):
		return head[:n], kind, err
	case err != nil && err != io.EOF && err != io.ErrUnexpectedEOF: // ReadFull's: a short whole stream
		return nil, kind, fmt.Errorf("%s (%s): %w", name, kind, err)
	}
	return head[:n], kind, nil
}

// Counters are a Stream's running totals, read while it runs.
type Counters struct {
	// Read is the bytes read from the file on disk (compressed bytes for
	// a compressed file).
	Read atomic.Int64
	// Lines is the lines sent.
	Lines atomic.Int64
}

// Stream reads name's decompressed stream from byte from (a line end: where
// it is counted up to) to its end and sends its lines on out as Archive
// chunks of source, each with the checkpoint (offset and fingerprint, from
// head, as Head returned it) that is true once its lines are counted.
// Lines longer than maxLine bytes are sent as skip chunks. A last line
// without '\n' of a whole stream is a line: the file is finished; unless
// live (the stream is a followed file's, or a copy of one: the tailer
// reads the rest of that line once it is written). It returns the stream's
// end offset (from when the stream is shorter than from: nothing was
// sent). It stops early, with ctx's error, when ctx ends. A damaged stream
// (see DamagedError) sends its whole lines before the damage, never the
// unterminated tail, and returns the offset just past the last of them
// with the *DamagedError.
func Stream(ctx context.Context, name, source string, head []byte, from int64, live bool, maxLine int, out chan<- tailer.Chunk, c *Counters) (int64, error) {
	var read atomic.Int64
	r, kind, err := open(name, &read)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var counted int64 // of read, already added to c.Read
	flushRead := func() {
		n := read.Load()
		c.Read.Add(n - counted)
		counted = n
	}
	defer flushRead()
	if from > 0 {
		n, err := io.CopyN(io.Discard, r, from)
		if IsDamaged(err) {
			return from, err
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("%s (%s): skip %d counted bytes: %w", name, kind, from, err)
		}
		if n < from {
			return from, nil // the ledger knows a longer version of it
		}
	}
	cp := func(off int64) tailer.Checkpoint {
		n := int(min(off, int64(len(head))))
		return tailer.Checkpoint{Source: source, Path: name, Offset: off, FPLen: n, FPSum: fnv1a.Extend(fnv1a.Offset, head[:n])}
	}
	send := func(ch tailer.Chunk) error {
		select {
		case out <- ch:
			flushRead()
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// Each read adds at most DefaultChunkSize bytes to the part of a line
	// carried over (at most maxLine bytes, else it is skipped), into a
	// buffer that goes back to a small free list when the aggregator
	// releases the chunk holding it.
	free := make(chan []byte, 4)
	get := func(size int) []byte {
		select {
		case b := <-free:
			if len(b) >= size {
				return b
			}
		default:
		}
		return make([]byte, max(size, 2*DefaultChunkSize))
	}
	put := func(b []byte) func() {
		return func() {
			select {
			case free <- b:
			default:
			}
		}
	}
	buf := get(DefaultChunkSize)
	pos := from // stream offset of buf[0]
	n := 0
	skipping := false  // inside a line longer than maxLine
	var skipFrom int64 // where that line began
	for {
		if ctx.Err() != nil {
			return pos, ctx.Err()
		}
		if len(buf)-n < DefaultChunkSize { // a long line carried over
			bigger := get(n + DefaultChunkSize)
			copy(bigger, buf[:n])
			buf = bigger
		}
		m, rerr := io.ReadFull(r, buf[n:n+DefaultChunkSize])
		n += m
		// ReadFull's own: the stream ended whole (see checked).
		eof := rerr == io.EOF || rerr == io.ErrUnexpectedEOF
		damaged := IsDamaged(rerr)
		if rerr != nil && !eof && !damaged {
			return pos, fmt.Errorf("%s (%s): %w", name, kind, rerr)
		}
		// finished: the last line, even without '\n', is a line.
		finished := eof && !live
		// Send whole lines, cutting out long ones.
		data := buf[:n]
		start := 0
		if skipping {
			i := bytes.IndexByte(data, '\n')
			if i < 0 && !finished {
				if eof || damaged { // the long line is not finished
					return skipFrom, rerrOrNil(damaged, rerr)
				}
				pos += int64(n)
				n = 0
				continue
			}
			end := n
			if i >= 0 {
				end = i + 1
			}
			if err := send(tailer.Chunk{Checkpoint: cp(pos + int64(end)), Start: skipFrom, Skipped: 1, Archive: true}); err != nil {
				return pos, err
			}
			skipping, start = false, end
		}
		last := bytes.LastIndexByte(data[start:], '\n')
		cut := start
		if last >= 0 {
			cut = start + last + 1
		}
		if finished {
			cut = n // a last line without '\n' counts: the file is finished
		}
		rest := n - cut
		if cut > start {
			lines, held := data[start:cut], buf
			if !eof && !damaged {
				buf = get(rest + DefaultChunkSize)
				copy(buf, data[cut:n])
			}
			var err error
			if len(lines) <= maxLine {
				// No line in it can be too long: one chunk, no copy, no
				// second pass over it.
				c.Lines.Add(int64(bytes.Count(lines, nl)))
				if lines[len(lines)-1] != '\n' {
					c.Lines.Add(1) // the unterminated last line
				}
				err = send(tailer.Chunk{Checkpoint: cp(pos + int64(cut)), Start: pos + int64(start), Data: lines, Archive: true}.WithRelease(put(held)))
			} else {
				err = sendLines(lines, pos+int64(start), maxLine, cp, send, c)
				put(held)()
			}
			if err != nil {
				return pos, err
			}
		} else if start > 0 {
			copy(buf, data[start:n])
		}
		if finished {
			return pos + int64(n), nil
		}
		if eof || damaged { // an unterminated tail is left unsent
			return pos + int64(cut), rerrOrNil(damaged, rerr)
		}
		if rest > maxLine { // the line begun at cut is too long
			skipping, skipFrom = true, pos+int64(cut)
			pos += int64(n)
			n = 0
			continue
		}
		pos += int64(cut)
		n = rest
	}
}

var nl = []byte{'\n'}

// rerrOrNil returns the read error of a damaged stream, nil for a whole one.
func rerrOrNil(damaged bool, err error) error {
	if damaged {
		return err
	}
	return nil
}

// sendLines sends data (whole lines beginning at stream offset at) as one
// data chunk, with each line longer than maxLine sent as a skip chunk
// instead.
func sendLines(data []byte, at int64, maxLine int, cp func(int64) tailer.Checkpoint, send func(tailer.Chunk) error, c *Counters) error {
	var lines int64
	begin := 0 // start of the data not sent yet
	for i := 0; i < len(data); {
		j := bytes.IndexByte(data[i:], '\n')
		end := len(data)
		if j >= 0 {
			end = i + j + 1
		}
		l := end - i
		if j >= 0 {
			l--
		}
		if l > maxLine {
			if begin < i {
				if err := send(tailer.Chunk{Checkpoint: cp(at + int64(i)), Start: at + int64(begin), Data: bytes.Clone(data[begin:i]), Archive: true}); err != nil {
					return err
				}
			}
			if err := send(tailer.Chunk{Checkpoint: cp(at + int64(end)), Start: at + int64(i), Skipped: 1, Archive: true}); err != nil {
				return err
			}
			begin = end
		} else {
			lines++
		}
		i = end
	}
	if begin < len(data) {
		if err := send(tailer.Chunk{Checkpoint: cp(at + int64(len(data))), Start: at + int64(begin), Data: bytes.Clone(data[begin:]), Archive: true}); err != nil {
			return err
		}
	}
	c.Lines.Add(lines)
	return nil
}
