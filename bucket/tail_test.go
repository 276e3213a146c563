package bucket

import (
	"bytes"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/measure"
)

func TestPageKeyRoundTrip(t *testing.T) {
	pages := []string{"/", "/index.html", "/a%2Eb", "/$x", "/%", "/%25", "/a.b.c$d%e", "/\x00z", "(other)", "/ünï.cödé"}
	seen := map[string]string{}
	for _, p := range pages {
		k := PageKey(p)
		if strings.ContainsAny(k, ".$\x00") {
			t.Errorf("PageKey(%q) = %q: holds '.', '$' or NUL", p, k)
		}
		back, err := PageOfKey(k)
		if err != nil || back != p {
			t.Errorf("PageOfKey(PageKey(%q)) = %q, %v", p, back, err)
		}
		if q, dup := seen[k]; dup {
			t.Errorf("PageKey(%q) = PageKey(%q) = %q", p, q, k)
		}
		seen[k] = p
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := []byte("/")
		for range r.IntN(12) {
			const alphabet = "%.$\x00a2E5"
			b = append(b, alphabet[r.IntN(len(alphabet))])
		}
		p := string(b)
		if back, err := PageOfKey(PageKey(p)); err != nil || back != p {
			t.Fatalf("round trip of %q: %q, %v", p, back, err)
		}
	}
	for _, bad := range []string{"/%", "/%2", "/%41", "/%2e"} {
		if _, err := PageOfKey(bad); err == nil {
			t.Errorf("PageOfKey(%q): no error", bad)
		}
	}
}

func TestMarkers(t *testing.T) {
	for _, c := range []struct {
		page  string
		shard int
		ok    bool
	}{{"~0", 0, true}, {"~17", 17, true}, {"~", 0, false}, {"~01", 0, false}, {"~p", 0, false}, {"/~0", 0, false}, {"~1x", 0, false},
		{"~3.17.4031.0", 3, true}, {"~0.0123456789abcdef.0123456789abcdef01234567.12", 0, true},
		{"~3.17.4031", 0, false}, {"~3.17..0", 0, false}, {"~3.17.4031.0.1", 0, false}, {"~3.A.1.0", 0, false},
		{"~03.1.2.3", 0, false}, {"~.1.2.3", 0, false}, {"~3.1.2.", 0, false}, {"~p.1.2.3", 0, false}} {
		n, ok := TailShard(c.page)
		if ok != c.ok || n != c.shard {
			t.Errorf("TailShard(%q) = %d, %v; want %d, %v", c.page, n, ok, c.shard, c.ok)
		}
	}
	if !IsMarker(PlanPage) || !IsMarker(TailPage(3)) || IsMarker("/x") || IsMarker("(other)") {
		t.Error("IsMarker")
	}
	// No tail's or plan's id is a page bucket's or another tail's.
	sec := time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC).Unix()
	ids := map[string]string{}
	add := func(l Level, site, page string) {
		id := l.ID(sec, site, page)
		key := l.String() + " " + site + " " + page
		if other, dup := ids[l.String()+id]; dup && other != key {
			t.Errorf("%s and %s share the id %q", key, other, id)
		}
		ids[l.String()+id] = key
	}
	for l := range Level(Levels) {
		for _, site := range []string{"a", "a~1", "a~", "a~0", "(other)", "b~p"} {
			for _, page := range []string{"/", "/~0", "(other)", TailPage(0), TailPage(1), TailPage(10), PlanPage,
				SpillPage(0, NumberedGuard(1, 2), 0), SpillPage(1, NumberedGuard(1, 2), 0), SpillPage(0, NumberedGuard(1, 2), 1),
				SpillPage(0, NumberedGuard(12, 3), 0), SpillPage(0, NumberedGuard(1, 23), 0), SpillPage(0, IDGuard("0123456789abcdef", "0123456789abcdef01234567"), 0)} {
				add(l, site, page)
			}
		}
	}
}

// hit returns the vector of one hit's measures.
func hitVector(status int, bytes uint64, rt int64) measure.Vector {
	var v measure.Vector
	v.Add(&measure.Hit{Status: status, Bytes: bytes, RT: rt})
	return v
}

