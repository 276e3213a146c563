package buffer

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/visitor"
)

// AppendKey appends the key of a count for (site, page, sec) to dst. Keys
// sort by site, then page, then second ascending.
func AppendKey(dst []byte, site, page []byte, sec int64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(site)))
	dst = append(dst, site...)
	dst = binary.AppendUvarint(dst, uint64(len(page)))
	dst = append(dst, page...)
	return binary.BigEndian.AppendUint64(dst, uint64(sec)^(1<<63))
}

// DecodeKey splits a key made by AppendKey. site and page alias k.
func DecodeKey(k []byte) (site, page []byte, sec int64, err error) {
	n, w := binary.Uvarint(k)
	if w <= 0 || uint64(len(k)-w) < n {
		return nil, nil, 0, fmt.Errorf("bad buffer key (%d bytes)", len(k))
	}
	site, k = k[w:w+int(n)], k[w+int(n):]
	n, w = binary.Uvarint(k)
	if w <= 0 || len(k)-w < 8 || uint64(len(k)-w-8) != n { // the page, then the second (n+8 may wrap)
		return nil, nil, 0, fmt.Errorf("bad buffer key (%d bytes)", len(k))
	}
	page, k = k[w:w+int(n)], k[w+int(n):]
	return site, page, int64(binary.BigEndian.Uint64(k) ^ (1 << 63)), nil
}

// SplitKey splits a key made by AppendKey into its site and page part,
// which every key of that site and page begins with (DecodeKey splits it
// further), and its second, without decoding the lengths: a reader
// gathering many keys by page decodes each page once.
func SplitKey(k []byte) (sitePage []byte, sec int64, err error) {
	if len(k) < 10 {
		return nil, 0, fmt.Errorf("bad buffer key (%d bytes)", len(k))
	}
	n := len(k) - 8
	return k[:n], int64(binary.BigEndian.Uint64(k[n:]) ^ (1 << 63)), nil
}

// A Count is one key's measures to add to the pending counts.
type Count struct {
	Key []byte // from AppendKey
	V   *measure.Vector
}

// CountsOf returns m's counts as Commit takes them: sorted by key.
func CountsOf(m map[string]measure.Vector) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{Key: []byte(k), V: &v})
	}
	SortCounts(out)
	return out
}

// SortCounts sorts counts by key, as Commit takes them.
func SortCounts(counts []Count) {
	slices.SortFunc(counts, func(x, y Count) int { return bytes.Compare(x.Key, y.Key) })
}

// Commit is what Buffer.Commit writes in one transaction.
type Commit struct {
	// Counts are added to the pending counts, each key's measures merged
	// (measure.Vector.Merge). They are sorted by key, each key once
	// (SortCounts): bbolt then writes them in order, and a key given
	// twice, which would count twice, is refused. The keys and vectors
	// are read only until Buffer.Commit returns.
	Counts []Count
	// Checkpoints are written; a nil value deletes one.
	Checkpoints map[string][]byte
	// Marks move the ledger: each key keeps its greatest offset.
	Marks []Mark
	// Finished holds the last checkpoints of files finished (their
	// checkpoints deleted) by this commit, under keys the caller makes
	// unique per file: the next sealed batch names them (Snapshot.Finished).
	Finished map[string][]byte
	// Archives are the parts of replayed archives counted by this commit
	// (merged per archive until the next seal: see ArchiveRange).
	Archives []ArchiveRange
	// Visitors are merged into the visitor sketches (VisitorKey ->
	// sketch; register-wise maximum).
	Visitors map[string]*visitor.Sketch
	// Dims are added to the pending counts by dimension (dims.go), sorted
	// by key, each key once (SortDimCounts).
	Dims []DimCount
	// KeepLastCommit leaves LastCommit where it is: a replay that reads
	// no live file must not move the time the next start compares files'
	// modification times with.
	KeepLastCommit bool
}

