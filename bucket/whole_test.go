package bucket

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/measure"
)

// applyTree is a second implementation of whole, on decoded documents:
// the reference Whole is compared with.
func applyTree(t *testing.T, zero, update bson.D) []byte {
	t.Helper()
	raw, err := bson.Marshal(zero)
	if err != nil {
		t.Fatal(err)
	}
	var doc bson.D
	if err := bson.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var set func(d bson.D, path []string, f func(old any) any) bson.D
	set = func(d bson.D, path []string, f func(old any) any) bson.D {
		for i := range d {
			if d[i].Key != path[0] {
				continue
			}
			if len(path) == 1 {
				d[i].Value = f(d[i].Value)
			} else {
				d[i].Value = set(d[i].Value.(bson.D), path[1:], f)
			}
			return d
		}
		if len(path) == 1 {
			return append(d, bson.E{Key: path[0], Value: f(nil)})
		}
		return append(d, bson.E{Key: path[0], Value: set(bson.D{}, path[1:], f)})
	}
	asInt := func(x any) int64 {
		switch x := x.(type) {
		case int32:
			return int64(x)
		case int64:
			return x
		}
		t.Fatalf("%T is not an integer", x)
		return 0
	}
	for _, op := range update {
		for _, term := range op.Value.(bson.D) {
			v := term.Value
			doc = set(doc, strings.Split(term.Key, "."), func(old any) any {
				if old == nil || op.Key == "$set" {
					return v
				}
				switch op.Key {
				case "$inc":
					s := asInt(old) + asInt(v)
					_, o32 := old.(int32)
					_, v32 := v.(int32)
					if o32 && v32 && s == int64(int32(s)) {
						return int32(s)
					}
					return s
				case "$max":
					if asInt(v) > asInt(old) {
						return v
					}
					return old
				}
				t.Fatalf("operator %s", op.Key)
				return nil
			})
		}
	}
	out, err := bson.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Whole equals the zero-filled document with the guarded update applied,
// for every level and a site's day: counters and measures in several
// slots, a maximum, a count past 2^31 (its int32 zero becomes an int64),
// and the applied entry added to the empty map.
func TestWholeIsZeroWithTheUpdate(t *testing.T) {
	at := time.Date(2026, 2, 27, 23, 59, 58, 0, time.UTC).Unix()
	hits := []measure.Hit{
		{Status: 200, Bytes: 512, RT: 1500},
		{Status: 404, Bot: botclass.AI, Bytes: 100, RT: -1},
		{Status: 503, Bytes: 7, RT: 90000},
	}
	for l := range Level(Levels) {
		d := NewDoc(l, "www.example.com", "/a/b", at)
		for i, h := range hits {
			var v measure.Vector
			v.Add(&h)
			d.Add(at+int64(i/2), &v)
		}
		big := measure.OfViews(3_000_000_000)
		big[measure.Status2xx] = 3_000_000_000
		d.Add(at+1, &big)
		for _, g := range []Guard{IDGuard("0123456789abcdef", "00112233445566778899aabb"), NumberedGuard(17, 4031)} {
			got, err := d.Whole(g)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			_, update := d.Update(g)
			if want := applyTree(t, d.Zero(), update); !bytes.Equal(got, want) {
				t.Errorf("%s: Whole\n%v\nwant\n%v", l, bson.Raw(got), bson.Raw(want))
			}
		}
	}
	s := SiteDoc{ID: SiteID(at, "www.example.com"), Site: "www.example.com", Start: at - at%86400}
	for _, h := range hits {
		s.V.Add(&h)
	}
	got, err := s.Whole(NumberedGuard(3, 1))
	if err != nil {
		t.Fatal(err)
	}
	_, update := s.Update(NumberedGuard(3, 1))
	if want := applyTree(t, s.Zero(), update); !bytes.Equal(got, want) {
		t.Errorf("site: Whole\n%v\nwant\n%v", bson.Raw(got), bson.Raw(want))
	}
}

// whole refuses what it does not implement instead of guessing.
func TestWholeRefusesOtherOperators(t *testing.T) {
	zero := bson.D{{Key: "_id", Value: "x"}, {Key: "n", Value: 1.5}}
	for _, u := range []bson.D{
		{{Key: "$unset", Value: bson.D{{Key: "n", Value: ""}}}},
		{{Key: "$inc", Value: bson.D{{Key: "n", Value: int64(1)}}}}, // a double
		{{Key: "$inc", Value: bson.D{{Key: "m", Value: 1.5}}}},
		{{Key: "$inc", Value: bson.D{{Key: "_id.a", Value: int64(1)}}}}, // not a document
	} {
		if _, err := whole(zero, u); err == nil {
			t.Errorf("whole(%v) succeeded", u)
		}
	}
}

// whole's cursor (the previous term's offsets) gives what a search from
// the start gives, whatever the order of the terms: terms in and out of
// the document's order, on fields missing at every depth, on a counter
// that outgrows int32 (the document is rebuilt and the offsets move), and
// twice on one field.
func TestWholeTermsInAnyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	zero := bson.D{{Key: "_id", Value: "x"}}
	for _, top := range []string{"a", "b", "c"} {
		var sub bson.D
		for i := range 5 {
			var leaf bson.D
			for j := range 6 {
				leaf = append(leaf, bson.E{Key: fmt.Sprint(j), Value: int32(0)})
			}
			sub = append(sub, bson.E{Key: fmt.Sprint(i), Value: leaf})
		}
		zero = append(zero, bson.E{Key: top, Value: sub})
	}
	for round := range 500 {
		var inc, mx bson.D
		for range 1 + rng.IntN(40) {
			path := fmt.Sprintf("%s.%d.%d", []string{"a", "b", "c", "d"}[rng.IntN(4)], rng.IntN(6), rng.IntN(7))
			var v any = int32(1 + rng.IntN(9))
			switch rng.IntN(8) {
			case 0:
				v = int32(math.MaxInt32 - rng.IntN(3)) // two of them outgrow int32
			case 1:
				v = int64(rng.IntN(100))
			}
			if rng.IntN(5) == 0 {
				mx = append(mx, bson.E{Key: path, Value: v})
			} else {
				inc = append(inc, bson.E{Key: path, Value: v})
			}
		}
		if rng.IntN(2) == 0 {
			slices.SortFunc(inc, func(x, y bson.E) int { return strings.Compare(x.Key, y.Key) })
		}
		update := bson.D{{Key: "$inc", Value: inc}}
		if len(mx) > 0 {
			update = append(update, bson.E{Key: "$max", Value: mx})
		}
		got, err := whole(zero, update)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if want := applyTree(t, zero, update); !bytes.Equal(got, want) {
			t.Fatalf("round %d: update %v\nwhole\n%v\nwant\n%v", round, update, bson.Raw(got), bson.Raw(want))
		}
	}
}

