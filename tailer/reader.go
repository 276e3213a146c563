package tailer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
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

// readOnce reads one block and hands on the complete lines in it.
func (fl *follower) readOnce(ctx context.Context) (int, bool, error) {
	rs := fl.cfg.readSize
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

// consume hands on the complete lines of data, which is the file's bytes
// from start on, and keeps the partial last line.
func (fl *follower) consume(ctx context.Context, data []byte, start int64, bufCap int) error {
	maxLine := fl.cfg.maxLineBytes
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
	return fl.out.send(ctx, Chunk{Checkpoint: fl.checkpoint(), Start: start, Data: data})
}

// emitSkip sends a skip chunk for one overlong line ending at end.
func (fl *follower) emitSkip(ctx context.Context, end int64) error {
	start := fl.off
	fl.log.logErr("skip "+fl.path, slog.LevelWarn, "skipping overlong lines (logged once a minute per file)", "path", fl.path, "offset", start, "bytes", end-start, "max", fl.cfg.maxLineBytes)
	fl.advance(end, nil)
	return fl.out.send(ctx, Chunk{Checkpoint: fl.checkpoint(), Start: start, Skipped: 1})
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
