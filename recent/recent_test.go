package recent

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestAgainstMap: random keys (some longer than keyMax, some prefixes of
// others), far more than the table holds: a key found always has the
// value last given to it (a map is the model); a key just set is found.
func TestAgainstMap(t *testing.T) {
	tb := New[string](64, 12)
	if tb.Len() != 64 {
		t.Fatalf("Len %d, want 64", tb.Len())
	}
	model := map[string]string{}
	r := rand.New(rand.NewPCG(1, 2))
	found := 0
	for i := range 200000 {
		k := fmt.Sprintf("k%d", r.IntN(300))
		switch r.IntN(10) {
		case 0:
			k += "-much-longer-than-keymax"
		case 1:
			k = k[:1+r.IntN(len(k))] // a prefix of another key
		}
		v, ok := tb.Lookup([]byte(k))
		switch {
		case len(k) > 12:
			if v != nil || ok {
				t.Fatalf("%q longer than keyMax: %v %v", k, v, ok)
			}
			continue
		case ok:
			found++
			if *v != model[k] {
				t.Fatalf("%q: found %q, the model has %q", k, *v, model[k])
			}
		case *v != "":
			t.Fatalf("%q: a new entry holds %q", k, *v)
		}
		*v = fmt.Sprintf("v%d", i)
		model[k] = *v
		if v2, ok := tb.Lookup([]byte(k)); !ok || *v2 != *v {
			t.Fatalf("%q just set: %v %v", k, ok, v2)
		}
	}
	if found < 10000 {
		t.Errorf("only %d keys found again: the table forgets too soon", found)
	}
	tb.Clear()
	if _, ok := tb.Lookup([]byte("k1")); ok {
		t.Error("a key found after Clear")
	}
}

// BenchmarkLookup finds recent keys (500 addresses, as a log's clients)
// in a table of 4096 against a map[string] lookup of the same keys in the
// same run (x_map).
func BenchmarkLookup(b *testing.B) {
	keys := make([][]byte, 500)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "192.0.%d.%d", i/250, i%250)
	}
	tb := New[int](4096, 39)
	m := map[string]int{}
	for i, k := range keys {
		v, _ := tb.Lookup(k)
		*v = i
		m[string(k)] = i
	}
	var base float64
	b.Run("map", func(b *testing.B) {
		s := 0
		for i := 0; b.Loop(); i++ {
			s += m[string(keys[i%len(keys)])]
		}
		base = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		sink = s
	})
	b.Run("table", func(b *testing.B) {
		b.ReportAllocs()
		s := 0
		for i := 0; b.Loop(); i++ {
			v, _ := tb.Lookup(keys[i%len(keys)])
			s += *v
		}
		sink = s
		if base > 0 {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/base, "x_map")
		}
	})
}

var sink int
