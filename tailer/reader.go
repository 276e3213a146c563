package tailer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"

	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/stream"
)

// Reading: blocks of a file into chunks of whole lines.

// readToEOF reads until the end of the file and returns how many bytes it
// read. Only a cancelled ctx is an error; read errors are logged and the
// read is retried at the next poll.
func (fl *follower) readToEOF(ctx context.Context) (int64, error) {
	var total int64
	for {
		n, eof, err := fl.readOnce(ctx)
		total += int64(n)
		if err != nil {
			return total, err
		}
		if eof {
			return total, nil
		}
	}
}

// freeBuffers is the least number of read buffers a Tailer keeps for
// reuse. While a consumer catches up, the follower waits for it to take
// each chunk, so a released buffer is taken again at once; but a consumer
// that pauses (a commit) lets the follower fill the output channel, and
// then returns that many buffers in a row. So a Tailer keeps as many as
// can be in flight: the channel's capacity, the chunk being consumed and
// the one being read (newFreeList); buffers it could not keep would be
// garbage, and the next reads would allocate and fault in new ones.
const freeBuffers = 4

// freeList holds a Tailer's read buffers for reuse. A buffer handed on as
// a Chunk's Data comes back when the consumer calls Chunk.Release; a small
// read's lines are copied out and its buffer comes back at once.
//
// It also bounds the reads in progress: a read takes a turn before it
// takes a buffer and gives it back once its lines are handed on, so that
// at most as many followers as it keeps buffers for hold one while they
// wait for the consumer. Without turns each follower waiting to send held
// a buffer of its own: 10,000 files held 10,000 MiB buffers (issue 29).
type freeList struct {
	size  int           // the length of every buffer: ReadSize
	free  chan []byte   // at most max(freeBuffers, the output's capacity + 2)
	turns chan struct{} // the reads in progress, as many at most as free holds
}

// newFreeList keeps buffers of size bytes for a Tailer whose output
// channel holds queued chunks.
func newFreeList(size, queued int) *freeList {
	n := max(freeBuffers, queued+2)
	return &freeList{size: size, free: make(chan []byte, n), turns: make(chan struct{}, n)}
}

