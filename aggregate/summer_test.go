package aggregate_test

import (
	"fmt"
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
	a := aggregate.NewSummer(map[string]*parser.Parser{"src": p}, nil, nil)
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

// MaxSites: the first MaxSites hosts with a hit are sites, the hits of
// further hosts get parser.OtherSite and are counted in SitesFolded;
// aliased hosts are always sites; filtered and malformed lines take no
// place. (Was parser's TestMaxSites, when the Parser applied the bound.)
func TestSummerMaxSites(t *testing.T) {
	p, err := parser.New(parser.Config{Format: "vhost_combined", Site: parser.SiteFromLine, MaxSites: 2,
		SiteAliases: map[string]string{"www.example.com": "example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	hostLine := func(host string, status int) string {
		return fmt.Sprintf(`%s:80 1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET /a HTTP/1.1" %d 100 "-" "t"`, host, status)
	}
	sum := aggregate.NewSummer(map[string]*parser.Parser{"src": p}, nil, nil)
	var start int64
	for i, tc := range []struct {
		host   string
		status int
		want   string
	}{
		{"a.test", 200, "a.test"},
		{"www.example.com", 200, "example.com"}, // aliased: takes no place
		{"B.TEST", 200, "b.test"},
		{"c.test", 200, "(other)"},
		{"a.test", 200, "a.test"},
		{"www.example.com", 200, "example.com"},
		{"d.test", 200, "(other)"},
	} {
		c := chunk("src", 1, start, hostLine(tc.host, tc.status))
		start = c.Checkpoint.Offset
		if err := sum.Add(&c); err != nil {
			t.Fatal(err)
		}
		var sites []string
		sum.Drain(func(k []byte, _ *measure.Vector) {
			site, _, _, err := buffer.DecodeKey(k)
			if err != nil {
				t.Fatal(err)
			}
			sites = append(sites, string(site))
		})
		if len(sites) != 1 || sites[0] != tc.want {
			t.Errorf("line %d, %s: sites %q, want %q", i+1, tc.host, sites, tc.want)
		}
	}
	if n := sum.Stats().SitesFolded; n != 2 {
		t.Errorf("SitesFolded = %d, want 2", n)
	}
	// Not a hit: no place taken even with room.
	q, _ := parser.New(parser.Config{Format: "vhost_combined", Site: parser.SiteFromLine, MaxSites: 1, Filter: parser.FilterConfig{Status: []string{"2xx"}}})
	sum = aggregate.NewSummer(map[string]*parser.Parser{"src": q}, nil, nil)
	c := chunk("src", 1, 0, hostLine("x.test", 404), hostLine("y.test", 200))
	if err := sum.Add(&c); err != nil {
		t.Fatal(err)
	}
	sums, _ := sum.Sums()
	st := sum.Stats()
	if st.Outcomes[parser.FilteredStatus] != 1 || st.SitesFolded != 0 || len(sums) != 1 || st.HitsBySite["y.test"] != 1 {
		t.Errorf("after a filtered line: %d filtered, %d folded, sites %v", st.Outcomes[parser.FilteredStatus], st.SitesFolded, st.HitsBySite)
	}
}
