package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"

	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/tailer"
)

// DefaultChunkSize is about how many bytes of lines a Stream chunk holds.
const DefaultChunkSize = 256 << 10

// readSize is how many bytes readStream reads at a time: DefaultChunkSize,
// smaller in tests that cut chunks in awkward places.
var readSize = DefaultChunkSize

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
// with the *DamagedError. c may be nil: nothing is counted.
func Stream(ctx context.Context, name, source string, head []byte, from int64, live bool, maxLine int, out chan<- tailer.Chunk, c *Counters) (int64, error) {
	return readStream(ctx, name, source, head, from, live, maxLine, func(ch tailer.Chunk) error {
		return send(ctx, out, ch)
	}, c)
}

// send sends ch on out, or returns ctx's error if it ends first.
func send(ctx context.Context, out chan<- tailer.Chunk, ch tailer.Chunk) error {
	select {
	case out <- ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// readStream is Stream handing each chunk to deliver, which returns once it
// took it (or with ctx's error): the dry run adds chunks as they come, in
// the same goroutine.
func readStream(ctx context.Context, name, source string, head []byte, from int64, live bool, maxLine int, deliver func(tailer.Chunk) error, c *Counters) (int64, error) {
	countLines := c != nil // a pass over the lines of each chunk
	if c == nil {
		c = &Counters{}
	}
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
		if err := deliver(ch); err != nil {
			return err
		}
		flushRead()
		return nil
	}
	// Each read adds at most readSize bytes to the part of a line
	// carried over (at most maxLine bytes, else it is skipped), into a
	// buffer that goes back to a small free list when the aggregator
	// releases the chunk holding it. tailer.Cutter cuts the lines, by the
	// follower's rules.
	// The parallel dry run holds up to 2 × GOMAXPROCS + 1 chunks at once
	// (its queue and its workers').
	free := make(chan []byte, max(4, 2*runtime.GOMAXPROCS(0)+1))
	get := func(size int) []byte {
		select {
		case b := <-free:
			if len(b) >= size {
				return b
			}
		default:
		}
		return make([]byte, max(size, 2*readSize))
	}
	put := func(b []byte) func() {
		return func() {
			select {
			case free <- b:
			default:
			}
		}
	}
	buf := get(readSize)
	n := 0     // bytes in buf: the partial line carried over, then the read
	at := from // stream offset of buf[0]
	cut := tailer.Cutter{MaxLine: maxLine, Off: from}
	for {
		if ctx.Err() != nil {
			return cut.Off, ctx.Err()
		}
		if len(buf)-n < readSize { // a long line carried over
			bigger := get(n + readSize)
			copy(bigger, buf[:n])
			buf = bigger
		}
		m, rerr := io.ReadFull(r, buf[n:n+readSize])
		n += m
		// ReadFull's own: the stream ended whole (see checked).
		eof := rerr == io.EOF || rerr == io.ErrUnexpectedEOF
		damaged := IsDamaged(rerr)
		if rerr != nil && !eof && !damaged {
			return cut.Off, fmt.Errorf("%s (%s): %w", name, kind, rerr)
		}
		// A whole stream that is not live is finished: its last line, even
		// without '\n', is a line. A damaged one is cut up to the damage
		// only: its unterminated tail is left unsent.
		held := buf
		taken := false // a chunk took held, to be released by the aggregator
		var carry []byte
		err := cut.Cut(buf[:n], at, eof && !live, func(p []byte) { carry = p }, func(ch tailer.Chunk, last bool) error {
			ch.Checkpoint, ch.Archive = cp(ch.Checkpoint.Offset), true
			if ch.Skipped == 0 {
				if countLines {
					lines := int64(bytes.Count(ch.Data, nl))
					if ch.Data[len(ch.Data)-1] != '\n' {
						lines++ // the unterminated last line of a finished stream
					}
					c.Lines.Add(lines)
				}
				if last {
					ch, taken = ch.WithRelease(put(held)), true
				} else {
					ch.Data = bytes.Clone(ch.Data) // lines before an overlong one
				}
			}
			return send(ch)
		})
		if err != nil {
			return cut.Off, err
		}
		if eof || damaged {
			if !taken {
				put(held)()
			}
			return cut.Off, rerrOrNil(damaged, rerr)
		}
		if cut.Skipping {
			at += int64(n)
		} else {
			at = cut.Off
		}
		if taken {
			// The aggregator may have released held already: then get
			// returns it, and copy moves the partial line within it.
			buf = get(len(carry) + readSize)
		}
		n = copy(buf, carry)
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