// Commit writes c in one transaction: after it returns all of it is on
// disk, and after a crash either all or none of it is. A commit whose
// transaction reported an error but reached the file (its sync failed,
// yet the next transaction sees it) returns nil: a caller retrying on an
// error never counts twice.
func (b *Buffer) Commit(c Commit) error {
	counts, checkpoints := c.Counts, c.Checkpoints
	if len(counts) == 0 && len(checkpoints) == 0 && len(c.Marks) == 0 && len(c.Finished) == 0 && len(c.Archives) == 0 && len(c.Visitors) == 0 && len(c.Dims) == 0 {
		return nil
	}
	for i := 1; i < len(counts); i++ {
		if bytes.Compare(counts[i-1].Key, counts[i].Key) >= 0 {
			// The key (a site and page of the log) is not named.
			return fmt.Errorf("commit buffer: counts not sorted, or a key given twice, at count %d of %d", i+1, len(counts))
		}
	}
	// A random token written with the commit tells, after an error, a
	// commit whose meta page reached the file (its sync failed: bbolt
	// reports an error, yet the next transaction sees it) from one that
	// did not: a caller retrying the first would count it twice.
	token := make([]byte, 8)
	if _, err := io.ReadFull(rand.Reader, token); err != nil {
		return fmt.Errorf("commit buffer: %w", err)
	}
	var newKeys, keys, hits uint64
	var newBytes int64
	b.wmu.Lock()
	defer b.wmu.Unlock()
	err := b.write(func(tx *bolt.Tx) error {
		newKeys, keys, hits, newBytes = 0, 0, 0, 0
		pending := tx.Bucket(bktPending)
		pc := pending.Bucket(subCounts)
		var vals []byte // the encoded values, one allocation for all (bbolt keeps them until the commit)
		for i, c := range counts {
			v, kb := *c.V, c.Key
			hits += v[measure.Views]
			old := pc.Get(kb)
			if old != nil {
				var o measure.Vector
				if err := o.Decode(old); err != nil {
					return fmt.Errorf("pending count of the commit's key %d of %d: %w", i+1, len(counts), err)
				}
				v.Merge(&o)
			}
			from := len(vals)
			vals = v.AppendBinary(vals)
			if old == nil {
				newKeys++
				newBytes += int64(len(kb)+len(vals)-from) + perKeyOverhead
			}
			if err := pc.Put(kb, vals[from:len(vals):len(vals)]); err != nil {
				return fmt.Errorf("put count: %w", err)
			}
		}
		if len(counts) > 0 {
			keys, hits = getU64(pending.Get(keyKeys))+newKeys, getU64(pending.Get(keyHits))+hits
			if err := pending.Put(keyKeys, u64(keys)); err != nil {
				return err
			}
			if err := pending.Put(keyHits, u64(hits)); err != nil {
				return err
			}
		}
		dimBytes, err := putDims(pending, c.Dims)
		if err != nil {
			return err
		}
		newBytes += dimBytes
		if err := tx.Bucket(bktMeta).Put(keyToken, token); err != nil {
			return err
		}
		if !c.KeepLastCommit {
			// The wall clock, not b.clock: the next start compares it
			// with rotated files' modification times.
			if err := tx.Bucket(bktMeta).Put(keyLast, u64(uint64(b.files.Now().UnixNano()))); err != nil {
				return err
			}
		}
		if err := putMarks(tx, c.Marks, b.clock.Now()); err != nil {
			return err
		}
		if err := putFinished(tx, c.Finished); err != nil {
			return fmt.Errorf("put finished file: %w", err)
		}
		if err := putArchives(tx, c.Archives); err != nil {
			return err
		}
		if err := putSketches(tx, c.Visitors); err != nil {
			return err
		}
		cb := tx.Bucket(bktCheckpoints)
		for k, v := range checkpoints {
			var err error
			if v == nil {
				err = cb.Delete([]byte(k))
			} else {
				err = cb.Put([]byte(k), v)
			}
			if err != nil {
				return fmt.Errorf("put checkpoint: %w", err)
			}
		}
		return nil
	})
	if err != nil && b.landed(token) {
		b.log.Warn("the buffer commit reported an error after it reached the file: it is taken as done", "err", err)
		err = nil
	}
	if err != nil {
		return fmt.Errorf("commit buffer: %w", err)
	}
	if len(counts) > 0 || newBytes > 0 {
		b.mu.Lock()
		if len(counts) > 0 {
			b.pendingKeys, b.pendingHits = int(keys), hits
		}
		b.pendingBytes += newBytes
		b.mu.Unlock()
	}
	return nil
}

// landed reports whether the file holds the commit that wrote token.
func (b *Buffer) landed(token []byte) bool {
	var ok bool
	b.view(func(tx *bolt.Tx) error {
		ok = bytes.Equal(tx.Bucket(bktMeta).Get(keyToken), token)
		return nil
	})
	return ok
}

// LastCommit returns the file clock's time (Options.FileClock) of the last
// Commit, or the zero time if there was none. At start it tells which
// files changed while the daemon was down.
func (t *ReadTx) LastCommit() time.Time {
	if v := t.tx.Bucket(bktMeta).Get(keyLast); len(v) == 8 {
		return time.Unix(0, int64(binary.BigEndian.Uint64(v)))
	}
	return time.Time{}
}

// Checkpoints returns every stored checkpoint.
func (t *ReadTx) Checkpoints() map[string][]byte {
	out := map[string][]byte{}
	t.tx.Bucket(bktCheckpoints).ForEach(func(k, v []byte) error {
		out[string(k)] = bytes.Clone(v)
		return nil
	})
	return out
}