// A tail written whole and read back holds every page's cells at its
// level's grain, and Counters with TailCounter name each counter's page,
// period and measure.
func TestTailRoundTrip(t *testing.T) {
	sec := time.Date(2026, 1, 15, 10, 20, 30, 0, time.UTC).Unix()
	type hit struct {
		page string
		off  int64
		v    measure.Vector
	}
	hits := []hit{
		{"/a.html", 0, hitVector(200, 1000, -1)},
		{"/a.html", 5, hitVector(404, 10, 250)},
		{"/a.html", 4000, hitVector(200, 7, 900)},
		{"/$b%", 2 * 86400, hitVector(503, 0, 100)},
		{"(other)", 3, hitVector(301, 5, -1)},
	}
	for l := range Level(Levels) {
		start, end := l.Bounds(sec)
		tl := NewTail(l, "www.example.com", 3, sec)
		want := map[string]map[int64]measure.Vector{} // page → slot start → vector
		for _, h := range hits {
			at := sec + h.off
			if at >= end {
				continue
			}
			tl.Add(h.page, at, &h.v)
			from := start
			switch l {
			case Daily:
				from = at - (at-start)%3600
			case Monthly:
				from = at - (at-start)%86400
			}
			if want[h.page] == nil {
				want[h.page] = map[int64]measure.Vector{}
			}
			v := want[h.page][from]
			v.Merge(&h.v)
			want[h.page][from] = v
		}
		doc, err := tl.Whole(NumberedGuard(7, 42))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]map[int64]measure.Vector{}
		if err := l.DecodeTail(doc, func(c *TailCell) {
			if got[c.Page] == nil {
				got[c.Page] = map[int64]measure.Vector{}
			}
			got[c.Page][c.From] = c.V
		}); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d pages read, want %d", l, len(got), len(want))
		}
		for p, slots := range want {
			for from, v := range slots {
				if got[p][from] != v {
					t.Errorf("%s %s at %d: got %v, want %v", l, p, from, got[p][from], v)
				}
			}
		}
		// Counter by counter.
		sums := map[string]measure.Vector{}
		if err := Counters(doc, func(path string, n int64) {
			page, c, ok := l.TailCounter(start, end, path)
			if !ok {
				t.Errorf("%s: %s is not a tail counter", l, path)
				return
			}
			if _, ok := want[page][c.From]; !ok {
				t.Errorf("%s: %s: slot %d of %s has no hits", l, path, c.From, page)
			}
			v := sums[page]
			v[c.Measure] += uint64(n)
			sums[page] = v
		}); err != nil {
			t.Fatal(err)
		}
		for p, slots := range want {
			var all measure.Vector
			for _, v := range slots {
				all.Merge(&v)
			}
			// Merge takes the maximum of RTMax; the sum of counters
			// holds the maxima summed over the slots.
			var rtMax uint64
			for _, v := range slots {
				rtMax += v[measure.RTMax]
			}
			all[measure.RTMax] = rtMax
			if sums[p] != all {
				t.Errorf("%s %s: counters sum to %v, want %v", l, p, sums[p], all)
			}
		}
		var r bson.Raw = doc
		if id := r.Lookup(FieldID).StringValue(); id != l.ID(start, "www.example.com", "~3") {
			t.Errorf("%s: _id %q", l, id)
		}
	}
}

// The bytes a cold page costs: a tail's entry against its own bucket,
// zero-filled (what it cost before tails). Printed by -v.
func TestTailSizes(t *testing.T) {
	sec := time.Date(2026, 1, 15, 10, 20, 30, 0, time.UTC).Unix()
	page := "/blog/2026/hello-world"
	v := hitVector(200, 5120, -1)
	for l := range Level(Levels) {
		empty := NewTail(l, "www.example.com", 0, sec)
		e, err := empty.Whole(NumberedGuard(7, 42))
		if err != nil {
			t.Fatal(err)
		}
		one := NewTail(l, "www.example.com", 0, sec)
		one.Add(page, sec, &v)
		o, err := one.Whole(NumberedGuard(7, 42))
		if err != nil {
			t.Fatal(err)
		}
		d := NewDoc(l, "www.example.com", page, sec)
		z, err := bson.Marshal(d.Zero())
		if err != nil {
			t.Fatal(err)
		}
		entry := len(o) - len(e)
		t.Logf("%s: a tail without pages %d bytes; a page's entry with one hit %d bytes; its own bucket %d bytes zero-filled", l, len(e), entry, len(z))
		if entry*10 > len(z) && l != Minute {
			t.Errorf("%s: an entry of %d bytes is more than a tenth of a bucket's %d", l, entry, len(z))
		}
	}
}

