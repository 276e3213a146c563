package buffer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/logtally/logtally/stream"
	bolt "go.etcd.io/bbolt"
)

// The ledger: how far every file or archive, known by the fingerprint of
// its first bytes, is counted. Live files and replayed archives share it,
// so an archive of a file the daemon counted (or the file of an archive a
// replay counted) resumes where the other stopped. Marks are committed
// with the counts they cover; the marks committed since the last seal
// travel with the next batch (pending/marks, then sealed/marks), so the
// flusher can copy them to the database's ledger before the batch is
// acknowledged, and Ack records them as acknowledged.
var (
	bktLedger = []byte("ledger")
	subMarks  = []byte("marks") // in pending and sealed: key -> offset
)

// DefaultLedgerRetention is Options.LedgerRetention's default: ledger
// entries not updated for this long are forgotten.
const DefaultLedgerRetention = 400 * 24 * time.Hour

// ledgerPruneEvery is how often Seal prunes expired ledger entries.
const ledgerPruneEvery = time.Hour

// Mark says that the stream whose first FPLen bytes hash (FNV-1a 64) to
// FPSum is counted up to byte Offset. Marks are keyed like checkpoints'
// fingerprints: FPLen = min(Offset, the fingerprint size), and by Stream.
//
// Streams that begin with the same bytes (a fixed banner, the same first
// requests) share a fingerprint, so each counting of a stream (a followed
// file, a replayed archive) marks an entry of its own, Stream (random, see
// stream.Checkpoint.Stream), and records TailLen and TailSum, the hash of
// the bytes that end at Offset (stream.TailOf): a reader takes an entry
// for its stream only where its own bytes there hash the same
// (ReadTx.Streams returns the candidates, the reader checks them). A Mark
// with Stream 0 is an older logtally's kind, keyed by the fingerprint
// alone, with no tail check.
type Mark struct {
	FPLen  int
	FPSum  uint64
	Offset int64
	Stream uint64
	// TailLen and TailSum: the tail check at Offset (TailLen 0: none).
	TailLen int
	TailSum uint64
	// Source and Path are informational: who counted it, and where the
	// file was.
	Source, Path string
	// Lower sets the entry to Offset even when it is below the entry's
	// offset: the stream is a followed file shrunk in place, counted again
	// from Offset on. Other marks only move an entry forward. MongoDB's
	// ledger, which only moves forward, is not lowered.
	Lower bool
}

// Key returns the mark's ledger key: stream.EntryKey's.
func (m Mark) Key() string { return stream.EntryKey(m.FPLen, m.FPSum, m.Stream) }

// entryOf returns the entry m sets, moved at now.
func entryOf(m Mark, now time.Time) stream.Entry {
	return stream.Entry{FPLen: m.FPLen, FPSum: m.FPSum, Stream: m.Stream, Offset: m.Offset, TailLen: m.TailLen, TailSum: m.TailSum,
		Source: m.Source, Path: m.Path, Updated: now}
}

// MarkOf returns the mark that sets e's offset and tail check again (not
// lowering it).
func MarkOf(e stream.Entry) Mark {
	return Mark{FPLen: e.FPLen, FPSum: e.FPSum, Offset: e.Offset, Stream: e.Stream, TailLen: e.TailLen, TailSum: e.TailSum,
		Source: e.Source, Path: e.Path}
}

// ledgerVersion is the first byte of an entry's value. Version 1 (an
// older logtally's) ends after the path: no tail check.
const ledgerVersion = 2

func encodeEntry(e stream.Entry) []byte {
	b := make([]byte, 0, 1+6*binary.MaxVarintLen64+len(e.Source)+len(e.Path))
	b = append(b, ledgerVersion)
	b = binary.AppendUvarint(b, uint64(e.Offset))
	b = binary.AppendUvarint(b, uint64(e.Acked))
	b = binary.AppendUvarint(b, uint64(e.Updated.UnixNano()))
	b = binary.AppendUvarint(b, uint64(len(e.Source)))
	b = append(b, e.Source...)
	b = binary.AppendUvarint(b, uint64(len(e.Path)))
	b = append(b, e.Path...)
	b = binary.AppendUvarint(b, uint64(e.TailLen))
	return binary.AppendUvarint(b, e.TailSum)
}

func decodeEntry(k, v []byte) (stream.Entry, error) {
	var e stream.Entry
	var ok bool
	e.FPLen, e.FPSum, e.Stream, ok = stream.ParseEntryKey(string(k))
	if !ok || len(v) == 0 || v[0] != 1 && v[0] != ledgerVersion {
		return e, fmt.Errorf("bad ledger entry %x", k)
	}
	version := v[0]
	v = v[1:]
	next := func() uint64 {
		n, w := binary.Uvarint(v)
		if w <= 0 {
			ok = false
			return 0
		}
		v = v[w:]
		return n
	}
	str := func() string {
		n := next()
		if !ok || n > uint64(len(v)) {
			ok = false
			return ""
		}
		s := string(v[:n])
		v = v[n:]
		return s
	}
	e.Offset = int64(next())
	e.Acked = int64(next())
	e.Updated = time.Unix(0, int64(next()))
	e.Source = str()
	e.Path = str()
	if version >= 2 {
		e.TailLen = int(next())
		e.TailSum = next()
	}
	if !ok || e.TailLen < 0 || int64(e.TailLen) > e.Offset {
		return e, fmt.Errorf("bad ledger entry %x", k)
	}
	return e, nil
}

