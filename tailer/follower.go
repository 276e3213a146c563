package tailer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"slices"
	"time"
)

// follower reads one open file. Its fields belong to the goroutine running
// it, except the pub* fields, which are guarded by Tailer.mu.
type follower struct {
	t    *Tailer
	f    *os.File
	id   FileID
	path string // where the file was last seen

	off      int64  // just past the last line handed on (the checkpoint offset)
	pos      int64  // next byte to read
	pend     []byte // bytes [off, pos): a partial line, unless skipping
	skipping bool   // discarding an overlong line that starts at off
	buf      []byte // read buffer, reused while its bytes were copied out
	fpLen    int
	fpSum    uint64
	head     []byte // the first fpLen bytes, to recognise copies of this file
	fresh    bool   // found by glob with no checkpoint, nothing read yet: may be a copy

	rotated    bool      // the path no longer names this file and no glob matches it
	quietSince time.Time // last growth (or rotation), for RotateGrace

	adopt  *follower   // a copy to read (and then run) before anything else
	retire *Checkpoint // a checkpoint to delete once the file has been caught up

	pubPath  string
	pubHead  []byte // never modified once published
	pubFresh bool   // fresh, as seen by findCopy
	stolen   bool   // a truncated file's follower took this (fresh) file over
}

// run follows the file until it is finished or ctx is cancelled.
func (fl *follower) run(ctx context.Context) {
	defer fl.exit()
	fl.quietSince = fl.t.clk.Now()
	if fl.adopt != nil {
		c := fl.adopt
		fl.adopt = nil
		if err := fl.adoptCopy(ctx, c); err != nil {
			return
		}
	}
	if fl.retire != nil {
		if err := fl.catchUp(ctx); err != nil {
			return
		}
		cp := *fl.retire
		if err := fl.t.send(ctx, Chunk{Checkpoint: cp, Start: cp.Offset, Done: true}); err != nil {
			return
		}
		fl.retire = nil
		fl.t.release(cp.File, nil)
	}
	for {
		finished, err := fl.poll(ctx)
		if err != nil || finished {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-fl.t.clk.After(fl.t.cfg.PollInterval):
		}
	}
}

// isStolen reports whether another follower took this fresh file over.
func (fl *follower) isStolen() bool {
	fl.t.mu.Lock()
	defer fl.t.mu.Unlock()
	return fl.stolen
}

// exit closes the file and unregisters it.
func (fl *follower) exit() {
	if fl.adopt != nil {
		fl.adopt.exit()
		fl.adopt = nil
	}
	fl.close()
	fl.t.release(fl.id, fl)
	if fl.retire != nil { // never sent: keep nothing reserved
		fl.t.release(fl.retire.File, nil)
	}
}

func (fl *follower) close() {
	if fl.f != nil {
		fl.f.Close()
		fl.f = nil
	}
}

// poll reads what the file gained, handles truncation, deletion and
// rotation, and reports whether the file is finished (Done sent).
func (fl *follower) poll(ctx context.Context) (bool, error) {
	t := fl.t
	if fl.fresh {
		full, partial := copyState(fl.f, t.heads(fl.id))
		if full {
			t.log.Info("new file is a copy of a followed file, not following it", "path", fl.path)
			return true, nil
		}
		if partial && !fl.isStolen() {
			return false, nil
		}
		t.mu.Lock()
		stolen := fl.stolen
		fl.pubFresh = false
		t.mu.Unlock()
		if stolen {
			return true, nil
		}
		fl.fresh = false
	}
	var nlink uint64
	for {
		st, err := fl.f.Stat()
		if err != nil {
			t.log.logErr("fstat "+fl.path, slog.LevelWarn, "cannot stat open file", "err", err, "path", fl.path)
			return false, nil
		}
		_, nlink, _ = statID(st)
		size := st.Size()
		if size < fl.pos || !fl.fingerprintOK() {
			if err := fl.truncated(ctx); err != nil {
				return false, err
			}
			continue
		}
		if size == fl.pos {
			break
		}
		n, err := fl.readToEOF(ctx)
		if err != nil {
			return false, err
		}
		if n == 0 { // size said more, read found none: try next poll
			break
		}
		fl.quietSince = t.clk.Now()
	}

	if nlink == 0 {
		t.log.Info("file deleted, finished", "path", fl.path, "offset", fl.off)
		t.triggerRescan() // a new file may have taken its place
		return true, fl.done(ctx)
	}
	if !fl.rotated && !fl.stillMatched() {
		if p, ok := t.locate(fl.id); ok {
			t.log.Info("file renamed, still matched", "from", fl.path, "to", p)
			fl.setPath(p)
		} else {
			fl.rotated = true
			fl.quietSince = t.clk.Now()
			if p, ok := fl.findRenamed(); ok {
				fl.setPath(p)
			}
			t.log.Info("file rotated away, reading it until quiet", "path", fl.path, "offset", fl.off)
			t.triggerRescan()
		}
	}
	if fl.rotated && t.clk.Now().Sub(fl.quietSince) >= t.cfg.RotateGrace {
		if p, ok := t.locate(fl.id); ok {
			fl.rotated = false
			fl.setPath(p)
			return false, nil
		}
		t.log.Info("rotated file quiet, finished", "path", fl.path, "offset", fl.off)
		return true, fl.done(ctx)
	}
	return false, nil
}

