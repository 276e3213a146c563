package buffer

import (
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/measure"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ErrLocked is returned by Open when another process holds the file.
var ErrLocked = errors.New("buffer is locked by another process")

// ErrNoBatch is returned when the named batch is not the one in flight.
var ErrNoBatch = errors.New("no such sealed batch")

var (
	bktMeta        = []byte("meta")
	bktPending     = []byte("pending")
	bktSealed      = []byte("sealed")
	bktCheckpoints = []byte("checkpoints")
	subCounts      = []byte("counts")

	keyInstance = []byte("instance")
	keyCreated  = []byte("created")
	keyFormat   = []byte("format")
	keyLast     = []byte("last_commit")
	keyKeys     = []byte("keys")
	keyHits     = []byte("hits")
	keyID       = []byte("id")
	keyProgress = []byte("progress")
	keyToken    = []byte("commit_token")
)

// DefaultLockTimeout is Options.LockTimeout's default: how long Open waits
// for another process to release the file.
const DefaultLockTimeout = time.Second

// DefaultMaxSize is Options.MaxSize's default, 1 GiB: the live data at
// which Full reports true.
const DefaultMaxSize = 1 << 30

// formatVersion is the on-disk layout version stored in the meta bucket.
// Version 4 stamps each batch with its layout (layout.go): an older
// logtally would write a batch stamped LayoutTails every page to its own
// bucket, counting its cold pages twice when an attempt had written some
// to their tails. Version 3 may hold a writer number and numbered batches (number.go);
// version 2 stores each count as an encoded measure.Vector; version 1
// stored the views alone (8 bytes). This version reads all four: a file
// of an older version opened read-write is marked version 4 before
// anything is written to it, so that an older logtally refuses it
// ("unsupported buffer format 4") instead of misreading its counts,
// writing a numbered batch under the other guard form or a batch in the
// other layout (either would count it twice).
const (
	formatVersion   = 4
	formatVersionV1 = 1
)

// checkFormat returns an error unless v (the stored format, nil in a new
// file) is one this version reads.
func checkFormat(v []byte) error {
	if v == nil {
		return nil
	}
	if f := binary.BigEndian.Uint64(v); f < formatVersionV1 || f > formatVersion {
		return fmt.Errorf("unsupported buffer format %d (this logtally reads %d to %d)", f, formatVersionV1, formatVersion)
	}
	return nil
}

// perKeyOverhead approximates bbolt's per-element cost (leaf element header
// plus page slack) for the size estimate.
const perKeyOverhead = 24

// Options configures Open. The zero value is usable.
type Options struct {
	// LockTimeout bounds the wait for the file lock. Zero or negative:
	// DefaultLockTimeout.
	LockTimeout time.Duration
	// MaxSize is the size of live data (pending plus sealed counts, in
	// bytes) at which Full reports true. Zero: DefaultMaxSize; negative:
	// no limit.
	MaxSize int64
	// Logger receives open and recovery messages; nil discards them.
	Logger *slog.Logger
	// LedgerRetention is how long a ledger entry (how far a file or
	// archive is counted) is kept after it last moved. Zero:
	// DefaultLedgerRetention.
	LedgerRetention time.Duration
	// Clock stamps ledger marks and expires the ledger; nil: clock.Real.
	Clock clock.Clock
	// FileClock stamps the last commit's time and a batch's seal time
	// (the next start's tailer.Config.Since, directly or through a
	// rebuild): they are compared with file modification times, so it is
	// the kernel's clock; nil: clock.Files.
	FileClock clock.Clock
	// InstanceID, when not empty, is the id a file created by Open takes
	// instead of a random one: a buffer rebuilt from the database's
	// progress record adopts the lost buffer's id, under which its batches
	// are marked in the buckets. An existing file keeps its id.
	InstanceID string
}

// Batch describes the sealed batch in flight.
type Batch struct {
	// ID is made when the batch was sealed: "<writer number>:<sequence>"
	// (BatchID) once the buffer has a number, else 24 random hex digits.
	// The flusher marks every bucket it updates with it (its guard).
	ID string
	// Keys is the number of (site, page, second) counts in the batch.
	Keys int
	// Hits is the sum of the counts.
	Hits uint64
	// Progress is the flusher's resume point, opaque to the buffer.
	Progress []byte
	// MinuteOnly is a batch whose counts go to the minute buckets only:
	// once it is acknowledged they wait in the coarse counts for the next
	// full batch (Seal.MinuteOnly).
	MinuteOnly bool
	// Layout is how its counts are laid out in the database, stamped at
	// its seal: CurrentLayout, or LayoutPages for a batch sealed by a
	// logtally before layouts (or rebuilt from a record that names
	// none).
	Layout Layout
}

// Buffer is an open buffer file. Its methods are safe for concurrent use.
type Buffer struct {
	db       *bolt.DB
	instance string
	number   atomic.Int64 // the writer number, 0 before SetNumber (number.go)
	adopt    string       // Options.InstanceID
	maxSize  int64
	log      *slog.Logger
	file     fileID                // the identity of the file bbolt opened (watch.go)
	keep     time.Duration         // Options.LedgerRetention
	clock    clock.Clock           // Options.Clock
	files    clock.Clock           // Options.FileClock
	lost     atomic.Pointer[error] // set once the open file is found truncated (watch.go)
	sizer    *os.File              // the file bbolt opened, read with plain reads by checkSize; nil if it could not be opened
	pageSize int64                 // bbolt's page size (its Info reads it through the map)
	hwm      atomic.Int64          // the bytes bbolt used when checkSize last found the file whole
	wedged   atomic.Bool           // a write transaction faulted on a truncated file; bbolt's lock may be held (watch.go)

	pruned time.Time // when Seal last pruned the ledger (under wmu)

	// wmu is held across each write transaction (update; Commit, Seal
	// and Ack hold it across their update of the sizes below too, and
	// call write): bbolt runs one writer at a time anyway, no writer
	// waits on bbolt's own lock, which a write transaction faulted on a
	// truncated file may leave held (watch.go), and a commit's update
	// landing after a seal's counted its keys and hits pending again
	// (Pending, the next batch's Keys and Hits, Size).
	wmu          sync.Mutex
	mu           sync.Mutex
	pendingKeys  int
	pendingHits  uint64
	pendingBytes int64
	sealedBytes  int64
	coarseBytes  int64 // pending/coarse, sealed/coarse
}

// initialMap is the size bbolt maps the buffer file with from the start.
// bbolt maps 32 KiB and doubles the map as the file grows, each time
// copying out every node the transaction holds: a fresh buffer's first
// commit of a catch-up remapped about ten times (a tenth of the daemon's
// own start-up CPU). The map is address space, not memory; bbolt extends
// the file to it at the first growth, as a sparse file (no disk blocks
// until written). Verify and checkSize compare the file with the pages
// bbolt uses, not with its size, so the larger file hides no truncation.
const initialMap = 8 << 20

// Open opens or creates the buffer file at path (and its directory).
func Open(path string, opts Options) (*Buffer, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("create buffer directory: %w", err)
	}
	if err := verifyLocked(path, opts.LockTimeout); err != nil {
		return nil, fmt.Errorf("open buffer %s: %w", path, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:         opts.LockTimeout,
		NoFreelistSync:  true,
		FreelistType:    bolt.FreelistMapType,
		InitialMmapSize: initialMap,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open buffer %s: %w (is another logtally using this state_dir?)", path, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("open buffer %s: %w", path, err)
	}
	b := &Buffer{db: db, maxSize: cmp.Or(opts.MaxSize, DefaultMaxSize), log: log.With("component", "buffer"), adopt: opts.InstanceID,
		keep: cmp.Or(opts.LedgerRetention, DefaultLedgerRetention), clock: cmp.Or[clock.Clock](opts.Clock, clock.Real{}),
		files: cmp.Or[clock.Clock](opts.FileClock, clock.Files{})}
	if err := db.Update(b.init); err != nil {
		db.Close()
		return nil, fmt.Errorf("open buffer %s: %w", path, err)
	}
	// buffer_id, not instance: the logger may already carry the host's
	// instance name.
	b.log.Info("buffer open", "path", path, "buffer_id", b.instance,
		"pending_keys", b.pendingKeys, "pending_hits", b.pendingHits, "size", b.Size())
	b.watchFile(db)
	return b, nil
}

// watchFile records the identity of the file db opened (Replaced), its
// page size and a handle that reads its size (checkSize), if the path
// still names that file.
func (b *Buffer) watchFile(db *bolt.DB) {
	path := db.Path()
	b.file = statFile(path)
	b.pageSize = int64(db.Info().PageSize)
	if f, err := os.Open(path); err == nil {
		if st, err := f.Stat(); err == nil && b.file.err == nil && idOf(st) == b.file {
			b.sizer = f
		} else {
			f.Close()
		}
	}
}

// OpenReadOnly opens an existing buffer file to read it (`logtally state`):
// nothing is written, so a read-only state dir or file will do. It takes a
// shared lock: a running daemon (which holds the file) makes it return
// ErrLocked within opts.LockTimeout. The file is checked with Verify first.
// Every method that writes fails on it.
func OpenReadOnly(path string, opts Options) (*Buffer, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := verifyShared(path, opts.LockTimeout); err != nil {
		return nil, fmt.Errorf("open buffer %s: %w", path, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:        opts.LockTimeout,
		ReadOnly:       true,
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open buffer %s: %w (is logtally running on this state_dir?)", path, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("open buffer %s: %w", path, err)
	}
	b := &Buffer{db: db, maxSize: cmp.Or(opts.MaxSize, DefaultMaxSize), log: log.With("component", "buffer"),
		keep: cmp.Or(opts.LedgerRetention, DefaultLedgerRetention), clock: cmp.Or[clock.Clock](opts.Clock, clock.Real{}),
		files: cmp.Or[clock.Clock](opts.FileClock, clock.Files{})}
	if err := db.View(b.load); err != nil {
		db.Close()
		return nil, fmt.Errorf("open buffer %s read-only: %w", path, err)
	}
	b.watchFile(db)
	return b, nil
}

// load reads what init sets from a file init has prepared, without
// writing: a bucket missing is an error.
func (b *Buffer) load(tx *bolt.Tx) error {
	meta, pending, sealed := tx.Bucket(bktMeta), tx.Bucket(bktPending), tx.Bucket(bktSealed)
	if meta == nil || pending == nil || sealed == nil || tx.Bucket(bktCheckpoints) == nil || tx.Bucket(bktLedger) == nil ||
		pending.Bucket(subCounts) == nil || pending.Bucket(subMarks) == nil || pending.Bucket(subCoarse) == nil {
		return errors.New("buckets missing: the file was not written by this version of logtally; " +
			"open it once read-write (start logtally) to upgrade it")
	}
	if err := checkFormat(meta.Get(keyFormat)); err != nil {
		return err
	}
	b.instance = string(meta.Get(keyInstance))
	b.number.Store(int64(getU64(meta.Get(keyNumber))))
	b.pendingKeys = int(getU64(pending.Get(keyKeys)))
	b.pendingHits = getU64(pending.Get(keyHits))
	b.pendingBytes = dataBytes(pending.Bucket(subCounts))
	b.coarseBytes = dataBytes(pending.Bucket(subCoarse))
	if sco := sealed.Bucket(subCoarse); sco != nil {
		b.coarseBytes += dataBytes(sco)
	}
	if sc := sealed.Bucket(subCounts); sc != nil {
		b.sealedBytes = dataBytes(sc)
	}
	return nil
}

func (b *Buffer) init(tx *bolt.Tx) error {
	meta, err := tx.CreateBucketIfNotExists(bktMeta)
	if err != nil {
		return err
	}
	if err := checkFormat(meta.Get(keyFormat)); err != nil {
		return err
	}
	if id := meta.Get(keyInstance); id != nil {
		b.instance = string(id)
		b.number.Store(int64(getU64(meta.Get(keyNumber))))
		if err := meta.Put(keyFormat, u64(formatVersion)); err != nil {
			return err
		}
	} else {
		b.instance = cmp.Or(b.adopt, randomID(8))
		if err := meta.Put(keyInstance, []byte(b.instance)); err != nil {
			return err
		}
		if err := meta.Put(keyCreated, []byte(b.clock.Now().UTC().Format(time.RFC3339))); err != nil {
			return err
		}
		if err := meta.Put(keyFormat, u64(formatVersion)); err != nil {
			return err
		}
	}
	pending, err := tx.CreateBucketIfNotExists(bktPending)
	if err != nil {
		return err
	}
	pc, err := pending.CreateBucketIfNotExists(subCounts)
	if err != nil {
		return err
	}
	sealed, err := tx.CreateBucketIfNotExists(bktSealed)
	if err != nil {
		return err
	}
	if _, err := tx.CreateBucketIfNotExists(bktCheckpoints); err != nil {
		return err
	}
	if _, err := tx.CreateBucketIfNotExists(bktLedger); err != nil {
		return err
	}
	if _, err := tx.CreateBucketIfNotExists(bktVisitors); err != nil {
		return err
	}
	if _, err := tx.CreateBucketIfNotExists(bktSalts); err != nil {
		return err
	}
	if _, err := pending.CreateBucketIfNotExists(subMarks); err != nil {
		return err
	}
	if _, err := pending.CreateBucketIfNotExists(subDims); err != nil {
		return err
	}
	b.pendingKeys = int(getU64(pending.Get(keyKeys)))
	b.pendingHits = getU64(pending.Get(keyHits))
	b.pendingBytes = dataBytes(pc)
	pco, err := pending.CreateBucketIfNotExists(subCoarse)
	if err != nil {
		return err
	}
	b.coarseBytes = dataBytes(pco)
	if sco := sealed.Bucket(subCoarse); sco != nil {
		b.coarseBytes += dataBytes(sco)
	}
	if sc := sealed.Bucket(subCounts); sc != nil {
		b.sealedBytes = dataBytes(sc)
	}
	return nil
}

func dataBytes(b *bolt.Bucket) int64 {
	s := b.Stats()
	return int64(s.LeafInuse + s.BranchInuse)
}

// Close closes the file. Pending counts and the sealed batch stay in it.
// After a write transaction faulted on the file truncated under it, bbolt
// may still hold its own lock: Close then leaves bbolt's handle and map
// to the process's exit and returns the ErrTruncated error.
func (b *Buffer) Close() error {
	if b.sizer != nil {
		b.sizer.Close()
	}
	if b.wedged.Load() {
		return fmt.Errorf("close buffer: left open: %w", *b.lost.Load())
	}
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("close buffer: %w", err)
	}
	return nil
}

// Path returns the file's path.
func (b *Buffer) Path() string { return b.db.Path() }

// InstanceID returns the random id made when the file was created. The
// flusher records it in every bucket it updates.
func (b *Buffer) InstanceID() string { return b.instance }

// Pending returns the number of keys and hits not yet sealed.
func (b *Buffer) Pending() (keys int, hits uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pendingKeys, b.pendingHits
}

// Unacked returns the keys and hits not yet acknowledged by MongoDB: the
// pending counts and the sealed batch's (one transaction: a seal never
// shows the same counts twice).
func (t *ReadTx) Unacked() (keys int, hits uint64) {
	pending := t.tx.Bucket(bktPending)
	keys, hits = int(getU64(pending.Get(keyKeys))), getU64(pending.Get(keyHits))
	if batch := t.Sealed(); batch != nil {
		keys += batch.Keys
		hits += batch.Hits
	}
	return keys, hits
}

// Size returns an estimate of the live data in bytes: pending and sealed
// counts.
func (b *Buffer) Size() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pendingBytes + b.sealedBytes + b.coarseBytes
}