func TestPlanRoundTrip(t *testing.T) {
	sec := time.Date(2026, 1, 15, 10, 20, 30, 0, time.UTC).Unix()
	for l := range Level(Levels) {
		p := NewPlan(l, "www.example.com", sec, []string{"/b", "/a", "/b"}, 16)
		raw, err := bson.Marshal(p.Doc())
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.DecodePlan(raw)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		wantShards := 16
		if l == Minute {
			wantShards = 1
		}
		if got.Site != p.Site || got.Start != p.Start || strings.Join(got.Hot, ",") != "/a,/b" || got.Shards != wantShards {
			t.Errorf("%s: decoded %+v from %+v", l, got, p)
		}
		if start, _ := l.PlanUnit().Bounds(sec); p.Start != start {
			t.Errorf("%s: plan starts at %d, want %d", l, p.Start, start)
		}
		// Dated its period's last bucket (no expiry deletes it before
		// one of them), found by PlanFilter.
		_, end := l.PlanUnit().Bounds(sec)
		last, _ := l.Bounds(end - 1)
		if date, _ := l.Start(bson.Raw(raw)); date != last {
			t.Errorf("%s: plan dated %s, want its last bucket's start %s", l, time.Unix(date, 0).UTC(), time.Unix(last, 0).UTC())
		}
		f := l.PlanFilter("www.example.com", time.Unix(sec, 0))
		for _, e := range f {
			v, err := bson.Raw(raw).LookupErr(strings.Split(e.Key, ".")...)
			if want, _ := bson.Marshal(bson.D{e}); err != nil || !bytes.Equal(mustMarshal(bson.D{{Key: e.Key, Value: v}}), want) {
				t.Errorf("%s: PlanFilter's %s = %v, the plan's %v", l, e.Key, e.Value, v)
			}
		}
		g := NumberedGuard(7, 1)
		if hot, _ := got.Route("/a", g); !hot {
			t.Errorf("%s: /a not hot", l)
		}
		if hot, _ := got.Route("/c", g); hot {
			t.Errorf("%s: /c hot", l)
		}
	}
	// A page's shard is stored (where its counts are): pinned.
	p := NewPlan(Daily, "s", sec, nil, 16)
	for page, want := range map[string]int{"/": 14, "/index.html": 1, "/blog/2026/hello-world": 7} {
		h := fnv.New64a()
		h.Write([]byte(page))
		for _, g := range []Guard{NumberedGuard(1, 5), NumberedGuard(2, 5), IDGuard("0123456789abcdef", "x")} {
			if _, got := p.Route(page, g); got != want || uint64(got) != h.Sum64()%16 {
				t.Errorf("shard of %q = %d, want %d, FNV-1a mod 16 whatever the writer (the shard of a page must never change)", page, got, want)
			}
		}
	}
	// A minute page's shard is its writer's: the number mod
	// MinuteTailShards, else the FNV-1a of the guard's field; the same for
	// every page and batch of a writer.
	m := NewPlan(Minute, "s", sec, nil, 16)
	for _, c := range []struct {
		g    Guard
		want int
	}{
		{NumberedGuard(1, 5), 1}, {NumberedGuard(1, 6), 1}, {NumberedGuard(4, 1), 0}, {NumberedGuard(7, 1), 3},
		{NumberedGuard(MaxNumber, 1), int(MaxNumber % MinuteTailShards)},
		{IDGuard("0123456789abcdef", "x"), fnvMod("applied.0123456789abcdef", MinuteTailShards)},
	} {
		for _, page := range []string{"/", "/index.html", "/blog/2026/hello-world"} {
			if _, got := m.Route(page, c.g); got != c.want {
				t.Errorf("minute shard of %q for %s = %d, want %d", page, c.g.Field, got, c.want)
			}
		}
	}
	if _, err := Daily.DecodePlan(mustMarshal(bson.D{{Key: "metadata", Value: bson.D{{Key: "date", Value: bson.NewDateTimeFromTime(time.Unix(sec, 0))}, {Key: "site", Value: "s"}}}, {Key: FieldShards, Value: int32(0)}})); err == nil {
		t.Error("a plan of 0 shards decoded")
	}
}

// fnvMod is the FNV-1a of s mod k, by the standard library's hash.
func fnvMod(s string, k int) int {
	h := fnv.New64a()
	h.Write([]byte(s))
	return int(h.Sum64() % uint64(k))
}

// The break-even of each level is its zero-filled buckets over a cold
// hit's entry: pinned, so that a change of shapes that moves it is seen.
func TestBreakEven(t *testing.T) {
	for l, want := range [Levels]int64{Minute: 1257, Daily: 331, Monthly: 72} {
		if got := Level(l).BreakEven(); got != want {
			t.Errorf("%s: break-even %d hits per plan period, want %d", Level(l), got, want)
		}
		t.Logf("%s: a page is hot from %d hits per %s", Level(l), Level(l).BreakEven(), Level(l).PlanUnit())
	}
}
