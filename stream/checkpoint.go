package stream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/logtally/logtally/fnv1a"
)

// FingerprintSize is the number of leading bytes of a file the fingerprint
// covers once the file is at least that long.
const FingerprintSize = 1024

// TailSize is the number of bytes just before a checkpoint's offset its
// tail check covers once the offset is at least that far: more than the
// last line of a log, so that two files whose first bytes are the same
// (a fixed banner, the same first requests) but were not cut at the same
// line are told apart where reading would resume.
const TailSize = 1024

// FileID identifies a file by device and inode.
type FileID struct{ Dev, Ino uint64 }

// str returns "dev:ino".
func (id FileID) str() string {
	return strconv.FormatUint(id.Dev, 10) + ":" + strconv.FormatUint(id.Ino, 10)
}

// Checkpoint is where reading of one file (or archive) stands. It is persisted by the
// caller (opaque bytes) in the same transaction as the counts of the lines
// before Offset.
type Checkpoint struct {
	Source string // the name of the source that reads the file
	Path   string // path the file was last seen under (informational, for logs and rotated-file search)
	File   FileID
	Offset int64  // byte offset just past the last line handed on
	FPLen  int    // number of leading bytes the fingerprint covers: min(Offset, FingerprintSize) when it was taken
	FPSum  uint64 // hash (FNV-1a 64) of the first FPLen bytes
	// TailLen and TailSum are the tail check: TailSum is the hash (FNV-1a
	// 64) of the TailLen bytes that end at Offset, TailLen =
	// min(Offset, TailSize). A file is resumed at Offset, or taken for a
	// copy of this one, only if its bytes there hash to TailSum. Zero
	// with a non-zero Offset: not recorded (a checkpoint stored by an
	// older logtally, encoding version 1), not checked.
	TailLen int
	TailSum uint64
	// Stream names the ledger entry the counting of this file moves (see
	// buffer.Mark.Stream): random, kept while the file is the same stream
	// (resumed, its copy adopted, shrunk in place), a new one when it
	// restarts at 0. Zero: none recorded (an older logtally's).
	Stream uint64
}

// Key returns a key unique per (Source, File): Source, a NUL byte, then
// "dev:ino". The caller stores the checkpoint under it.
func (c Checkpoint) Key() string {
	return c.Source + "\x00" + c.File.str()
}

// checkpointVersion is the first byte of the binary encoding. Version 1
// (an older logtally's) ends after FPSum: it decodes with no tail check
// and no stream.
const checkpointVersion = 2

// MarshalBinary encodes c: a version byte, then Source and Path as
// uvarint-length-prefixed strings, then Dev, Ino, Offset, FPLen, FPSum,
// TailLen, TailSum and Stream as uvarints.
func (c Checkpoint) MarshalBinary() ([]byte, error) {
	if c.Offset < 0 || c.FPLen < 0 || c.FPLen > FingerprintSize || c.TailLen < 0 || c.TailLen > TailSize || int64(c.TailLen) > c.Offset {
		return nil, fmt.Errorf("marshal checkpoint: offset %d, fingerprint length %d or tail length %d out of range", c.Offset, c.FPLen, c.TailLen)
	}
	b := make([]byte, 0, 1+len(c.Source)+len(c.Path)+9*binary.MaxVarintLen64)
	b = append(b, checkpointVersion)
	b = binary.AppendUvarint(b, uint64(len(c.Source)))
	b = append(b, c.Source...)
	b = binary.AppendUvarint(b, uint64(len(c.Path)))
	b = append(b, c.Path...)
	b = binary.AppendUvarint(b, c.File.Dev)
	b = binary.AppendUvarint(b, c.File.Ino)
	b = binary.AppendUvarint(b, uint64(c.Offset))
	b = binary.AppendUvarint(b, uint64(c.FPLen))
	b = binary.AppendUvarint(b, c.FPSum)
	b = binary.AppendUvarint(b, uint64(c.TailLen))
	b = binary.AppendUvarint(b, c.TailSum)
	b = binary.AppendUvarint(b, c.Stream)
	return b, nil
}

// errBadCheckpoint is wrapped by every decoding error.
var errBadCheckpoint = errors.New("bad checkpoint encoding")

