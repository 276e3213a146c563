package buffer

// Writer numbers and numbered batches: the short form of the buckets'
// guard (bucket.NumberedGuard).

import (
	"fmt"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"
)

var (
	keyNumber = []byte("number")    // the writer number (SetNumber)
	keySeq    = []byte("batch_seq") // the last numbered batch's sequence number
)

// BatchID returns the id of batch seq of writer n: "<n>:<seq>", both
// decimal.
func BatchID(n, seq int64) string {
	return strconv.FormatInt(n, 10) + ":" + strconv.FormatInt(seq, 10)
}

// ParseBatchID returns the writer number and sequence number of a
// numbered batch id (BatchID); ok is false for any other id (the random
// hex ids of batches sealed before the buffer had a number).
func ParseBatchID(id string) (n, seq int64, ok bool) {
	a, b, found := strings.Cut(id, ":")
	if !found {
		return 0, 0, false
	}
	n, err1 := strconv.ParseInt(a, 10, 64)
	seq, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || n <= 0 || seq <= 0 || BatchID(n, seq) != id {
		return 0, 0, false
	}
	return n, seq, true
}

// Number returns the buffer's writer number, 0 before Tx.SetNumber.
func (b *Buffer) Number() int64 { return b.number.Load() }

// SetNumber gives the buffer writer number n (> 0), the key of its
// entries in the buckets' guard: once the transaction is committed
// (Number reports it then), every batch sealed is numbered (BatchID(n, seq), seq counting up from the last one this
// buffer sealed or adopted). A batch already sealed keeps its id. Setting
// the number the buffer has is a no-op; another one is an error: batches
// under the old one may be in the buckets.
func (t *Tx) SetNumber(n int64) error {
	if n <= 0 {
		return fmt.Errorf("set writer number %d: not positive", n)
	}
	if err := setNumber(t.tx.Bucket(bktMeta), n); err != nil {
		return fmt.Errorf("set writer number: %w", err)
	}
	t.tx.OnCommit(func() { t.b.number.Store(n) })
	return nil
}

// setNumber stores writer number n in meta unless it holds it already.
func setNumber(meta *bolt.Bucket, n int64) error {
	switch have := int64(getU64(meta.Get(keyNumber))); have {
	case n:
		return nil
	case 0:
		return meta.Put(keyNumber, u64(uint64(n)))
	default:
		return fmt.Errorf("the buffer is writer %d, not %d", have, n)
	}
}

// nextBatchID returns the id of a batch sealed now: the next numbered
// one when the buffer has a number (its sequence stored), else random.
func nextBatchID(meta *bolt.Bucket) (string, error) {
	n := int64(getU64(meta.Get(keyNumber)))
	if n == 0 {
		return randomID(12), nil
	}
	seq := int64(getU64(meta.Get(keySeq))) + 1
	if err := meta.Put(keySeq, u64(uint64(seq))); err != nil {
		return "", err
	}
	return BatchID(n, seq), nil
}

// adoptBatchIDs makes the ids of batches a rebuilt buffer takes over
// (the batch in flight, the last acknowledged ones) this buffer's own:
// a numbered one sets the writer number (the lost buffer's) and raises
// the sequence to at least its own, so that no later batch reuses a
// sequence number the buckets may already hold. A guard that met an old
// sequence again would skip the new batch: counts lost.
func adoptBatchIDs(meta *bolt.Bucket, ids ...string) error {
	for _, id := range ids {
		n, seq, ok := ParseBatchID(id)
		if !ok {
			continue
		}
		if err := setNumber(meta, n); err != nil {
			return fmt.Errorf("batch %s: %w", id, err)
		}
		if seq > int64(getU64(meta.Get(keySeq))) {
			if err := meta.Put(keySeq, u64(uint64(seq))); err != nil {
				return err
			}
		}
	}
	return nil
}

// adoptIDs is adoptBatchIDs in a transaction of its own.
func (b *Buffer) adoptIDs(ids ...string) error {
	var n int64
	err := b.update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bktMeta)
		if err := adoptBatchIDs(meta, ids...); err != nil {
			return err
		}
		n = int64(getU64(meta.Get(keyNumber)))
		return nil
	})
	if err != nil {
		return fmt.Errorf("adopt batch ids: %w", err)
	}
	b.number.Store(n)
	return nil
}
