package buffer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"syscall"
	"time"
)

// ErrCorrupt is returned by Open and Verify for a buffer file that bbolt
// could not open safely: a bad or truncated file.
var ErrCorrupt = errors.New("buffer file is corrupt")

// The bbolt (v1.x) file layout Verify reads. Every integer is little-endian
// (bbolt writes its structs in the machine's order; logtally builds for
// little-endian machines only, see doc.go).
const (
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	pageHeaderSize  = 16 // id u64, flags u16, count u16, overflow u32
	elementSize     = 16 // branch: pos, ksize u32, pgid u64; leaf: flags, pos, ksize, vsize u32
	metaSize        = 64 // magic, version, pageSize, flags u32; root, sequence, freelist, pgid, txid, checksum u64
	metaChecksumAt  = 56 // the checksum covers the meta's bytes before it
	branchPageFlag  = 0x01
	leafPageFlag    = 0x02
	metaPageFlag    = 0x04
	freelistFlag    = 0x10
	bucketLeafFlag  = 0x01
	noFreelist      = ^uint64(0)
	maxVerifyDepth  = 64  // bucket nesting plus tree depth; logtally uses 3 levels of buckets
	minPageSize     = 512 // bbolt refuses smaller pages
	maxPageSize     = 1 << 20
	inBucketSize    = 16 // root, sequence
	unknownPageSize = 4096
)

// meta is the part of a bbolt meta page Verify uses.
type meta struct {
	pageSize       uint32
	root, freelist uint64
	pgid, txid     uint64
}

// Verify checks the bbolt file at path with plain reads, without mapping
// it: both meta pages (magic, version, checksum), the file size against
// the newest valid meta's high-water mark, and every page reachable from
// the root bucket (page ids, types, element bounds, child page ids). It
// returns nil for a sound file and an error wrapping ErrCorrupt that says
// what is wrong otherwise.
//
// It exists because bbolt does not return such errors: opening a
// truncated file faults (SIGBUS) when a page beyond the end is read
// through the mapping, and opening a file with overwritten pages panics in
// the goroutine that rebuilds the free list (NoFreelistSync), where no
// recover can catch it.
func Verify(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	v := verifier{r: f, size: st.Size()}
	if err := v.run(); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	return nil
}

type verifier struct {
	r        io.ReaderAt
	size     int64
	pageSize int64
	hwm      uint64 // pages in use: every page id must be below it
	seen     map[uint64]bool
}

func (v *verifier) run() error {
	if v.size < 2*minPageSize {
		return fmt.Errorf("file is %d bytes, too short for bbolt's two meta pages", v.size)
	}
	m0, err0 := v.readMeta(0)
	ps := int64(unknownPageSize)
	if err0 == nil {
		ps = int64(m0.pageSize)
	}
	m1, err1 := v.readMeta(ps)
	var m meta
	switch {
	case err0 == nil && err1 == nil:
		m = m0
		if m1.txid > m0.txid {
			m = m1
		}
	case err0 == nil:
		m = m0
	case err1 == nil:
		m = m1
	default:
		return fmt.Errorf("no valid meta page (page 0: %v; page 1: %v)", err0, err1)
	}
	v.pageSize, v.hwm = int64(m.pageSize), m.pgid
	if need := int64(m.pgid) * v.pageSize; m.pgid > uint64(v.size) || need > v.size {
		return fmt.Errorf("file is %d bytes, but its meta page (transaction %d) says %d pages of %d bytes (%d bytes): truncated",
			v.size, m.txid, m.pgid, v.pageSize, need)
	}
	if m.root >= m.pgid {
		return fmt.Errorf("root page %d beyond the high-water mark %d", m.root, m.pgid)
	}
	if m.freelist != noFreelist {
		if _, err := v.page(m.freelist, freelistFlag); err != nil {
			return fmt.Errorf("freelist: %w", err)
		}
	}
	v.seen = map[uint64]bool{}
	return v.tree(m.root, 0)
}

// readMeta reads and checks the meta page at off.
func (v *verifier) readMeta(off int64) (meta, error) {
	var b [pageHeaderSize + metaSize]byte
	if _, err := v.r.ReadAt(b[:], off); err != nil {
		return meta{}, err
	}
	if flags := binary.LittleEndian.Uint16(b[8:]); flags != metaPageFlag {
		return meta{}, fmt.Errorf("page flags %#x, not a meta page", flags)
	}
	mb := b[pageHeaderSize:]
	if binary.LittleEndian.Uint32(mb[0:]) != boltMagic {
		return meta{}, errors.New("bad magic number")
	}
	if ver := binary.LittleEndian.Uint32(mb[4:]); ver != boltVersion {
		return meta{}, fmt.Errorf("format version %d, want %d", ver, boltVersion)
	}
	h := fnv.New64a()
	h.Write(mb[:metaChecksumAt])
	if h.Sum64() != binary.LittleEndian.Uint64(mb[metaChecksumAt:]) {
		return meta{}, errors.New("checksum mismatch")
	}
	m := meta{
		pageSize: binary.LittleEndian.Uint32(mb[8:]),
		root:     binary.LittleEndian.Uint64(mb[16:]),
		freelist: binary.LittleEndian.Uint64(mb[32:]),
		pgid:     binary.LittleEndian.Uint64(mb[40:]),
		txid:     binary.LittleEndian.Uint64(mb[48:]),
	}
	if m.pageSize < minPageSize || m.pageSize > maxPageSize || m.pageSize&(m.pageSize-1) != 0 {
		return meta{}, fmt.Errorf("page size %d", m.pageSize)
	}
	if m.pgid < 2 {
		return meta{}, fmt.Errorf("high-water mark %d", m.pgid)
	}
	return m, nil
}

