package bucket

import (
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/fnv1a"
)

// Guard is the exactly-once guard of one batch of one writer: the field
// of a bucket's applied map that is the writer's, and the batch's value
// in it. A guarded update applies only where the field does not hold the
// value yet, and sets it in the same document write as its counts.
//
// It has two forms. Both can sit side by side in one bucket (a writer
// that upgraded keeps its old entry, never consulted again), and a writer
// never changes form within a batch:
//   - NumberedGuard, "applied.<n>": NumberLong(<seq>), the writer's number
//     (assigned once per buffer in the progress collection) and the
//     batch's sequence number: 11 to 16 bytes of BSON in the bucket for
//     n below a million;
//   - IDGuard, "applied.<16 hex digits>": "<24 hex digits>", the buffer's
//     random id and the batch's random id (47 bytes): batches sealed
//     before the buffer had a number.
//
// The two never share a field: a number has at most 15 digits
// (MaxNumber), a buffer id exactly 16.
type Guard struct {
	// Field is "applied.<writer>".
	Field string
	// Batch is the value the batch leaves in Field: an int64 (numbered)
	// or a string (IDGuard).
	Batch any
}

// MaxNumber is the largest writer number: numbers have at most 15
// decimal digits, so that "applied.<n>" never names a buffer id's field.
const MaxNumber = 999_999_999_999_999

// NumberedGuard returns the guard of batch seq of writer n (1 to
// MaxNumber): applied.<n> = NumberLong(seq).
func NumberedGuard(n, seq int64) Guard {
	return Guard{Field: FieldApplied + "." + strconv.FormatInt(n, 10), Batch: seq}
}

// IDGuard returns the guard of batch id of buffer instance (16 hex
// digits): applied.<instance> = "<id>", the form before writer numbers.
func IDGuard(instance, id string) Guard {
	return Guard{Field: FieldApplied + "." + instance, Batch: id}
}

// filter appends the guard's condition to f: the field does not hold the
// batch (a missing field does not).
func (g Guard) filter(f bson.D) bson.D {
	return append(f, bson.E{Key: g.Field, Value: bson.D{{Key: "$ne", Value: g.Batch}}})
}

// set is the guard's $set: the field takes the batch.
func (g Guard) set() bson.D { return bson.D{{Key: g.Field, Value: g.Batch}} }

// Spread returns the guard's writer's place among k (0 to k-1): its
// number mod k when numbered, else the FNV-1a of its field mod k. The
// same for every batch of a writer and in every process and version, as
// a destination chosen by it must be (Plan.Route).
func (g Guard) Spread(k int) int {
	if k <= 1 {
		return 0
	}
	if _, ok := g.Batch.(int64); ok {
		if n, err := strconv.ParseInt(strings.TrimPrefix(g.Field, FieldApplied+"."), 10, 64); err == nil && n >= 0 {
			return int(n % int64(k))
		}
	}
	return int(fnv1a.Extend(fnv1a.Offset, []byte(g.Field)) % uint64(k))
}

// EntryBytes returns the BSON size of the guard's entry in a bucket's
// applied map: type byte, key and its terminator, value.
func (g Guard) EntryBytes() int {
	n := 1 + len(g.Field) - len(FieldApplied+".") + 1
	switch v := g.Batch.(type) {
	case int64:
		return n + 8
	case string:
		return n + 4 + len(v) + 1
	}
	return n
}
