package bucket

import (
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/measure"
)

// TestCounterKnowsEveryCounter: every counter of every level's zero-filled
// document, and of a site's day, is known to Counter (SiteCounter), each
// family's and measure's slots tile the bucket's period, and the counter a
// hit adds to (Paths, MeasurePath) counts a period holding the hit.
func TestCounterKnowsEveryCounter(t *testing.T) {
	sec := time.Date(2024, 2, 29, 13, 5, 7, 0, time.UTC).Unix() // a 29-day month
	for l := range Level(Levels) {
		d := NewDoc(l, "s", "/p", sec)
		raw, err := bson.Marshal(ones(d.Zero()))
		if err != nil {
			t.Fatal(err)
		}
		start, err := l.Start(raw)
		if err != nil || start != d.Start {
			t.Fatalf("%v: Start = %d, %v; want %d", l, start, err, d.Start)
		}
		covered := map[string]int64{} // field: seconds its slots cover
		n := 0
		if err := Counters(raw, func(path string, v int64) {
			n++
			c, ok := l.Counter(d.Start, d.End, path)
			if !ok {
				t.Errorf("%v: %s not known", l, path)
				return
			}
			if c.From < d.Start || c.To > d.End || c.From >= c.To {
				t.Errorf("%v: %s counts [%d, %d), outside [%d, %d)", l, path, c.From, c.To, d.Start, d.End)
			}
			covered[family(path)] += c.To - c.From
		}); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("%v: no counters", l)
		}
		for field, s := range covered {
			if s != d.End-d.Start {
				t.Errorf("%v: %s's slots cover %d s of %d", l, field, s, d.End-d.Start)
			}
		}
		paths := l.Paths(d.Start, sec)
		for m := measure.Views + 1; m < measure.N; m++ {
			paths = append(paths, l.MeasurePath(m, d.Start, sec))
		}
		for _, p := range paths {
			if c, ok := l.Counter(d.Start, d.End, p); !ok || sec < c.From || sec >= c.To {
				t.Errorf("%v: %s: %+v, %v: does not hold the hit at %d", l, p, c, ok, sec)
			}
		}
		for _, bad := range []string{"seconds.60", "seconds.07", "hourly.24", "daily.30", "minute.1", "measures.nope", "measures.bytes.x", "applied"} {
			if _, ok := l.Counter(d.Start, d.End, bad); ok {
				t.Errorf("%v: %s known", l, bad)
			}
		}
	}
	sd := SiteDoc{ID: SiteID(sec, "s"), Site: "s", Start: sec - sec%86400}
	raw, _ := bson.Marshal(ones(sd.Zero()))
	if start, err := SiteStart(raw); err != nil || start != sd.Start {
		t.Fatalf("SiteStart = %d, %v", start, err)
	}
	n := 0
	Counters(raw, func(path string, _ int64) {
		n++
		if c, ok := SiteCounter(sd.Start, path); !ok || c.From != sd.Start || c.To != sd.Start+86400 {
			t.Errorf("site: %s: %+v, %v", path, c, ok)
		}
	})
	if n != int(measure.N) {
		t.Errorf("site: %d counters, want %d", n, measure.N)
	}
}

// ones returns doc with every integer 1 (Counters passes on the counters
// that are not zero).
func ones(doc bson.D) bson.D {
	out := make(bson.D, len(doc))
	for i, e := range doc {
		switch v := e.Value.(type) {
		case int32:
			e.Value = int32(1)
		case int64:
			e.Value = int64(1)
		case bson.D:
			e.Value = ones(v)
		case bson.Raw:
			var d bson.D
			if err := bson.Unmarshal(v, &d); err != nil {
				panic(err)
			}
			e.Value = ones(d)
		}
		out[i] = e
	}
	return out
}

// family returns the family (or measure) a slot's path belongs to:
// "minute" of "minute.13.5", "measures.bytes" of "measures.bytes.13".
func family(path string) string {
	parts := strings.Split(path, ".")
	if parts[0] == FieldMeasures {
		return parts[0] + "." + parts[1]
	}
	return parts[0]
}

func TestCountersRefusesOtherTypes(t *testing.T) {
	raw, _ := bson.Marshal(bson.D{{Key: "_id", Value: "x"}, {Key: "measures", Value: bson.D{{Key: "bytes", Value: 1.5}}}})
	if err := Counters(raw, func(string, int64) {}); err == nil {
		t.Fatal("a double counter: no error")
	}
}