// BenchmarkWhole prints the ns a new bucket's whole document takes, at
// each level, for a minute's hits every second, and its ratio (x_zero) to
// the marshalling of its zero-filled document alone (the floor), timed in
// the same loop, alternately.
func BenchmarkWhole(b *testing.B) {
	at := time.Date(2026, 2, 27, 12, 0, 0, 0, time.UTC).Unix()
	for l := range Level(Levels) {
		d := NewDoc(l, "www.example.com", "/a/b", at)
		for s := range int64(60) {
			var v measure.Vector
			v.Add(&measure.Hit{Status: 200, Bytes: 100, RT: -1})
			d.Add(at+s, &v)
		}
		b.Run(l.String(), func(b *testing.B) {
			var tWhole, tZero time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := d.Whole(NumberedGuard(1, 1)); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := bson.Marshal(d.Zero()); err != nil {
					b.Fatal(err)
				}
				tWhole, tZero = tWhole+t1.Sub(t0), tZero+time.Since(t1)
			}
			b.ReportMetric(float64(tWhole.Nanoseconds())/float64(b.N), "ns/whole")
			b.ReportMetric(float64(tWhole)/float64(tZero), "x_zero")
		})
	}
}

// A Grouper with Cold skips the cold buckets' hits (asking once per
// bucket) and groups the others as without it.
func TestGrouperSkipsCold(t *testing.T) {
	sec := time.Date(2026, 1, 15, 10, 20, 0, 0, time.UTC).Unix()
	var one measure.Vector
	one.Add(&measure.Hit{Status: 200, RT: -1})
	type key struct {
		page string
		sec  int64
	}
	keys := []key{{"/a", sec}, {"/a", sec + 1}, {"/b", sec}, {"/b", sec + 5}, {"/b", sec + 61}, {"/c", sec}, {"/c", sec + 2}}
	asked := map[string]int{}
	var g Grouper
	g.Reset(Minute, 10)
	g.Cold = func(site, page []byte, s int64) bool {
		asked[string(page)]++
		return string(page) == "/b"
	}
	for _, k := range keys {
		if !g.Add([]byte("s"), []byte(k.page), k.sec, &one) {
			t.Fatal("chunk full")
		}
	}
	var ids []string
	for _, d := range g.Docs {
		ids = append(ids, d.ID+"="+strconv.FormatInt(d.Total, 10))
	}
	if got := strings.Join(ids, " "); got != "202601151020/s/a=2 202601151020/s/c=2" || g.Skipped != 3 {
		t.Errorf("docs %s, skipped %d; want /a and /c of 2 hits each, 3 skipped", got, g.Skipped)
	}
	if asked["/b"] != 2 || asked["/a"] != 1 || asked["/c"] != 1 {
		t.Errorf("Cold asked %v: want once per bucket (/b has two minutes)", asked)
	}
	g.Reset(Minute, 10)
	if g.Cold != nil || g.Skipped != 0 {
		t.Error("Reset keeps Cold")
	}
}