// putMarks records marks in the ledger and in the pending marks, keeping
// each key's greatest offset.
func putMarks(tx *bolt.Tx, marks []Mark, now time.Time) error {
	if len(marks) == 0 {
		return nil
	}
	led := tx.Bucket(bktLedger)
	pm := tx.Bucket(bktPending).Bucket(subMarks)
	for _, m := range marks {
		if m.FPLen <= 0 {
			continue
		}
		k := []byte(m.Key())
		e := entryOf(m, now)
		if v := led.Get(k); v != nil {
			if old, err := decodeEntry(k, v); err == nil {
				e.Acked = old.Acked
				switch {
				case m.Lower:
					e.Acked = min(e.Acked, e.Offset)
				case old.Offset > e.Offset: // the tail check goes with its offset
					e.Offset, e.TailLen, e.TailSum = old.Offset, old.TailLen, old.TailSum
				}
			}
		}
		if err := led.Put(k, encodeEntry(e)); err != nil {
			return fmt.Errorf("put ledger mark: %w", err)
		}
		if err := pm.Put(k, encodeEntry(e)); err != nil {
			return fmt.Errorf("put ledger mark: %w", err)
		}
	}
	return nil
}

// ackMarks records the sealed batch's marks as acknowledged and drops them.
func ackMarks(tx *bolt.Tx, sealed *bolt.Bucket) error {
	sm := sealed.Bucket(subMarks)
	if sm == nil {
		return nil
	}
	led := tx.Bucket(bktLedger)
	err := sm.ForEach(func(k, v []byte) error {
		m, err := decodeEntry(k, v)
		if err != nil {
			return nil // nothing to acknowledge
		}
		cur := led.Get(k)
		if cur == nil {
			return nil // pruned meanwhile
		}
		e, err := decodeEntry(k, cur)
		if err != nil {
			return nil
		}
		// Never past what is counted: an entry lowered (Mark.Lower)
		// since the batch was sealed carries a greater offset in it.
		e.Acked = min(max(e.Acked, m.Offset), e.Offset)
		return led.Put(k, encodeEntry(e))
	})
	if err != nil {
		return err
	}
	return sealed.DeleteBucket(subMarks)
}

// BatchMarks returns the marks that travel with batch id: the marks
// committed before it was sealed and after the previous batch was sealed.
// An id not in flight is ErrNoBatch.
func (t *ReadTx) BatchMarks(id string) ([]stream.Entry, error) {
	sealed := t.tx.Bucket(bktSealed)
	if sealed.Bucket(subCounts) == nil || string(sealed.Get(keyID)) != id {
		return nil, fmt.Errorf("batch marks: %w: %s", ErrNoBatch, id)
	}
	var out []stream.Entry
	if sm := sealed.Bucket(subMarks); sm != nil {
		sm.ForEach(func(k, v []byte) error {
			if e, err := decodeEntry(k, v); err == nil {
				out = append(out, e)
			}
			return nil
		})
	}
	return out, nil
}

// Ledger returns the stored entries among keys.
func (t *ReadTx) Ledger(keys []string) (map[string]stream.Entry, error) {
	out := map[string]stream.Entry{}
	led := t.tx.Bucket(bktLedger)
	for _, k := range keys {
		if v := led.Get([]byte(k)); v != nil {
			e, err := decodeEntry([]byte(k), v)
			if err != nil {
				return nil, fmt.Errorf("read ledger: %w", err)
			}
			out[k] = e
		}
	}
	return out, nil
}

// Streams returns the entries of every stream that begins like a stream
// beginning with head (under stream.LedgerCandidates(head)): the
// candidates for how far it is counted. Which of them is this stream's
// only its bytes tell: an entry with a tail check is its own when its
// bytes that end at the entry's Offset hash to TailSum (the reader checks;
// see Mark). Entries of an older logtally (Stream 0) have no tail check.
func (t *ReadTx) Streams(head []byte) ([]stream.Entry, error) {
	var out []stream.Entry
	c := t.tx.Bucket(bktLedger).Cursor()
	for _, key := range stream.LedgerCandidates(head) {
		p := []byte(key)
		for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
			e, err := decodeEntry(k, v)
			if err != nil {
				return nil, fmt.Errorf("read ledger: %w", err)
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// LedgerEntries returns the stored entries keep accepts, in key order,
// reading the whole ledger (a start reads it when a source may take over
// another's entries; see package pipeline). Entries that cannot be
// decoded are skipped: Seal prunes them.
func (t *ReadTx) LedgerEntries(keep func(stream.Entry) bool) []stream.Entry {
	var out []stream.Entry
	t.tx.Bucket(bktLedger).ForEach(func(k, v []byte) error {
		if e, err := decodeEntry(k, v); err == nil && keep(e) {
			out = append(out, e)
		}
		return nil
	})
	return out
}

// pruneLedger deletes entries not updated since before cutoff.
func pruneLedger(tx *bolt.Tx, cutoff time.Time) (int, error) {
	led := tx.Bucket(bktLedger)
	var old [][]byte
	err := led.ForEach(func(k, v []byte) error {
		if e, err := decodeEntry(k, v); err != nil || e.Updated.Before(cutoff) {
			old = append(old, append([]byte(nil), k...))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, k := range old {
		if err := led.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(old), nil
}
