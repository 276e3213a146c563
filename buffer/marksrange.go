package buffer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// Archive ranges: what a batch holds of each replayed archive, so that a
// lost buffer's batch in flight can be rebuilt by reading the archives
// again (the stored checkpoints and their snapshots name followed files
// only). Commit keeps, per archive (source and path), the first and last
// offset its chunks covered in pending/archives; Seal moves them into the
// batch; Ack drops them, or with a minute-only batch keeps them with the
// coarse counts (meta/coarse_archives) until a full batch is acknowledged. The parser settings of each replay source are
// kept in meta/archive_sources, opaque here.
var (
	subArchives       = []byte("archives")        // in pending and sealed: source \x00 path -> range
	subArchiveSources = []byte("archive_sources") // in meta: source -> settings
	subCoarseArchives = []byte("coarse_archives") // in meta: the minute-only batches' since the last full one
)

// ArchiveRange is the part of a replayed archive's decompressed stream a
// batch counts: the lines in [From, To). FPLen and FPSum are the stream's
// fingerprint at To (its ledger mark's).
type ArchiveRange struct {
	Source, Path string
	FPLen        int
	FPSum        uint64
	From, To     int64
}

func archiveKey(source, path string) []byte {
	return append(append([]byte(source), 0), path...)
}

func encodeRange(r ArchiveRange) []byte {
	b := binary.AppendUvarint(nil, uint64(r.From))
	b = binary.AppendUvarint(b, uint64(r.To))
	b = binary.AppendUvarint(b, uint64(r.FPLen))
	return binary.BigEndian.AppendUint64(b, r.FPSum)
}

func decodeRange(k, v []byte) (ArchiveRange, error) {
	var r ArchiveRange
	i := bytes.IndexByte(k, 0)
	if i < 0 {
		return r, fmt.Errorf("bad archive range key %q", k)
	}
	r.Source, r.Path = string(k[:i]), string(k[i+1:])
	vals := [3]uint64{}
	for j := range vals {
		n, w := binary.Uvarint(v)
		if w <= 0 {
			return r, fmt.Errorf("bad archive range of %s", r.Path)
		}
		vals[j], v = n, v[w:]
	}
	if len(v) != 8 {
		return r, fmt.Errorf("bad archive range of %s", r.Path)
	}
	r.From, r.To, r.FPLen, r.FPSum = int64(vals[0]), int64(vals[1]), int(vals[2]), binary.BigEndian.Uint64(v)
	return r, nil
}

// putArchives merges ranges into the pending ones: each archive's range
// runs from the least From to the greatest To (with that end's
// fingerprint).
func putArchives(tx *bolt.Tx, ranges []ArchiveRange) error {
	if len(ranges) == 0 {
		return nil
	}
	pa, err := tx.Bucket(bktPending).CreateBucketIfNotExists(subArchives)
	if err != nil {
		return err
	}
	return mergeRanges(pa, ranges)
}

// sealArchives moves the pending archive ranges into the batch being
// sealed.
func sealArchives(sealed, pending *bolt.Bucket) error {
	if sealed.Bucket(subArchives) != nil { // left by a failed ack
		if err := sealed.DeleteBucket(subArchives); err != nil {
			return err
		}
	}
	if pending.Bucket(subArchives) == nil {
		return nil
	}
	if err := pending.MoveBucket(subArchives, sealed); err != nil {
		return err
	}
	_, err := pending.CreateBucket(subArchives)
	return err
}

// ackArchives completes an Ack (in its transaction, before ackCoarse): a
// minute-only batch's archive ranges join meta/coarse_archives, those
// whose daily and monthly counts wait for the next full batch, which
// empties it; then the batch's ranges are dropped.
func ackArchives(tx *bolt.Tx, sealed *bolt.Bucket) error {
	meta := tx.Bucket(bktMeta)
	sa := sealed.Bucket(subArchives)
	if sealed.Get(keyMinuteOnly) == nil {
		if meta.Bucket(subCoarseArchives) != nil {
			if err := meta.DeleteBucket(subCoarseArchives); err != nil {
				return err
			}
		}
	} else if sa != nil {
		ca, err := meta.CreateBucketIfNotExists(subCoarseArchives)
		if err != nil {
			return err
		}
		if err := mergeRanges(ca, readArchives(sa)); err != nil {
			return err
		}
	}
	if sa == nil {
		return nil
	}
	return sealed.DeleteBucket(subArchives)
}

// mergeRanges merges ranges into bkt: each archive's range runs from the
// least From to the greatest To (with that end's fingerprint).
func mergeRanges(bkt *bolt.Bucket, ranges []ArchiveRange) error {
	for _, r := range ranges {
		k := archiveKey(r.Source, r.Path)
		if v := bkt.Get(k); v != nil {
			if old, err := decodeRange(k, v); err == nil {
				r.From = min(r.From, old.From)
				if old.To > r.To {
					r.To, r.FPLen, r.FPSum = old.To, old.FPLen, old.FPSum
				}
			}
		}
		if err := bkt.Put(k, encodeRange(r)); err != nil {
			return fmt.Errorf("put archive range of %s: %w", r.Path, err)
		}
	}
	return nil
}

// readArchives returns the ranges in bkt (nil when none), sorted by path.
func readArchives(bkt *bolt.Bucket) []ArchiveRange {
	if bkt == nil {
		return nil
	}
	var out []ArchiveRange
	bkt.ForEach(func(k, v []byte) error {
		if r, err := decodeRange(k, v); err == nil {
			out = append(out, r)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b ArchiveRange) int { return cmpRange(a, b) })
	return out
}

func cmpRange(a, b ArchiveRange) int {
	if c := bytes.Compare([]byte(a.Path), []byte(b.Path)); c != 0 {
		return c
	}
	return bytes.Compare([]byte(a.Source), []byte(b.Source))
}

// PutArchiveSource keeps the parser settings of a replay source (opaque
// to the buffer), so that a batch holding its lines can be rebuilt.
func (t *Tx) PutArchiveSource(source string, settings []byte) error {
	err := func() error {
		s, err := t.tx.Bucket(bktMeta).CreateBucketIfNotExists(subArchiveSources)
		if err != nil {
			return err
		}
		if bytes.Equal(s.Get([]byte(source)), settings) {
			return nil
		}
		return s.Put([]byte(source), bytes.Clone(settings))
	}()
	if err != nil {
		return fmt.Errorf("keep replay source %q: %w", source, err)
	}
	return nil
}

// ArchiveSource returns the settings Tx.PutArchiveSource kept for source,
// or nil.
func (t *ReadTx) ArchiveSource(source string) []byte {
	if s := t.tx.Bucket(bktMeta).Bucket(subArchiveSources); s != nil {
		return bytes.Clone(s.Get([]byte(source)))
	}
	return nil
}
