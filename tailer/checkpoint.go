package tailer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/logtally/logtally/fnv1a"
)

// FingerprintSize is the number of leading bytes of a file the fingerprint
// covers once the file is at least that long.
const FingerprintSize = 1024

// FileID identifies a file by device and inode.
type FileID struct{ Dev, Ino uint64 }

// str returns "dev:ino".
func (id FileID) str() string {
	return strconv.FormatUint(id.Dev, 10) + ":" + strconv.FormatUint(id.Ino, 10)
}

// Checkpoint is where reading of one file stands. It is persisted by the
// caller (opaque bytes) in the same transaction as the counts of the lines
// before Offset.
type Checkpoint struct {
	Source string // source name given in Config
	Path   string // path the file was last seen under (informational, for logs and rotated-file search)
	File   FileID
	Offset int64  // byte offset just past the last line handed on
	FPLen  int    // number of leading bytes the fingerprint covers: min(Offset, FingerprintSize) when it was taken
	FPSum  uint64 // hash (FNV-1a 64) of the first FPLen bytes
}

// Key returns a key unique per (Source, File): Source, a NUL byte, then
// "dev:ino". The caller stores the checkpoint under it.
func (c Checkpoint) Key() string {
	return c.Source + "\x00" + c.File.str()
}

// checkpointVersion is the first byte of the binary encoding.
const checkpointVersion = 1

// MarshalBinary encodes c: a version byte, then Source and Path as
// uvarint-length-prefixed strings, then Dev, Ino, Offset, FPLen and FPSum as
// uvarints.
func (c Checkpoint) MarshalBinary() ([]byte, error) {
	if c.Offset < 0 || c.FPLen < 0 || c.FPLen > FingerprintSize {
		return nil, fmt.Errorf("marshal checkpoint: offset %d or fingerprint length %d out of range", c.Offset, c.FPLen)
	}
	b := make([]byte, 0, 1+len(c.Source)+len(c.Path)+6*binary.MaxVarintLen64)
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
	return b, nil
}

// errBadCheckpoint is wrapped by every decoding error.
var errBadCheckpoint = errors.New("bad checkpoint encoding")

// UnmarshalBinary decodes what MarshalBinary produced. An unknown version,
// truncated input or trailing bytes are errors.
func (c *Checkpoint) UnmarshalBinary(b []byte) error {
	if len(b) == 0 {
		return fmt.Errorf("unmarshal checkpoint: empty: %w", errBadCheckpoint)
	}
	if b[0] != checkpointVersion {
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
	if d.err != nil {
		return fmt.Errorf("unmarshal checkpoint: %w", d.err)
	}
	if len(d.b) != 0 {
		return fmt.Errorf("unmarshal checkpoint: %d trailing bytes: %w", len(d.b), errBadCheckpoint)
	}
	if off > 1<<62 || fpLen > FingerprintSize {
		return fmt.Errorf("unmarshal checkpoint: offset %d or fingerprint length %d out of range: %w", off, fpLen, errBadCheckpoint)
	}
	out.Offset = int64(off)
	out.FPLen = int(fpLen)
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

// fingerprintMatches reports whether the first n bytes of f hash to sum.
// A file shorter than n does not match; an empty fingerprint matches all.
func fingerprintMatches(f io.ReaderAt, n int, sum uint64) (bool, error) {
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

// fileFingerprintMatches opens path and checks its fingerprint.
func fileFingerprintMatches(path string, n int, sum uint64) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return fingerprintMatches(f, n, sum)
}
