package recent

// Gen remembers a value of type V per key of type K, up to a bound, in two
// generations (see the package doc): a bounded cache in front of a
// computation, a cheap approximation of LRU with no per-entry
// bookkeeping.
type Gen[K comparable, V any] struct {
	gen       int // entries per generation
	cur, prev map[K]V
}

// NewGen returns a Gen holding up to size keys (at least 2: generations
// of size/2, at least 1). Its maps are made whole, so adding a key
// allocates nothing but what the key itself holds.
func NewGen[K comparable, V any](size int) *Gen[K, V] {
	gen := max(1, size/2)
	return &Gen[K, V]{gen: gen, cur: make(map[K]V, gen), prev: make(map[K]V, gen)}
}

// Get returns k's value and true when g holds k; a key found in the
// previous generation moves to the current one. It allocates nothing.
//
// Get and GetBytes look in the current generation and leave the previous
// one to another function, and are written so (named results, a bare
// return) that the compiler inlines them (cost 80, its budget in Go 1.26;
// go build -gcflags=-m tells; TestGetInlined checks GetBytes where the
// caches are hit): called, they cost botclass's hit (its
// BenchmarkCacheHit) about a third more, the value spilled after the
// call.
func (g *Gen[K, V]) Get(k K) (v V, ok bool) {
	if v, ok = g.cur[k]; !ok {
		v, ok = g.getPrev(k)
	}
	return
}

// getPrev is Get in the previous generation.
func (g *Gen[K, V]) getPrev(k K) (V, bool) {
	v, ok := g.prev[k]
	if ok {
		delete(g.prev, k)
		g.Put(k, v)
	}
	return v, ok
}

// Keyed is a value that holds its string key, for GetBytes.
type Keyed interface {
	// Key returns the key the value was put under.
	Key() string
}

// GetBytes is Get of a string key given by its bytes: the key is not
// made a string (the conversion is at the maps' index, which Go does
// without allocating; Get(string(k)) allocates a key over 32 bytes), so
// it allocates nothing. A value found in the previous generation moves
// under its own key, which it must hold (Keyed): the bytes are not one
// the map can keep. (A method cannot be written for string keys alone,
// hence a function.)
func GetBytes[V Keyed](g *Gen[string, V], k []byte) (v V, ok bool) {
	if v, ok = g.cur[string(k)]; !ok {
		v, ok = getPrevBytes(g, k)
	}
	return
}

// getPrevBytes is GetBytes in the previous generation.
func getPrevBytes[V Keyed](g *Gen[string, V], k []byte) (V, bool) {
	v, ok := g.prev[string(k)]
	if ok {
		key := v.Key()
		delete(g.prev, key)
		g.Put(key, v)
	}
	return v, ok
}

// Put sets k's value in the current generation, first retiring it if it
// is full (the old previous one is dropped). The maps keep their room
// when cleared, so adding allocates nothing. The caller puts a key it did
// not find: a key put again while in the previous generation is then in
// both until that one is dropped (Get finds the current one's value).
func (g *Gen[K, V]) Put(k K, v V) {
	if len(g.cur) >= g.gen {
		g.prev, g.cur = g.cur, g.prev
		clear(g.cur)
	}
	g.cur[k] = v
}

// Clear forgets every key (the maps keep their room).
func (g *Gen[K, V]) Clear() {
	clear(g.cur)
	clear(g.prev)
}

// Len returns the number of keys g holds (a key put again while in the
// previous generation counts twice).
func (g *Gen[K, V]) Len() int { return len(g.cur) + len(g.prev) }

// Size returns the number of keys g holds at most: NewGen's size
// rounded down to even, at least 2.
func (g *Gen[K, V]) Size() int { return 2 * g.gen }