// UnmarshalBinary decodes what MarshalBinary produced, or the version 1
// encoding of an older logtally (no tail check, no stream). An unknown
// version, truncated input or trailing bytes are errors.
func (c *Checkpoint) UnmarshalBinary(b []byte) error {
	if len(b) == 0 {
		return fmt.Errorf("unmarshal checkpoint: empty: %w", errBadCheckpoint)
	}
	if b[0] != 1 && b[0] != checkpointVersion {
		return fmt.Errorf("unmarshal checkpoint: version %d: %w", b[0], errBadCheckpoint)
	}
	d := decoder{b: b[1:]}
	var out Checkpoint
	out.Source = d.str()
	out.Path = d.str()
	out.File.Dev = d.uvarint()
	out.File.Ino = d.uvarint()
	off := d.uvarint()
	fpLen := d.uvarint()
	out.FPSum = d.uvarint()
	var tailLen uint64
	if b[0] >= 2 {
		tailLen = d.uvarint()
		out.TailSum = d.uvarint()
		out.Stream = d.uvarint()
	}
	if d.err != nil {
		return fmt.Errorf("unmarshal checkpoint: %w", d.err)
	}
	if len(d.b) != 0 {
		return fmt.Errorf("unmarshal checkpoint: %d trailing bytes: %w", len(d.b), errBadCheckpoint)
	}
	if off > 1<<62 || fpLen > FingerprintSize || tailLen > TailSize || tailLen > off {
		return fmt.Errorf("unmarshal checkpoint: offset %d, fingerprint length %d or tail length %d out of range: %w", off, fpLen, tailLen, errBadCheckpoint)
	}
	out.Offset = int64(off)
	out.FPLen = int(fpLen)
	out.TailLen = int(tailLen)
	*c = out
	return nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("truncated number: %w", errBadCheckpoint)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = fmt.Errorf("truncated string: %w", errBadCheckpoint)
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// FingerprintMatches reports whether the first n bytes of f hash to sum.
// A file shorter than n does not match; an empty fingerprint matches all.
func FingerprintMatches(f io.ReaderAt, n int, sum uint64) (bool, error) {
	if n == 0 {
		return true, nil
	}
	var buf [FingerprintSize]byte
	got, err := f.ReadAt(buf[:n], 0)
	if got < n {
		if err == nil || errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, fmt.Errorf("read fingerprint: %w", err)
	}
	return fnv1a.Extend(fnv1a.Offset, buf[:n]) == sum, nil
}

// HasFingerprint reports whether the first n bytes of the file at path
// hash to sum (FingerprintMatches).
func HasFingerprint(path string, n int, sum uint64) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return FingerprintMatches(f, n, sum)
}

// HasTail reports whether c records its tail check: the bytes before a
// non-zero Offset (one an older logtally stored does not).
func (c Checkpoint) HasTail() bool { return c.TailLen > 0 }

// TailAt returns the tail check of f at off: the length min(off,
// TailSize) and the hash of the bytes that end at off. ok is false when f
// holds fewer bytes than off (or cannot be read there).
func TailAt(f io.ReaderAt, off int64) (n int, sum uint64, ok bool, err error) {
	n = int(min(off, TailSize))
	if n == 0 {
		return 0, fnv1a.Offset, off == 0, nil
	}
	var buf [TailSize]byte
	got, err := f.ReadAt(buf[:n], off-int64(n))
	if got < n {
		if err == nil || errors.Is(err, io.EOF) {
			return 0, 0, false, nil
		}
		return 0, 0, false, fmt.Errorf("read tail: %w", err)
	}
	return n, fnv1a.Extend(fnv1a.Offset, buf[:n]), true, nil
}

// TailOf returns the tail check of a stream at the end of b, which holds
// the stream's last bytes before that point (at least min(point,
// TailSize) of them).
func TailOf(b []byte) (n int, sum uint64) {
	if len(b) > TailSize {
		b = b[len(b)-TailSize:]
	}
	return len(b), fnv1a.Extend(fnv1a.Offset, b)
}

// TailMatches reports whether f's bytes that end at cp.Offset are those
// cp's tail check covers: true when cp records none (an older logtally's
// checkpoint, or Offset 0), false when f is shorter than cp.Offset.
func TailMatches(f io.ReaderAt, cp Checkpoint) (bool, error) {
	if !cp.HasTail() {
		return true, nil
	}
	n, sum, ok, err := TailAt(f, cp.Offset)
	if err != nil || !ok {
		return false, err
	}
	return n == cp.TailLen && sum == cp.TailSum, nil
}

// FileTailMatches opens path and checks cp's tail there.
func FileTailMatches(path string, cp Checkpoint) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return TailMatches(f, cp)
}

// NewID returns a new ledger stream id (Checkpoint.Stream): random,
// never zero.
func NewID() uint64 {
	for {
		if s := rand.Uint64(); s != 0 {
			return s
		}
	}
}
