package aggregate

import (
	"bytes"
	"hash/maphash"
)

// keyTable numbers the buffer keys (buffer.AppendKey) held since the last
// commit: key i is the one whose sums are counts[i]. It replaces a
// map[string]int32 on Add's per-line path: a line costs one hash of its
// key and, mostly, one probe; a new key is copied into one arena, so that
// once the table has grown nothing is allocated; and the table holds no
// pointers for the garbage collector to scan.
//
// It is an open-addressing table (linear probing, at most half full) of
// slots, each the high 32 bits of its key's hash (compared before the
// key's bytes) and the key's number plus one (0: an empty slot).
type keyTable struct {
	seed  maphash.Seed
	slots []uint64 // length a power of two, or 0 before the first key
	arena []byte   // the keys, one after the other
	ends  []int    // key i is arena[ends[i-1]:ends[i]] (ends[-1] is 0)
	pos   []uint32 // key i's slot when added: reset zeroes those alone when few are used
}

// minSlots is the table's smallest size.
const minSlots = 1024

// len returns the number of keys.
func (t *keyTable) len() int { return len(t.ends) }

// key returns key i. It aliases the table: valid until the next reset.
func (t *keyTable) key(i int) []byte {
	start := 0
	if i > 0 {
		start = t.ends[i-1]
	}
	return t.arena[start:t.ends[i]]
}

// index returns the number of key, adding it (as number len()) if the
// table does not hold it; added says which.
func (t *keyTable) index(key []byte) (i int, added bool) {
	if 2*(len(t.ends)+1) > len(t.slots) {
		t.grow()
	}
	h := maphash.Bytes(t.seed, key)
	tag := h >> 32
	mask := uint64(len(t.slots) - 1)
	for p := h & mask; ; p = (p + 1) & mask {
		s := t.slots[p]
		if s == 0 {
			i = len(t.ends)
			t.slots[p] = tag<<32 | uint64(i+1)
			t.arena = append(t.arena, key...)
			t.ends = append(t.ends, len(t.arena))
			t.pos = append(t.pos, uint32(p))
			return i, true
		}
		if s>>32 == tag {
			if j := int(uint32(s)) - 1; bytes.Equal(t.key(j), key) {
				return j, false
			}
		}
	}
}

// grow doubles the slots (or makes the first ones) and places every key
// again.
func (t *keyTable) grow() {
	if t.slots == nil {
		t.seed = maphash.MakeSeed()
		t.slots = make([]uint64, minSlots)
		return
	}
	t.slots = make([]uint64, 2*len(t.slots))
	mask := uint64(len(t.slots) - 1)
	for i := range t.ends {
		h := maphash.Bytes(t.seed, t.key(i))
		p := h & mask
		for t.slots[p] != 0 {
			p = (p + 1) & mask
		}
		t.slots[p] = h>>32<<32 | uint64(i+1)
	}
	// pos is left as it was: the table is now at least a quarter full,
	// and reset zeroes the slots one by one only below an eighth.
}

// reset forgets every key, keeping the room (the keys' up to
// maxKeptArena): the slots are zeroed one by one when few were used (a
// commit of a quiet second after a large one costs what it holds), else
// all at once.
func (t *keyTable) reset() {
	if 8*len(t.pos) < len(t.slots) {
		for _, p := range t.pos {
			t.slots[p] = 0
		}
	} else {
		clear(t.slots)
	}
	t.arena, t.ends, t.pos = t.arena[:0], t.ends[:0], t.pos[:0]
	if cap(t.arena) > maxKeptArena {
		t.arena = nil // a burst of long keys does not keep its memory
	}
}

// maxKeptArena bounds the room for keys kept across resets.
const maxKeptArena = 16 << 20
