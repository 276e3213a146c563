package bucket

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// A numbered guard's entry is at most 16 bytes in the bucket for writers
// below a million, whatever the batch; EntryBytes is what BSON takes.
func TestGuardEntryBytes(t *testing.T) {
	for _, c := range []struct {
		g   Guard
		max int
	}{
		{NumberedGuard(1, 1), 11},
		{NumberedGuard(999_999, 1<<62), 16},
		{NumberedGuard(MaxNumber, 1), 25},
		{IDGuard("0123456789abcdef", "00112233445566778899aabb"), 47},
	} {
		key := strings.TrimPrefix(c.g.Field, FieldApplied+".")
		one, err := bson.Marshal(bson.D{{Key: key, Value: c.g.Batch}})
		if err != nil {
			t.Fatal(err)
		}
		got := len(one) - 5 // the document's length and terminator
		if got != c.g.EntryBytes() || got != c.max {
			t.Errorf("%s: %d bytes, EntryBytes %d, want %d", c.g.Field, got, c.g.EntryBytes(), c.max)
		}
	}
}

// A numbered guard's field never names a buffer id's: a number has at
// most 15 digits, an id 16.
func TestGuardFieldsDoNotMeet(t *testing.T) {
	n := NumberedGuard(MaxNumber, 1).Field
	id := IDGuard("1234567890123456", "x").Field
	if len(n) >= len(id) {
		t.Errorf("%s is as long as %s", n, id)
	}
}