// take waits for a turn to read; only a cancelled ctx is an error.
func (l *freeList) take(ctx context.Context) error {
	select {
	case l.turns <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leave gives a turn back.
func (l *freeList) leave() { <-l.turns }

// get returns a buffer of l.size bytes, reused if one is free.
func (l *freeList) get() []byte {
	select {
	case b := <-l.free:
		return b
	default:
		return make([]byte, l.size)
	}
}

// Put keeps b for reuse, unless enough are kept. The caller must not use
// b after.
func (l *freeList) Put(b []byte) {
	if cap(b) != l.size {
		return
	}
	select {
	case l.free <- b[:l.size]:
	default:
	}
}

// readOnce reads one block and hands on the complete lines in it.
func (fl *follower) readOnce(ctx context.Context) (int, bool, error) {
	keep := fl.pend
	if fl.skipping {
		keep = nil
	}
	// A pooled buffer, unless the partial line carried over fills half of
	// it: then one that holds the line and a whole read.
	free := fl.out.bufs
	if err := free.take(ctx); err != nil {
		return 0, true, err
	}
	defer free.leave()
	var buf []byte
	if len(keep) <= free.size/2 {
		buf = free.get()
	} else {
		buf = make([]byte, len(keep)+fl.cfg.readSize)
	}
	fl.buf = buf
	defer fl.recycle()
	k := copy(buf, keep)
	n, err := fl.f.ReadAt(buf[k:], fl.pos)
	eof := n < len(buf)-k
	if err != nil && !errors.Is(err, io.EOF) {
		fl.log.logErr("read "+fl.path, slog.LevelWarn, "cannot read file", "err", err, "path", fl.path)
		eof = true
	}
	if n == 0 {
		return 0, true, nil
	}
	start := fl.pos - int64(k)
	fl.pos += int64(n)
	return n, eof, fl.consume(ctx, buf[:k+n], start, cap(buf))
}

// recycle gives the read buffer back unless a chunk took it.
func (fl *follower) recycle() {
	if fl.buf != nil {
		fl.out.bufs.Put(fl.buf)
		fl.buf = nil
	}
}

// consume hands on the complete lines of data, which is the file's bytes
// from start on, and keeps the partial last line. A followed file's last
// line is never final: the writer may still finish it.
func (fl *follower) consume(ctx context.Context, data []byte, start int64, bufCap int) error {
	cut := stream.Cutter{MaxLine: fl.cfg.maxLineBytes, Off: fl.off, Skipping: fl.skipping}
	// Hand the buffer itself on when the lines fill much of it; copy them
	// out of it when they are few. Only the last chunk made from a buffer
	// may take it: lines before an overlong line are copied. The partial
	// line is kept apart first: the buffer goes on with the chunk, or back
	// to the free list.
	err := cut.Cut(data, start, false, fl.keepPartial, func(c stream.Chunk, last bool) error {
		if c.Skipped > 0 {
			return fl.emitSkip(ctx, c.Checkpoint.Offset)
		}
		return fl.emitData(ctx, c.Data, last && 4*len(c.Data) >= bufCap)
	})
	fl.skipping = cut.Skipping
	return err
}

// keepPartial copies the partial last line of a read into fl.pend (nil:
// there is none, or it is being skipped).
func (fl *follower) keepPartial(rest []byte) {
	if cap(fl.pend) > 64<<10 && cap(fl.pend) > 4*len(rest) {
		fl.pend = nil // do not keep a long line's room for short ones
	}
	fl.pend = append(fl.pend[:0], rest...)
}

// emitData sends lines that start at fl.off. handOff: the chunk takes the
// read buffer (lines are in fl.buf), to be released by the consumer.
func (fl *follower) emitData(ctx context.Context, lines []byte, handOff bool) error {
	if len(lines) == 0 {
		return nil
	}
	c := stream.Chunk{Start: fl.off}
	if handOff {
		c.Data = lines[:len(lines):len(lines)]
		if cap(fl.buf) == fl.out.bufs.size {
			c = c.WithBuffer(fl.buf, fl.out.bufs)
		}
		fl.buf = nil
	} else {
		c.Data = bytes.Clone(lines)
	}
	fl.advance(c.Start+int64(len(c.Data)), c.Data)
	c.Checkpoint = fl.checkpoint()
	return fl.out.send(ctx, c)
}

// emitSkip sends a skip chunk for one overlong line ending at end.
func (fl *follower) emitSkip(ctx context.Context, end int64) error {
	start := fl.off
	fl.log.logErr("skip "+fl.path, slog.LevelWarn, "skipping overlong lines (logged once a minute per file)", "path", fl.path, "offset", start, "bytes", end-start, "max", fl.cfg.maxLineBytes)
	fl.advance(end, nil)
	return fl.out.send(ctx, stream.Chunk{Checkpoint: fl.checkpoint(), Start: start, Skipped: 1})
}

// advance moves the checkpoint offset to end, with its tail check,
// extending the fingerprint while it covers less than FingerprintSize
// bytes. data, if not nil, is the file's bytes from the old offset.
func (fl *follower) advance(end int64, data []byte) {
	start := fl.off
	fl.off = end
	fl.setTail(data)
	if fl.fpLen >= stream.FingerprintSize || int64(fl.fpLen) >= end {
		return
	}
	want := int(min(end, stream.FingerprintSize))
	from := int64(fl.fpLen)
	var more []byte
	if data != nil && from >= start && int64(want) <= start+int64(len(data)) {
		more = data[from-start : int64(want)-start]
	} else {
		var b [stream.FingerprintSize]byte
		n, _ := fl.f.ReadAt(b[:want-fl.fpLen], from)
		more = b[:n]
	}
	fl.fpSum = fnv1a.Extend(fl.fpSum, more)
	fl.fpLen += len(more)
	fl.head = append(slices.Clip(fl.head), more...) // a new array: the old one is published
	fl.publish()
}