// stillMatched reports whether the file's path still names it and is a glob
// match. A stat error other than not-exist counts as matched (nothing is
// known) and is logged.
func (fl *follower) stillMatched() bool {
	st, err := os.Stat(fl.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false
		}
		fl.t.log.logErr("stat "+fl.path, slog.LevelWarn, "cannot stat followed path", "err", err, "path", fl.path)
		return true
	}
	id, _, ok := statID(st)
	return ok && id == fl.id && fl.t.matches(fl.path)
}

// findRenamed looks for the file among the rotated candidates of its path.
func (fl *follower) findRenamed() (string, bool) {
	for _, c := range fl.t.candidates(fl.path) {
		if c.id == fl.id {
			return c.path, true
		}
	}
	return "", false
}

// fingerprintOK checks the file still begins with the bytes fingerprinted.
func (fl *follower) fingerprintOK() bool {
	if fl.fpLen == 0 {
		return true
	}
	ok, err := fingerprintMatches(fl.f, fl.fpLen, fl.fpSum)
	if err != nil {
		fl.t.log.logErr("fingerprint "+fl.path, slog.LevelWarn, "cannot read fingerprint", "err", err, "path", fl.path)
		return true
	}
	return ok
}

// truncated handles a file that shrank below what was read or whose first
// bytes changed: the lines written between the last read and the truncation
// are read from a copy if one is found (copytruncate), then the file
// restarts at 0.
func (fl *follower) truncated(ctx context.Context) error {
	old := fl.checkpoint()
	fl.t.log.Warn("file truncated, restarting at 0", "path", fl.path, "offset", old.Offset)
	c := fl.t.findCopy(old, fl.path)
	if c != nil {
		fl.t.log.Info("reading copy of truncated file", "path", c.path, "offset", old.Offset)
	}
	fl.off, fl.pos, fl.pend, fl.skipping = 0, 0, nil, false
	fl.fpLen, fl.fpSum, fl.head = 0, fnvOffset64, nil
	fl.publish()
	return fl.adoptCopy(ctx, c)
}

// adoptCopy reads the copy c (may be nil) to its end under its own
// identity, then sends this file's checkpoint at 0, then runs c on its own
// (it finishes like any rotated file). The order makes a restart between any
// two sends correct: the old checkpoint still finds the copy until the
// copy's own checkpoint exists, and the copy's checkpoint is deleted only
// after the old one was replaced.
func (fl *follower) adoptCopy(ctx context.Context, c *follower) error {
	if c != nil {
		if err := c.catchUp(ctx); err != nil {
			c.exit()
			return err
		}
	}
	if err := fl.t.send(ctx, Chunk{Checkpoint: fl.checkpoint(), Start: 0}); err != nil {
		if c != nil {
			c.exit()
		}
		return err
	}
	if c != nil {
		fl.t.spawn(ctx, c)
	}
	return nil
}

// catchUp sends the file's checkpoint at its start offset, so it exists
// before anything that depends on it, and reads the file to its end.
func (fl *follower) catchUp(ctx context.Context) error {
	if err := fl.t.send(ctx, Chunk{Checkpoint: fl.checkpoint(), Start: fl.off}); err != nil {
		return err
	}
	_, err := fl.readToEOF(ctx)
	return err
}

// done sends the Done chunk.
func (fl *follower) done(ctx context.Context) error {
	if len(fl.pend) > 0 || fl.skipping {
		fl.t.log.Warn("file finished with an unterminated last line, dropped", "path", fl.path, "bytes", fl.pos-fl.off)
	}
	return fl.t.send(ctx, Chunk{Checkpoint: fl.checkpoint(), Start: fl.off, Done: true})
}

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

