package recent

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestGenBound: a flood of new keys never makes a Gen hold more than its
// size, for sizes down to the least; each key put is found just after.
func TestGenBound(t *testing.T) {
	for _, size := range []int{-1, 0, 1, 2, 3, 10, 100} {
		g := NewGen[string, int](size)
		bound := max(2, size/2*2)
		if g.Size() != bound {
			t.Errorf("NewGen(%d).Size() = %d, want %d", size, g.Size(), bound)
		}
		for i := range 10 * bound {
			k := fmt.Sprint("k", i)
			if _, ok := g.Get(k); ok {
				t.Fatalf("size %d: %s found before it was put", size, k)
			}
			g.Put(k, i)
			if v, ok := g.Get(k); !ok || v != i {
				t.Fatalf("size %d: %s just put: %d %v", size, k, v, ok)
			}
			if g.Len() > bound {
				t.Fatalf("size %d: holds %d after %d keys", size, g.Len(), i+1)
			}
		}
	}
}

// TestGenGenerations: a hit in the previous generation moves the key to
// the current one, so it survives the next retirement; a key not met
// again is dropped at the second; Clear forgets all.
func TestGenGenerations(t *testing.T) {
	g := NewGen[[16]byte, string](4) // generations of 2
	k := func(b byte) [16]byte { return [16]byte{15: b} }
	g.Put(k('a'), "a")
	g.Put(k('b'), "b") // cur {a b}
	g.Put(k('c'), "c") // cur full: prev {a b}, cur {c}
	if g.Len() != 3 {
		t.Errorf("Len %d, want 3", g.Len())
	}
	if v, ok := g.Get(k('a')); !ok || v != "a" { // moves to cur {c a}
		t.Fatalf("a from the previous generation: %q %v", v, ok)
	}
	g.Put(k('d'), "d") // cur full: prev {c a}, cur {d}: b dropped
	if _, ok := g.Get(k('b')); ok {
		t.Error("b survived two retirements unmet")
	}
	for _, c := range "acd" {
		if v, ok := g.Get(k(byte(c))); !ok || v != string(c) {
			t.Errorf("%c: %q %v", c, v, ok)
		}
	}
	g.Clear()
	if g.Len() != 0 {
		t.Errorf("Len %d after Clear", g.Len())
	}
	for _, c := range "abcd" {
		if _, ok := g.Get(k(byte(c))); ok {
			t.Errorf("%c found after Clear", c)
		}
	}
	g.Put(k('e'), "e")
	if v, ok := g.Get(k('e')); !ok || v != "e" || g.Len() != 1 {
		t.Errorf("after Clear: e %q %v, Len %d", v, ok, g.Len())
	}
}

// TestGenAgainstMap: random keys, far more than the Gen holds, looked up
// by Get and GetBytes: a key found has the value last put (a map is the
// model), and the recently met ones are mostly found.
func TestGenAgainstMap(t *testing.T) {
	g := NewGen[string, keyed](64)
	model := map[string]string{}
	r := rand.New(rand.NewPCG(1, 2))
	found := 0
	for i := range 100000 {
		k := fmt.Sprintf("k%d", r.IntN(100))
		var v keyed
		var ok bool
		if i%2 == 0 {
			v, ok = g.Get(k)
		} else {
			v, ok = GetBytes(g, []byte(k))
		}
		if ok {
			found++
			if v.v != model[k] || v.k != k {
				t.Fatalf("%q: found %+v, the model has %q", k, v, model[k])
			}
			continue
		}
		v = keyed{k, fmt.Sprint("v", i)}
		g.Put(k, v)
		model[k] = v.v
		if g.Len() > 64 {
			t.Fatalf("holds %d", g.Len())
		}
	}
	if found < 40000 {
		t.Errorf("only %d keys found again", found)
	}
}

// TestGenAllocs: hits allocate nothing, in either generation, by Get and
// by GetBytes (whose key is never made a string), nor does a Put of a key
// already made.
func TestGenAllocs(t *testing.T) {
	g := NewGen[string, keyed](4) // generations of 2
	keys := [][]byte{
		[]byte("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"),
		[]byte("a key longer than thirty-two bytes, not on the stack"),
		[]byte("short"),
	}
	for _, k := range keys {
		g.Put(string(k), keyed{k: string(k)})
	}
	// Three keys in generations of two: each lookup finds its key in the
	// previous generation and moves it.
	if n := testing.AllocsPerRun(100, func() {
		for _, k := range keys {
			if _, ok := GetBytes(g, k); !ok {
				panic("missed")
			}
		}
	}); n != 0 {
		t.Errorf("GetBytes hits across generations: %v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { GetBytes(g, keys[2]) }); n != 0 {
		t.Errorf("a GetBytes hit in the current generation: %v allocs, want 0", n)
	}
	a := NewGen[[16]byte, int](4)
	ks := [][16]byte{{1}, {2}, {3}}
	for i, k := range ks {
		a.Put(k, i)
	}
	if n := testing.AllocsPerRun(100, func() {
		for _, k := range ks {
			a.Get(k)
		}
	}); n != 0 {
		t.Errorf("Get hits across generations: %v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		for i, k := range ks {
			a.Put(k, i)
		}
	}); n != 0 {
		t.Errorf("Put: %v allocs, want 0", n)
	}
}

// BenchmarkGen: GetBytes hits against a plain map's index of the same
// keys measured in the same run (x_map): "cur", every key in the current
// generation; "moving", 500 keys met in turn in generations of 300, so
// that each is found in the previous one and moved (the worst case).
func BenchmarkGen(b *testing.B) {
	keys := make([][]byte, 500)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "Mozilla/5.0 (agent %d) Gecko/20100101 Firefox/%d.0", i, i)
	}
	m := map[string]keyed{}
	for i, k := range keys {
		m[string(k)] = keyed{string(k), fmt.Sprint(i)}
	}
	var base float64
	b.Run("map", func(b *testing.B) {
		s := 0
		for i := 0; b.Loop(); i++ {
			s += len(m[string(keys[i%len(keys)])].v)
		}
		base = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		sink = s
	})
	for _, c := range []struct {
		name string
		size int
	}{{"cur", 1000}, {"moving", 600}} {
		g := NewGen[string, keyed](c.size)
		for i, k := range keys {
			g.Put(string(k), keyed{string(k), fmt.Sprint(i)})
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			s := 0
			for i := 0; b.Loop(); i++ {
				v, _ := GetBytes(g, keys[i%len(keys)])
				s += len(v.v)
			}
			sink = s
			if base > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/base, "x_map")
			}
		})
	}
}

// keyed is a value holding its key, for GetBytes.
type keyed struct{ k, v string }

func (e keyed) Key() string { return e.k }
