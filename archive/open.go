package archive

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Compression names what Open found a file to be.
type Compression string

// The compressions Open recognises by their magic bytes.
const (
	Plain Compression = "plain"
	Gzip  Compression = "gzip"
	Zstd  Compression = "zstd"
	Bzip2 Compression = "bzip2"
)

var (
	gzipMagic  = []byte{0x1f, 0x8b}
	zstdMagic  = []byte{0x28, 0xb5, 0x2f, 0xfd}
	bzip2Magic = []byte("BZh")
)

// file is an open, possibly decompressing, log file.
type file struct {
	io.Reader
	closers []func() error
}

// Close closes the decompressor and the file.
func (f *file) Close() error {
	var first error
	for _, c := range f.closers {
		if err := c(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Open opens a log file for reading its lines, decompressing it when its
// first bytes are those of gzip (also concatenated members), zstd or bzip2,
// whatever its name: a ".log" that is gzip and a ".gz" that is plain both
// read right. Its Read returns io.EOF only at the end of a whole stream: a
// truncated or corrupt one gives a *DamagedError (see checked).
func Open(name string) (io.ReadCloser, Compression, error) {
	return open(name, nil)
}

// counting counts the bytes read from the file on disk.
type counting struct {
	r io.Reader
	n *atomic.Int64
}

func (c counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// DamagedError is a stream that cannot be read to its end: a compressed
// file cut short (truncated: the decompressor's unexpected EOF) or corrupt
// (a checksum or format error), or a read error. Offset is how many
// decompressed bytes were read before it: only the whole lines before
// Offset are counted, never the unterminated tail before the damage.
type DamagedError struct {
	Path   string
	Kind   Compression
	Offset int64
	Err    error
}

func (e *DamagedError) Error() string {
	what := "damaged at decompressed byte"
	if e.Kind == Plain {
		what = "cannot be read past byte"
	}
	return fmt.Sprintf("%s (%s): %s %d: %v", e.Path, e.Kind, what, e.Offset, e.Err)
}

func (e *DamagedError) Unwrap() error { return e.Err }

// IsDamaged reports whether err is (or wraps) a DamagedError.
func IsDamaged(err error) bool {
	var d *DamagedError
	return errors.As(err, &d)
}

// checked is the one rule for the end of a stream, whoever reads it (Head,
// Stream, the dry run): io.EOF only where the stream ends whole; any other
// error, io.ErrUnexpectedEOF of a decompressor cut short included, becomes
// a DamagedError at the decompressed offset reached, returned from then on.
type checked struct {
	r    io.Reader
	path string
	kind Compression
	off  int64
	err  error
}

func (c *checked) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	c.off += int64(n)
	if err != nil && err != io.EOF {
		c.err = &DamagedError{Path: c.path, Kind: c.kind, Offset: c.off, Err: err}
		return n, c.err
	}
	return n, err
}

// open is Open that adds the bytes read from the file on disk (compressed
// bytes for a compressed file) to read, when not nil.
func open(name string, read *atomic.Int64) (io.ReadCloser, Compression, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, "", err
	}
	var src io.Reader = f
	if read != nil {
		src = counting{f, read}
	}
	br := bufio.NewReaderSize(src, 256<<10)
	out := &file{Reader: br, closers: []func() error{f.Close}}
	magic, _ := br.Peek(4)
	kind := Plain
	switch {
	case bytes.HasPrefix(magic, gzipMagic):
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, "", fmt.Errorf("%s: gzip: %w", name, err)
		}
		out.Reader, kind = zr, Gzip
		out.closers = append([]func() error{zr.Close}, out.closers...)
	case bytes.HasPrefix(magic, zstdMagic):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			f.Close()
			return nil, "", fmt.Errorf("%s: zstd: %w", name, err)
		}
		out.Reader, kind = zr, Zstd
		out.closers = append([]func() error{func() error { zr.Close(); return nil }}, out.closers...)
	case bytes.HasPrefix(magic, bzip2Magic):
		out.Reader, kind = bzip2.NewReader(br), Bzip2
	}
	out.Reader = &checked{r: out.Reader, path: name, kind: kind}
	return out, kind, nil
}
