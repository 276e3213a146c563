package archive

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
)

// DefaultChunkSize is about how many bytes of lines a Stream chunk holds.
const DefaultChunkSize = 256 << 10

// ReadSize is how many bytes a reader of this package reads at a time:
// DefaultChunkSize. Tests (this package's and the dry run's) set it
// smaller to cut chunks in awkward places; nothing else changes it.
var ReadSize = DefaultChunkSize

// Head returns the first bytes of name's decompressed stream, up to
// stream.FingerprintSize: what identifies it in the ledger, whatever its
// compression. A stream shorter than that is returned whole. A stream
// damaged within them gives the bytes before the damage and the
// *DamagedError.
func Head(name string) ([]byte, Compression, error) {
	r, kind, err := Open(name)
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	head := make([]byte, stream.FingerprintSize)
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
//
// Its chunks mark a ledger stream of their own (stream.NewID), each
// checkpoint with its tail check.
func Stream(ctx context.Context, name, source string, head []byte, from int64, live bool, maxLine int, out chan<- stream.Chunk, c *Counters) (int64, error) {
	return Read(ctx, name, source, head, from, live, maxLine, func(ch stream.Chunk) error {
		return send(ctx, out, ch)
	}, c)
}

// send sends ch on out, or returns ctx's error if it ends first.
func send(ctx context.Context, out chan<- stream.Chunk, ch stream.Chunk) error {
	select {
	case out <- ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Read is Stream handing each chunk to deliver, which returns once it
// took it (or with ctx's error): the dry run adds chunks as they come, in
// the same goroutine.
func Read(ctx context.Context, name, source string, head []byte, from int64, live bool, maxLine int, deliver func(stream.Chunk) error, c *Counters) (int64, error) {
	_, end, err := ReadAt(ctx, name, source, head, Start{From: from, Stream: stream.NewID()}, live, maxLine, deliver, c)
	return end, err
}

// Start says where ReadAt reads a stream from.
type Start struct {
	// From is where to read from (a line end), unless Cands is set.
	From int64
	// Cands: read from the furthest of them the stream passes (see
	// Candidate), or from 0.
	Cands []Candidate
	// Stream is the ledger stream the chunks mark (Checkpoint.Stream).
	Stream uint64
}

// Candidate is where a ledger entry (or a held checkpoint) says a stream
// beginning like this one is counted. The stream is counted there when
// its bytes that end at Offset pass the tail check (an older logtally's
// entry, without one: when Offset is a line end of the stream); streams
// beginning with the same bytes share the entries' keys, not those
// bytes. Beyond the stream's end the stream is taken as counted whole (a
// shorter copy of a stream counted further, such as copytruncate's copy
// of a log read past the copy) when the Candidate's file (path) still
// holds its stream and has the stream's bytes where the stream ends
// (shorterCopy: this buffer's entries, a held checkpoint, a file read
// before it; never a path from the database); when that file cannot tell
// (gone, changed, unreadable, an older logtally's entry), only when
// covers says so, for an entry of the replay's own source.
type Candidate struct {
	tailer.Position
	Covers bool
	Path   string
	// Key is the caller's, ReadAt does not read it: a replay's, the
	// buffer's ledger key of the entry (empty for the database's or a
	// checkpoint), which it waits for to be acknowledged when it starts
	// there.
	Key string
}

// ReadAt is Read from st: it returns where it started reading
// (from) and the stream's end offset. Skipping to the start it reads the
// bytes before it, for the candidates' and the first chunk's tail
// checks; when the furthest Candidate fails its check and a nearer one
// passes, it opens the file again and skips to that one.
func ReadAt(ctx context.Context, name, source string, head []byte, st Start, live bool, maxLine int, deliver func(stream.Chunk) error, c *Counters) (from, end int64, err error) {
	countLines := c != nil // a pass over the lines of each chunk
	if c == nil {
		c = &Counters{}
	}
	var read atomic.Int64
	r, kind, err := open(name, &read)
	if err != nil {
		return 0, 0, err
	}
	defer func() { r.Close() }()
	var counted int64 // of read, already added to c.Read
	flushRead := func() {
		n := read.Load()
		c.Read.Add(n - counted)
		counted = n
	}
	defer flushRead()
	var before tailWindow // the stream's bytes before at (below), for tail checks
	from = st.From
	if st.Cands != nil {
		var at int64
		at, from, err = skipToCandidate(r, st.Cands, &before)
		if err != nil {
			if IsDamaged(err) {
				return from, from, err
			}
			return 0, 0, fmt.Errorf("%s (%s): skip counted bytes: %w", name, kind, err)
		}
		if at != from { // the furthest Candidate the stream reached is not its: back to the one that is
			r.Close()
			flushRead()
			c.Read.Add(-counted) // the progress counts the file once
			read.Store(0)
			counted = 0
			if r, kind, err = open(name, &read); err != nil {
				return 0, 0, err
			}
			before = tailWindow{}
			if n, err := io.CopyN(&before, r, from); err != nil || n < from {
				if IsDamaged(err) {
					return from, from, err
				}
				return 0, 0, fmt.Errorf("%s (%s): skip %d counted bytes: %w", name, kind, from, cmpErr(err, io.ErrUnexpectedEOF))
			}
		}
	} else if from > 0 {
		n, err := io.CopyN(&before, r, from)
		if IsDamaged(err) {
			return from, from, err
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, 0, fmt.Errorf("%s (%s): skip %d counted bytes: %w", name, kind, from, err)
		}
		if n < from {
			return from, from, nil // the ledger knows a longer version of it
		}
	}
	cp := func(off int64, tailLen int, tailSum uint64) stream.Checkpoint {
		n := int(min(off, int64(len(head))))
		return stream.Checkpoint{Source: source, Path: name, Offset: off, FPLen: n, FPSum: fnv1a.Extend(fnv1a.Offset, head[:n]),
			TailLen: tailLen, TailSum: tailSum, Stream: st.Stream}
	}
	send := func(ch stream.Chunk) error {
		if err := deliver(ch); err != nil {
			return err
		}
		flushRead()
		return nil
	}
	// Each read adds at most ReadSize bytes to the part of a line
	// carried over (at most maxLine bytes, else it is skipped), into a
	// buffer that goes back to a small free list when the aggregator
	// releases the chunk holding it. stream.Cutter cuts the lines, by the
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
		return make([]byte, max(size, 2*ReadSize))
	}
	put := func(b []byte) func() {
		return func() {
			select {
			case free <- b:
			default:
			}
		}
	}
	buf := get(ReadSize)
	n := 0     // bytes in buf: the partial line carried over, then the read
	at := from // stream offset of buf[0]
	cut := stream.Cutter{MaxLine: maxLine, Off: from}
	var scratch []byte
	tailAt := func(off int64) (int, uint64) { // the tail check at off, in [at, at+n]
		k := off - at
		if k >= stream.TailSize {
			return stream.TailOf(buf[k-stream.TailSize : k])
		}
		scratch = append(append(scratch[:0], before.bytes()...), buf[:k]...)
		return stream.TailOf(scratch)
	}
	for {
		if ctx.Err() != nil {
			return from, cut.Off, ctx.Err()
		}
		if len(buf)-n < ReadSize { // a long line carried over
			bigger := get(n + ReadSize)
			copy(bigger, buf[:n])
			buf = bigger
		}
		m, rerr := io.ReadFull(r, buf[n:n+ReadSize])
		n += m
		// ReadFull's own: the stream ended whole (see checked).
		eof := rerr == io.EOF || rerr == io.ErrUnexpectedEOF
		damaged := IsDamaged(rerr)
		if rerr != nil && !eof && !damaged {
			return from, cut.Off, fmt.Errorf("%s (%s): %w", name, kind, rerr)
		}
		// A whole stream that is not live is finished: its last line, even
		// without '\n', is a line. A damaged one is cut up to the damage
		// only: its unterminated tail is left unsent.
		held := buf
		taken := false // a chunk took held, to be released by the aggregator
		var carry []byte
		err := cut.Cut(buf[:n], at, eof && !live, func(p []byte) { carry = p }, func(ch stream.Chunk, last bool) error {
			off := ch.Checkpoint.Offset
			tl, ts := tailAt(off)
			ch.Checkpoint, ch.Archive = cp(off, tl, ts), true
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
			return from, cut.Off, err
		}
		if eof || damaged {
			if !taken {
				put(held)()
			}
			return from, cut.Off, rerrOrNil(damaged, rerr)
		}
		next := cut.Off
		if cut.Skipping {
			next = at + int64(n)
		}
		before.Write(buf[:next-at]) // before anything is read into buf again
		at = next
		if taken {
			// The aggregator may have released held already: then get
			// returns it, and copy moves the partial line within it.
			buf = get(len(carry) + ReadSize)
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

// tailWindow keeps the last stream.TailSize bytes written to it: a
// stream's bytes before a point, for tail checks there.
type tailWindow struct {
	b []byte
}

// Write keeps the last bytes of p after those kept; it never fails.
func (w *tailWindow) Write(p []byte) (int, error) {
	if len(p) >= stream.TailSize {
		w.b = append(w.b[:0], p[len(p)-stream.TailSize:]...)
		return len(p), nil
	}
	if drop := len(w.b) + len(p) - stream.TailSize; drop > 0 {
		w.b = append(w.b[:0], w.b[drop:]...)
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

// bytes returns the bytes kept; they alias the window.
func (w *tailWindow) bytes() []byte { return w.b }

// skipToCandidate reads r from its start up to the furthest of cands,
// checking each on the way (see Candidate), and keeps the bytes before
// where it stopped in before. at is where r stands, from the furthest
// Candidate that passed (0 when none did): when they differ, the caller
// reads again from from. A damaged stream stops it with from.
func skipToCandidate(r io.Reader, cands []Candidate, before *tailWindow) (at, from int64, err error) {
	cands = slices.Clone(cands)
	slices.SortFunc(cands, func(a, b Candidate) int { return cmp.Compare(a.Offset, b.Offset) })
	for i, c := range cands {
		if c.Offset <= at {
			if c.Offset == at && at > 0 && passes(c, before.bytes()) {
				from = at
			}
			continue
		}
		want := c.Offset - at
		n, err := io.CopyN(before, r, want)
		at += n
		if err != nil && !errors.Is(err, io.EOF) {
			return at, from, err
		}
		if n < want { // the stream ends before it
			if slices.ContainsFunc(cands[i:], func(c Candidate) bool { return shorterCopy(c, at, before.bytes()) }) {
				from = at // a shorter copy of a stream counted further: counted whole
			}
			return at, from, nil
		}
		if passes(c, before.bytes()) {
			from = at
		}
	}
	return at, from, nil
}

// shorterCopy reports whether a stream that ends at at, its last bytes
// tail (min(at, stream.TailSize) of them), is a copy of the first at bytes
// of c's stream (counted to c.Offset, further): c's file, when it still
// holds c's stream (its bytes pass c's check at c.Offset), says so by its
// own bytes that end at at; else c.Covers decides.
func shorterCopy(c Candidate, at int64, tail []byte) bool {
	if c.Path != "" {
		if same, known := sameAt(c.Path, c.Position, at, tail); known {
			return same
		}
	}
	return c.Covers
}

// sameAt reads the stream of the file at path to p.Offset and reports
// whether its bytes that end at at are tail (same), when it holds the
// stream p names (known: its bytes pass p's check at p.Offset).
func sameAt(path string, p tailer.Position, at int64, tail []byte) (same, known bool) {
	if at <= 0 || at > p.Offset || p.TailLen == 0 { // (a line end would not tell the file's stream)
		return false, false
	}
	r, _, err := Open(path)
	if err != nil {
		return false, false
	}
	defer r.Close()
	var w tailWindow
	if n, err := io.CopyN(&w, r, at); err != nil || n < at {
		return false, false
	}
	same = bytes.Equal(w.bytes(), tail)
	if n, err := io.CopyN(&w, r, p.Offset-at); err != nil || n < p.Offset-at {
		return false, false
	}
	if !passes(Candidate{Position: p}, w.bytes()) {
		return false, false // another file there now
	}
	return same, true
}

// passes reports whether a stream whose bytes before c.Offset end with
// tail (at least min(c.Offset, stream.TailSize) of them) is counted to
// c.Offset by c's entry.
func passes(c Candidate, tail []byte) bool {
	if c.TailLen == 0 { // an older logtally's entry: a line end of the stream
		return len(tail) > 0 && tail[len(tail)-1] == '\n'
	}
	n, sum := stream.TailOf(tail)
	return n == c.TailLen && sum == c.TailSum
}

// cmpErr returns err, or def when err is nil.
func cmpErr(err, def error) error {
	if err == nil {
		return def
	}
	return err
}
