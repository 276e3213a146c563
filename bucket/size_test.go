package bucket

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The zero-filled size of each level's document, with and without the
// measures: a daily bucket must grow by well under a fifth (the measures
// are per hour there, not per minute).
func TestZeroFilledSizes(t *testing.T) {
	sec := time.Date(2026, 1, 15, 10, 20, 30, 0, time.UTC).Unix() // a 31-day month
	for l := range Level(Levels) {
		d := NewDoc(l, "www.example.com", "/blog/2026/hello-world", sec)
		full := d.Zero()
		var without bson.D
		for _, e := range full {
			if e.Key != FieldMeasures {
				without = append(without, e)
			}
		}
		after, err := bson.Marshal(full)
		if err != nil {
			t.Fatal(err)
		}
		before, err := bson.Marshal(without)
		if err != nil {
			t.Fatal(err)
		}
		growth := float64(len(after)-len(before)) / float64(len(before))
		t.Logf("%s bucket: %d bytes zero-filled before measures, %d after (+%.1f%%)", l, len(before), len(after), 100*growth)
		if l == Daily && growth >= 0.20 {
			t.Errorf("daily bucket grows by %.1f%% with the measures, want well under 20%%", 100*growth)
		}
	}
	s := SiteDoc{ID: SiteID(sec, "www.example.com"), Site: "www.example.com", Start: sec - sec%86400}
	b, err := bson.Marshal(s.Zero())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("site's day: %d bytes zero-filled", len(b))
}