// page reads page id (with its overflow pages) and checks its header
// against the id and the wanted flags (any of them).
func (v *verifier) page(id uint64, flags uint16) ([]byte, error) {
	if id < 2 || id >= v.hwm {
		return nil, fmt.Errorf("page id %d outside 2..%d", id, v.hwm-1)
	}
	var hdr [pageHeaderSize]byte
	if _, err := v.r.ReadAt(hdr[:], int64(id)*v.pageSize); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	if got := binary.LittleEndian.Uint64(hdr[0:]); got != id {
		return nil, fmt.Errorf("page %d identifies itself as page %d", id, got)
	}
	if got := binary.LittleEndian.Uint16(hdr[8:]); got&flags == 0 || got&^(branchPageFlag|leafPageFlag|metaPageFlag|freelistFlag) != 0 {
		return nil, fmt.Errorf("page %d has type flags %#x, want %#x", id, got, flags)
	}
	overflow := uint64(binary.LittleEndian.Uint32(hdr[12:]))
	if id+overflow >= v.hwm {
		return nil, fmt.Errorf("page %d with %d overflow pages ends beyond the high-water mark %d", id, overflow, v.hwm)
	}
	buf := make([]byte, int64(overflow+1)*v.pageSize)
	if _, err := v.r.ReadAt(buf, int64(id)*v.pageSize); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	return buf, nil
}

// tree checks the B+tree rooted at page id.
func (v *verifier) tree(id uint64, depth int) error {
	if depth > maxVerifyDepth {
		return fmt.Errorf("page %d: tree deeper than %d", id, maxVerifyDepth)
	}
	if v.seen[id] {
		return fmt.Errorf("page %d is reachable twice", id)
	}
	v.seen[id] = true
	p, err := v.page(id, branchPageFlag|leafPageFlag)
	if err != nil {
		return err
	}
	return v.node(p, id, depth)
}

// node checks the branch or leaf page p (a page read from the file, or an
// inline bucket's page, id 0).
func (v *verifier) node(p []byte, id uint64, depth int) error {
	if len(p) < pageHeaderSize {
		return fmt.Errorf("page %d: %d bytes", id, len(p))
	}
	flags := binary.LittleEndian.Uint16(p[8:])
	count := int(binary.LittleEndian.Uint16(p[10:]))
	if pageHeaderSize+count*elementSize > len(p) {
		return fmt.Errorf("page %d: %d elements do not fit in %d bytes", id, count, len(p))
	}
	for i := range count {
		at := pageHeaderSize + i*elementSize
		e := p[at : at+elementSize]
		switch flags {
		case branchPageFlag:
			pos, ksize := binary.LittleEndian.Uint32(e[0:]), binary.LittleEndian.Uint32(e[4:])
			if int64(at)+int64(pos)+int64(ksize) > int64(len(p)) {
				return fmt.Errorf("page %d: branch element %d out of bounds", id, i)
			}
			if err := v.tree(binary.LittleEndian.Uint64(e[8:]), depth+1); err != nil {
				return err
			}
		case leafPageFlag:
			eflags := binary.LittleEndian.Uint32(e[0:])
			pos, ksize, vsize := binary.LittleEndian.Uint32(e[4:]), binary.LittleEndian.Uint32(e[8:]), binary.LittleEndian.Uint32(e[12:])
			start := int64(at) + int64(pos) + int64(ksize)
			end := start + int64(vsize)
			if end > int64(len(p)) {
				return fmt.Errorf("page %d: leaf element %d out of bounds", id, i)
			}
			if eflags&bucketLeafFlag == 0 {
				continue
			}
			val := p[start:end]
			if len(val) < inBucketSize {
				return fmt.Errorf("page %d: bucket value of %d bytes", id, len(val))
			}
			if root := binary.LittleEndian.Uint64(val); root != 0 {
				if err := v.tree(root, depth+1); err != nil {
					return err
				}
			} else if err := v.node(val[inBucketSize:], 0, depth+1); err != nil { // inline bucket
				return err
			}
		default:
			return fmt.Errorf("page %d has type flags %#x, want a branch or leaf page", id, flags)
		}
	}
	return nil
}

// verifyLocked runs Verify on an existing file while holding its lock (the
// lock bbolt takes, so a running writer is never read mid-transaction),
// waiting up to timeout for it. A missing file is fine: Open creates it.
// verifyShared is verifyLocked for a reader: the file opened read-only,
// under a shared lock, which a running daemon's exclusive one refuses.
func verifyShared(path string, timeout time.Duration) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close() // releases the lock
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("lock: %w", err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (is logtally running on this state_dir?)", ErrLocked)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return Verify(path)
}

func verifyLocked(path string, timeout time.Duration) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close() // releases the lock
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("lock: %w", err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (is another logtally using this state_dir?)", ErrLocked)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return Verify(path)
}
