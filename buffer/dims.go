package buffer

// The counts by dimension (package dims): per site, UTC day, dimension
// and value, the hits counted. They live in a key space of their own
// (subDims in pending and sealed), never among the page counts, whose
// views every sum of hits reads. They are day-level: only a full batch
// carries them (the flusher writes them with the site totals); a
// minute-only seal leaves them pending for the next full one.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/logtally/logtally/dims"
)

var subDims = []byte("dims") // in pending and sealed

// AppendDimKey appends the key of the count of value in dimension d of
// site's day starting at day (Unix seconds) to dst. Keys sort by site,
// dimension, value, then day.
func AppendDimKey(dst []byte, site []byte, d dims.Dim, value string, day int64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(site)))
	dst = append(dst, site...)
	dst = append(dst, byte(d))
	dst = binary.AppendUvarint(dst, uint64(len(value)))
	dst = append(dst, value...)
	return binary.BigEndian.AppendUint64(dst, uint64(day)^(1<<63))
}

// DecodeDimKey splits a key made by AppendDimKey. site and value alias k.
func DecodeDimKey(k []byte) (site []byte, d dims.Dim, value []byte, day int64, err error) {
	bad := fmt.Errorf("bad dimension key (%d bytes)", len(k))
	n, w := binary.Uvarint(k)
	if w <= 0 || n >= uint64(len(k)-w) { // the site, then at least the dimension (n+1 may wrap)
		return nil, 0, nil, 0, bad
	}
	site, k = k[w:w+int(n)], k[w+int(n):]
	d, k = dims.Dim(k[0]), k[1:]
	if d >= dims.N {
		return nil, 0, nil, 0, bad
	}
	n, w = binary.Uvarint(k)
	if w <= 0 || len(k)-w < 8 || uint64(len(k)-w-8) != n { // the value, then the day (n+8 may wrap)
		return nil, 0, nil, 0, bad
	}
	value, k = k[w:w+int(n)], k[w+int(n):]
	return site, d, value, int64(binary.BigEndian.Uint64(k) ^ (1 << 63)), nil
}

// A DimCount is one dimension key's hits to add to the pending counts.
type DimCount struct {
	Key []byte // from AppendDimKey
	N   uint64
}

// SortDimCounts sorts counts by key, as Commit takes them.
func SortDimCounts(counts []DimCount) {
	slices.SortFunc(counts, func(x, y DimCount) int { return bytes.Compare(x.Key, y.Key) })
}

// MergeDimCounts returns counts (in any order, a key maybe more than
// once) as Commit takes them: sorted, each key once, its hits summed.
func MergeDimCounts(counts []DimCount) []DimCount {
	if len(counts) == 0 {
		return nil
	}
	out := slices.Clone(counts)
	SortDimCounts(out)
	n := 0
	for _, c := range out {
		if n > 0 && bytes.Equal(out[n-1].Key, c.Key) {
			out[n-1].N += c.N
			continue
		}
		out[n] = c
		n++
	}
	return out[:n]
}

// putDims adds counts (sorted, each key once) to pending's dimension
// counts and returns the bytes the new keys add.
func putDims(pending *bolt.Bucket, counts []DimCount) (newBytes int64, err error) {
	if len(counts) == 0 {
		return 0, nil
	}
	pd := pending.Bucket(subDims)
	var vals []byte
	for i, c := range counts {
		if i > 0 && bytes.Compare(counts[i-1].Key, c.Key) >= 0 {
			return 0, fmt.Errorf("dimension counts not sorted, or a key given twice, at count %d of %d", i+1, len(counts))
		}
		n := c.N
		old := pd.Get(c.Key)
		if old != nil {
			o, w := binary.Uvarint(old)
			if w <= 0 {
				return 0, fmt.Errorf("a dimension count stored in the buffer: bad value (%d bytes)", len(old))
			}
			n += o
		}
		from := len(vals)
		vals = binary.AppendUvarint(vals, n)
		if old == nil {
			newBytes += int64(len(c.Key)+len(vals)-from) + perKeyOverhead
		}
		if err := pd.Put(c.Key, vals[from:len(vals):len(vals)]); err != nil {
			return 0, fmt.Errorf("put dimension count: %w", err)
		}
	}
	return newBytes, nil
}

// sealDims completes a full seal (in its transaction): the pending
// dimension counts go with the batch. A minute-only seal leaves them.
func sealDims(sealed, pending *bolt.Bucket, minuteOnly bool) error {
	if sealed.Bucket(subDims) != nil { // left by a failed ack
		if err := sealed.DeleteBucket(subDims); err != nil {
			return err
		}
	}
	if minuteOnly || empty(pending.Bucket(subDims)) {
		return nil
	}
	if err := pending.MoveBucket(subDims, sealed); err != nil {
		return fmt.Errorf("move dimension counts: %w", err)
	}
	_, err := pending.CreateBucket(subDims)
	return err
}

// ackDims completes an Ack (in its transaction): the batch's dimension
// counts are in MongoDB.
func ackDims(sealed *bolt.Bucket) error {
	if sealed.Bucket(subDims) != nil {
		return sealed.DeleteBucket(subDims)
	}
	return nil
}

// ScanDims calls fn for the dimension counts of batch id in key order
// (DecodeDimKey), until fn returns false; key is valid only inside fn. A
// minute-only batch, or a full one without any, has none. An id not in
// flight is ErrNoBatch.
func (t *ReadTx) ScanDims(id string, fn func(key []byte, n uint64) bool) error {
	sealed := t.tx.Bucket(bktSealed)
	if sealed.Bucket(subCounts) == nil || string(sealed.Get(keyID)) != id {
		return fmt.Errorf("scan dimension counts: %w: %s", ErrNoBatch, id)
	}
	sd := sealed.Bucket(subDims)
	if sd == nil {
		return nil
	}
	c := sd.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		n, w := binary.Uvarint(v)
		if w <= 0 {
			return fmt.Errorf("scan dimension counts: bad value (%d bytes)", len(v))
		}
		if !fn(k, n) {
			return nil
		}
	}
	return nil
}

// PendingDims returns the dimension keys and hits not yet sealed (a
// minute-only batch leaves them pending).
func (t *ReadTx) PendingDims() (keys int, hits uint64) {
	pd := t.tx.Bucket(bktPending).Bucket(subDims)
	if pd == nil {
		return 0, 0
	}
	pd.ForEach(func(_, v []byte) error {
		n, _ := binary.Uvarint(v)
		keys++
		hits += n
		return nil
	})
	return keys, hits
}
