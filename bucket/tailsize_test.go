package bucket

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/measure"
)

// randomTail returns an l tail of n pages (some with '.', '$' or '%'),
// each hit a few times over its period, with large and small values.
func randomTail(r *rand.Rand, l Level, sec int64, n int) Tail {
	t := NewTail(l, "www.example.com", 5, sec)
	start, end := l.Bounds(sec)
	for i := range n {
		page := fmt.Sprintf("/p/%d", i)
		if i%7 == 0 {
			page += ".html$%"
		}
		var offs []int64
		for range 1 + r.IntN(4) {
			offs = append(offs, r.Int64N(end-start))
		}
		slices.Sort(offs)
		for _, off := range offs {
			v := hitVector([]int{200, 301, 404, 503}[r.IntN(4)], r.Uint64N(1<<40), r.Int64N(5_000_000)-1)
			if r.IntN(5) == 0 {
				v[measure.Views] = 1 << 33 // an int64 count
			}
			t.Add(page, start+off, &v)
		}
	}
	if n > 0 {
		t.Add("/nothing", start, &measure.Vector{}) // an entry without counts: not written
	}
	return t
}

// Growth is exactly what the entries and the guard add to a new tail
// (Whole against Zero), and bounds what they add to a tail holding some
// of them already.
func TestTailGrowth(t *testing.T) {
	sec := time.Date(2026, 1, 15, 10, 20, 30, 0, time.UTC).Unix()
	r := rand.New(rand.NewPCG(3, 4))
	for _, g := range []Guard{NumberedGuard(7, 42), IDGuard("0123456789abcdef", "0123456789abcdef01234567")} {
		for l := range Level(Levels) {
			for _, n := range []int{0, 1, 30} {
				tl := randomTail(r, l, sec, n)
				doc, err := tl.Whole(g)
				if err != nil {
					t.Fatal(err)
				}
				zero, err := bson.Marshal(tl.Zero())
				if err != nil {
					t.Fatal(err)
				}
				_, update := tl.Update(g)
				applied, err := whole(tl.Zero(), update)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(doc, applied) {
					t.Errorf("%s, %d pages: Whole is not Zero with Update applied:\n%v\n%v", l, n, bson.Raw(doc), bson.Raw(applied))
				}
				if got, want := tl.Growth(g), int64(len(doc)-len(zero)); got != want {
					t.Errorf("%s, %d pages: Growth %d, want %d (Whole %d, Zero %d)", l, n, got, want, len(doc), len(zero))
				}
				if size, _ := bson.Raw(doc).Lookup(FieldSize).AsInt64OK(); size != tl.Growth(g) {
					t.Errorf("%s, %d pages: size %d, want Growth %d", l, n, size, tl.Growth(g))
				}
				// A second batch on the same pages and others adds at most
				// its Growth.
				more := randomTail(r, l, sec, n+3)
				var d bson.D
				if err := bson.Unmarshal(doc, &d); err != nil {
					t.Fatal(err)
				}
				_, update = more.Update(NumberedGuard(8, 1))
				after, err := whole(d, update)
				if err != nil {
					t.Fatal(err)
				}
				if grew := int64(len(after) - len(doc)); grew > more.Growth(NumberedGuard(8, 1)) {
					t.Errorf("%s: an update grew the tail by %d bytes, more than its Growth %d", l, grew, more.Growth(NumberedGuard(8, 1)))
				}
			}
		}
	}
}

// A bounded tail's update applies only within its Limit, and Fits says
// the same of a document read back.
func TestTailLimit(t *testing.T) {
	sec := time.Date(2026, 1, 15, 10, 20, 30, 0, time.UTC).Unix()
	g := NumberedGuard(7, 42)
	tl := randomTail(rand.New(rand.NewPCG(1, 1)), Daily, sec, 3)
	filter, _ := tl.Update(g)
	if _, err := bson.Raw(mustMarshal(filter)).LookupErr(FieldSize); err == nil {
		t.Errorf("an unbounded tail's filter names its size: %v", filter)
	}
	tl.Limit = 10_000
	filter, update := tl.Update(g)
	room := tl.Limit - tl.Growth(g)
	want := bson.E{Key: FieldSize, Value: bson.D{{Key: "$lte", Value: room}}}
	if last := filter[len(filter)-1]; fmt.Sprint(last) != fmt.Sprint(want) {
		t.Errorf("filter ends with %v, want %v", last, want)
	}
	if inc := update[0].Value.(bson.D); fmt.Sprint(inc[len(inc)-1]) != fmt.Sprint(bson.E{Key: FieldSize, Value: tl.Growth(g)}) {
		t.Errorf("$inc ends with %v, want the size's growth %d", inc[len(inc)-1], tl.Growth(g))
	}
	for _, c := range []struct {
		doc  bson.D
		fits bool
	}{
		{bson.D{{Key: FieldSize, Value: int64(0)}}, true},
		{bson.D{{Key: FieldSize, Value: room}}, true},
		{bson.D{{Key: FieldSize, Value: room + 1}}, false},
		{bson.D{{Key: FieldSize, Value: int32(room - 1)}}, true},
		{bson.D{}, false}, // no size: no room
	} {
		if got := tl.Fits(mustMarshal(c.doc), g); got != c.fits {
			t.Errorf("Fits(%v) = %v, want %v", c.doc, got, c.fits)
		}
	}
}