// Full reports whether Size has reached Options.MaxSize (never, if it is
// negative). Readers should pause until it no longer is; the flusher frees
// space as batches are acknowledged.
func (b *Buffer) Full() bool {
	return b.maxSize > 0 && b.Size() >= b.maxSize
}

// Room returns how many bytes Size may grow by before Full: Options.MaxSize
// minus Size, at most 0 when full; math.MaxInt64 without a limit. A
// writer that holds counts (EstimateCounts of them) commits them once
// they reach it, then waits while Full: so Size passes MaxSize by at most
// what it added last.
func (b *Buffer) Room() int64 {
	if b.maxSize <= 0 {
		return math.MaxInt64
	}
	return max(b.maxSize-b.Size(), 0)
}

// valueEstimate is about the size of an encoded measure.Vector of a few
// hits: a version byte, then one byte per measure, a few more for the
// bytes and response-time sums.
const valueEstimate = 1 + int(measure.N) + 8

// EstimateCounts returns about how many bytes a commit of keys new counts,
// whose keys are keyBytes long together, adds to Size: less when some are
// pending already (they merge), more when their sums are large.
func EstimateCounts(keys, keyBytes int) int64 {
	return int64(keyBytes) + int64(keys)*int64(perKeyOverhead+valueEstimate)
}

func randomID(n int) string {
	p := make([]byte, n)
	if _, err := io.ReadFull(rand.Reader, p); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never happens on Linux
	}
	return hex.EncodeToString(p)
}

func u64(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

// views returns the views of an encoded count, 0 if it cannot be decoded
// (a statistic: the flusher's scan reports such a value).
func views(v []byte) uint64 {
	var vec measure.Vector
	if vec.Decode(v) != nil {
		return 0
	}
	return vec[measure.Views]
}

func getU64(v []byte) uint64 {
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}
