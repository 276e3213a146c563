package aggregate_test

import (
	"reflect"
	"testing"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
)

// A Summer's Drain hands on exactly what Sums holds and forgets it, as a
// commit would; OnMalformed tells each malformed line's number within its
// chunk, and LinesParsed the lines of each chunk.
func TestSummerDrainAndOnMalformed(t *testing.T) {
	p, err := parser.New(parser.Config{Format: "combined", Site: "s"})
	if err != nil {
		t.Fatal(err)
	}
	a := aggregate.NewSummer(map[string]*parser.Parser{"src": p}, nil, nil, nil)
	type bad struct {
		n      uint64
		out    parser.Outcome
		length int
	}
	var got []bad
	a.OnMalformed(func(n uint64, out parser.Outcome, length int) { got = append(got, bad{n, out, length}) })

	c := chunk("src", 1, 0, line("/a", 0), "garbage", line("/a", 0), line("/b", 1), "x")
	c.Checkpoint.FPLen, c.Checkpoint.FPSum = 8, 1 // a ledger mark
	before := a.LinesParsed()
	if err := a.Add(&c); err != nil {
		t.Fatal(err)
	}
	if n := a.LinesParsed() - before; n != 5 {
		t.Errorf("LinesParsed grew by %d, want 5", n)
	}
	want := []bad{{2, parser.MalformedFields, len("garbage")}, {5, parser.MalformedFields, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OnMalformed got %+v, want %+v", got, want)
	}
	if a.Held() != 2 {
		t.Errorf("Held = %d, want 2", a.Held())
	}
	sums, marks := a.Sums()
	drained := map[hitKey]uint64{}
	a.Drain(func(k []byte, v *measure.Vector) {
		site, page, sec, err := buffer.DecodeKey(k)
		if err != nil {
			t.Fatal(err)
		}
		if s := sums[string(k)]; s != *v {
			t.Errorf("drained %q: %v, Sums said %v", k, v, &s)
		}
		drained[hitKey{string(site), string(page), sec}] = v[measure.Views]
	})
	wantCounts(t, drained, map[hitKey]uint64{key("/a", 0): 2, key("/b", 1): 1})
	if len(marks) == 0 {
		t.Errorf("no ledger mark before Drain")
	}
	if sums, marks := a.Sums(); a.Held() != 0 || len(sums) != 0 || len(marks) != 0 {
		t.Errorf("after Drain: Held %d, Sums %v, marks %v; want nothing", a.Held(), sums, marks)
	}
	// The stats keep counting; sums start again.
	c = chunk("src", 1, c.Checkpoint.Offset, line("/a", 0))
	if err := a.Add(&c); err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.Lines != 6 || st.Hits != 4 || st.Malformed != 2 {
		t.Errorf("stats %+v: want 6 lines, 4 hits, 2 malformed", st)
	}
	if sums, _ := a.Sums(); len(sums) != 1 {
		t.Errorf("Sums after the next chunk: %v, want one key", sums)
	}
}