// Split cuts a tail's entries, in order, into parts within both bounds,
// the same parts every time; the parts' spills read back as the tail.
func TestTailSplitAndSpill(t *testing.T) {
	sec := time.Date(2026, 1, 15, 10, 20, 30, 0, time.UTC).Unix()
	g := NumberedGuard(17, 4031)
	for l := range Level(Levels) {
		tl := randomTail(rand.New(rand.NewPCG(5, 6)), l, sec, 200)
		if parts := tl.Split(1<<30, 1<<30); len(parts) != 1 || parts[0].ID != tl.ID || parts[0].Pages() != 201 {
			t.Errorf("%s: a tail within the bounds split in %d parts", l, len(parts))
		}
		for _, b := range []struct{ growth, stmt int64 }{{4000, 1 << 30}, {1 << 30, 9000}, {1, 1}} {
			parts := tl.Split(b.growth, b.stmt)
			again := tl.Split(b.growth, b.stmt)
			if len(parts) < 2 || len(again) != len(parts) {
				t.Fatalf("%s %v: %d parts, then %d", l, b, len(parts), len(again))
			}
			want := readCells(t, l, &tl, g)
			got := map[string]measure.Vector{}
			pages, total := 0, int64(0)
			for i := range parts {
				p := &parts[i]
				if p.Pages() != again[i].Pages() {
					t.Errorf("%s: part %d holds %d pages, then %d", l, i, p.Pages(), again[i].Pages())
				}
				if p.Pages() > 1 && (p.Growth(g)-int64(g.EntryBytes()) > b.growth || p.statementsBytes() > b.stmt) {
					t.Errorf("%s %v: part %d of %d pages grows %d, statement %d", l, b, i, p.Pages(), p.Growth(g), p.statementsBytes())
				}
				pages += p.Pages()
				total += p.Total
				s := p.Spill(g, i)
				if s.Page != fmt.Sprintf("~5.17.4031.%d", i) || s.ID != l.ID(tl.Start, "www.example.com", s.Page) || s.Limit != 0 {
					t.Errorf("%s: spill %d: page %q, id %q", l, i, s.Page, s.ID)
				}
				if shard, ok := TailShard(s.Page); !ok || shard != 5 {
					t.Errorf("%s: TailShard(%q) = %d, %v", l, s.Page, shard, ok)
				}
				for k, v := range readCells(t, l, &s, g) {
					if _, dup := got[k]; dup {
						t.Errorf("%s: cell %s in two parts", l, k)
					}
					got[k] = v
				}
			}
			if pages != 201 || total != tl.Total {
				t.Errorf("%s: parts hold %d pages and %d views, want 201 and %d", l, pages, total, tl.Total)
			}
			if len(got) != len(want) {
				t.Errorf("%s: parts hold %d cells, want %d", l, len(got), len(want))
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s: cell %s: %v, want %v", l, k, got[k], v)
				}
			}
		}
	}
}

// statementsBytes is the bound Split keeps a part's statement within.
func (t *Tail) statementsBytes() int64 {
	var n int64
	for i := range t.entries {
		n += t.statementBytes(&t.entries[i])
	}
	return n
}

// readCells returns the cells of t written whole and read back, by page
// and slot start.
func readCells(t *testing.T, l Level, tl *Tail, g Guard) map[string]measure.Vector {
	t.Helper()
	doc, err := tl.Whole(g)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]measure.Vector{}
	if err := l.DecodeTail(doc, func(c *TailCell) { out[fmt.Sprint(c.Page, "@", c.From)] = c.V }); err != nil {
		t.Fatal(err)
	}
	if v, err := l.Views(doc); err != nil || v != tl.Total {
		t.Errorf("%s: Views %d, %v; want %d", l, v, err, tl.Total)
	}
	return out
}

// BenchmarkTailWhole builds a new daily tail's document of 500 pages
// (about 90 kB; a shard is sized for 2,000) directly (Tail.Whole),
// against applying its update to its empty document (whole, the way
// before: a copy of the document per new counter, quadratic in the
// pages), in the same run: x-applied-time is how much longer that takes.
func BenchmarkTailWhole(b *testing.B) {
	sec := time.Date(2026, 1, 15, 10, 20, 30, 0, time.UTC).Unix()
	tl := randomTail(rand.New(rand.NewPCG(7, 8)), Daily, sec, 500)
	g := NumberedGuard(7, 42)
	var ns [2]float64
	for i, name := range []string{"direct", "applied"} {
		b.Run(name, func(b *testing.B) {
			var n int
			for b.Loop() {
				var doc bson.Raw
				var err error
				if i == 0 {
					doc, err = tl.Whole(g)
				} else {
					_, update := tl.Update(g)
					doc, err = whole(tl.Zero(), update)
				}
				if err != nil {
					b.Fatal(err)
				}
				n = len(doc)
			}
			b.ReportMetric(float64(n), "doc-bytes")
			ns[i] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if i == 1 && ns[0] > 0 {
				b.ReportMetric(ns[1]/ns[0], "x-applied-time")
			}
		})
	}
}