// readOnce reads one block and hands on the complete lines in it.
func (fl *follower) readOnce(ctx context.Context) (int, bool, error) {
	rs := fl.t.cfg.ReadSize
	keep := fl.pend
	if fl.skipping {
		keep = nil
	}
	need := len(keep) + rs
	if cap(fl.buf) < need || (cap(fl.buf) > 2*rs && cap(fl.buf) > 2*need) {
		fl.buf = make([]byte, need)
	}
	buf := fl.buf[:need]
	k := copy(buf, keep)
	n, err := fl.f.ReadAt(buf[k:], fl.pos)
	eof := n < len(buf)-k
	if err != nil && !errors.Is(err, io.EOF) {
		fl.t.log.logErr("read "+fl.path, slog.LevelWarn, "cannot read file", "err", err, "path", fl.path)
		eof = true
	}
	if n == 0 {
		return 0, true, nil
	}
	start := fl.pos - int64(k)
	fl.pos += int64(n)
	return n, eof, fl.consume(ctx, buf[:k+n], start, cap(buf))
}

// consume hands on the complete lines of data, which is the file's bytes
// from start on, and keeps the partial last line.
func (fl *follower) consume(ctx context.Context, data []byte, start int64, bufCap int) error {
	maxLine := fl.t.cfg.MaxLineBytes
	fl.pend = nil
	if fl.skipping {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil
		}
		fl.skipping = false
		end := start + int64(i) + 1
		if err := fl.emitSkip(ctx, end); err != nil {
			return err
		}
		data = data[i+1:]
	}
	last := bytes.LastIndexByte(data, '\n')
	complete, rest := data[:last+1], data[last+1:]
	// Hand the buffer itself on when the lines fill much of it; copy them
	// out of it (and reuse it) when they are few.
	handOff := 4*len(complete) >= bufCap
	run := 0
	if len(complete) > maxLine { // some line may be too long
		for i := 0; i < len(complete); {
			j := i + bytes.IndexByte(complete[i:], '\n')
			if j-i > maxLine {
				if err := fl.emitData(ctx, complete[run:i], handOff); err != nil {
					return err
				}
				if err := fl.emitSkip(ctx, fl.off+int64(j+1-i)); err != nil {
					return err
				}
				run = j + 1
			}
			i = j + 1
		}
	}
	if err := fl.emitData(ctx, complete[run:], handOff); err != nil {
		return err
	}
	if len(rest) > maxLine {
		fl.skipping = true
		return nil
	}
	fl.pend = rest
	return nil
}

// emitData sends lines that start at fl.off.
func (fl *follower) emitData(ctx context.Context, lines []byte, handOff bool) error {
	if len(lines) == 0 {
		return nil
	}
	data := lines[:len(lines):len(lines)]
	if handOff {
		fl.buf = nil
	} else {
		data = bytes.Clone(lines)
	}
	start := fl.off
	fl.advance(start+int64(len(data)), data)
	return fl.t.send(ctx, Chunk{Checkpoint: fl.checkpoint(), Start: start, Data: data})
}

// emitSkip sends a skip chunk for one overlong line ending at end.
func (fl *follower) emitSkip(ctx context.Context, end int64) error {
	start := fl.off
	fl.t.log.logErr("skip "+fl.path, slog.LevelWarn, "skipping overlong lines (logged once a minute per file)", "path", fl.path, "offset", start, "bytes", end-start, "max", fl.t.cfg.MaxLineBytes)
	fl.advance(end, nil)
	return fl.t.send(ctx, Chunk{Checkpoint: fl.checkpoint(), Start: start, Skipped: 1})
}

// advance moves the checkpoint offset to end, extending the fingerprint
// while it covers less than FingerprintSize bytes. data, if not nil, is the
// file's bytes from the old offset.
func (fl *follower) advance(end int64, data []byte) {
	start := fl.off
	fl.off = end
	if fl.fpLen >= FingerprintSize || int64(fl.fpLen) >= end {
		return
	}
	want := int(min(end, FingerprintSize))
	from := int64(fl.fpLen)
	var more []byte
	if data != nil && from >= start && int64(want) <= start+int64(len(data)) {
		more = data[from-start : int64(want)-start]
	} else {
		var b [FingerprintSize]byte
		n, _ := fl.f.ReadAt(b[:want-fl.fpLen], from)
		more = b[:n]
	}
	fl.fpSum = fnvExtend(fl.fpSum, more)
	fl.fpLen += len(more)
	fl.head = append(slices.Clip(fl.head), more...) // a new array: the old one is published
	fl.publish()
}

func (fl *follower) checkpoint() Checkpoint {
	return Checkpoint{
		Source: fl.t.cfg.Source,
		Path:   fl.path,
		File:   fl.id,
		Offset: fl.off,
		FPLen:  fl.fpLen,
		FPSum:  fl.fpSum,
	}
}

func (fl *follower) setPath(p string) {
	fl.path = p
	fl.publish()
}

// publish copies what other goroutines may read.
func (fl *follower) publish() {
	fl.t.mu.Lock()
	fl.pubPath, fl.pubHead = fl.path, fl.head
	fl.t.mu.Unlock()
}
