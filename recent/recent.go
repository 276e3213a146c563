package recent

import "hash/maphash"

// Ways is the number of entries of a set.
const Ways = 4

// Table remembers a value of type V per key (see the package doc).
type Table[V any] struct {
	seed   maphash.Seed
	mask   uint64 // sets - 1
	keyMax int
	sets   []set
	keys   []byte // per entry: keyMax bytes, its key first
	vals   []V
}

// set is a set's entries' tags (0: empty, else the top 16 bits of the
// key's hash | 1) and key lengths: one read tells which entry may hold a
// key.
type set struct {
	tags [Ways]uint16
	lens [Ways]uint8
	next uint8 // the entry a new key takes
}

// New returns a Table of at least entries entries (rounded up to a power
// of two sets of Ways) keeping keys of at most keyMax bytes (at most 255).
func New[V any](entries, keyMax int) *Table[V] {
	keyMax = min(max(keyMax, 1), 255)
	sets := 1
	for sets*Ways < entries {
		sets *= 2
	}
	n := sets * Ways
	return &Table[V]{
		seed: maphash.MakeSeed(), mask: uint64(sets - 1), keyMax: keyMax,
		sets: make([]set, sets), keys: make([]byte, n*keyMax), vals: make([]V, n),
	}
}

// Lookup returns key's value and true when the table holds key. When it
// does not, it takes an entry for key and returns its value, zero, and
// false: the caller sets it (before the next Lookup). A key longer than
// keyMax gets nil and false: it is not kept.
func (t *Table[V]) Lookup(key []byte) (*V, bool) {
	if len(key) > t.keyMax {
		return nil, false
	}
	h := maphash.Bytes(t.seed, key)
	si := int(h & t.mask)
	st := &t.sets[si]
	tag, n := uint16(h>>48)|1, uint8(len(key))
	for w := range Ways {
		if st.tags[w] == tag && st.lens[w] == n {
			if i := si*Ways + w; string(t.keys[i*t.keyMax:i*t.keyMax+len(key)]) == string(key) {
				return &t.vals[i], true
			}
		}
	}
	w := st.next
	st.next = (w + 1) % Ways
	st.tags[w], st.lens[w] = tag, n
	i := si*Ways + int(w)
	copy(t.keys[i*t.keyMax:], key)
	var zero V
	t.vals[i] = zero
	return &t.vals[i], false
}

// Clear forgets every key.
func (t *Table[V]) Clear() {
	clear(t.sets)
	clear(t.vals) // let the values' pointers go
}

// Len returns the number of entries.
func (t *Table[V]) Len() int { return len(t.vals) }
