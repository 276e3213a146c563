package aggregate

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"testing"

	"github.com/logtally/logtally/buffer"
)

// The key table numbers keys as a map from key to first position would,
// through growth and through resets after many keys (every slot cleared)
// and after few (the used slots alone), and hands every key back intact.
func TestKeyTableAsMap(t *testing.T) {
	var kt keyTable
	rng := rand.New(rand.NewPCG(1, 2))
	for round, n := range []int{5000, 3, 40000, 1, 0, 700, 100000, 17} {
		want := map[string]int{}
		var order []string
		for range 3 * n {
			// Keys of several lengths, many repeated, some prefixes of
			// others (a page and a longer one).
			page := fmt.Sprintf("/p%d", rng.IntN(n+1))
			if rng.IntN(4) == 0 {
				page += "/x"
			}
			k := buffer.AppendKey(nil, []byte("example.com"), []byte(page), 1_700_000_000+int64(rng.IntN(3)))
			i, added := kt.index(k)
			j, held := want[string(k)]
			if !held {
				j = len(order)
				want[string(k)] = j
				order = append(order, string(k))
			}
			if i != j || added == held {
				t.Fatalf("round %d: key %q: index %d added %v, want %d added %v", round, k, i, added, j, !held)
			}
		}
		if kt.len() != len(order) {
			t.Fatalf("round %d: %d keys, want %d", round, kt.len(), len(order))
		}
		for i, k := range order {
			if !bytes.Equal(kt.key(i), []byte(k)) {
				t.Fatalf("round %d: key %d is %q, want %q", round, i, kt.key(i), k)
			}
		}
		kt.reset()
		if kt.len() != 0 {
			t.Fatalf("round %d: %d keys after reset", round, kt.len())
		}
		for i, s := range kt.slots {
			if s != 0 {
				t.Fatalf("round %d: slot %d not cleared by reset", round, i)
			}
		}
	}
	// A burst of long keys does not keep its room after a reset.
	long := make([]byte, 1<<20)
	for i := range 20 {
		long[0] = byte(i)
		kt.index(long)
	}
	if kt.reset(); cap(kt.arena) > maxKeptArena {
		t.Errorf("%d bytes of room kept after a reset, want at most %d", cap(kt.arena), maxKeptArena)
	}
	if i, added := kt.index(long); i != 0 || !added {
		t.Errorf("after the reset: index %d added %v", i, added)
	}
}

// A table filled to just under its growth bound (long probe runs) finds
// every key again; and a slot whose tag matches a key that is not the one
// it numbers (a collision of the 32 bits kept) is told apart by the bytes.
func TestKeyTableFullAndCollision(t *testing.T) {
	var kt keyTable
	kt.grow() // the first slots, and the seed
	n := len(kt.slots)/2 - 1
	for i := range n {
		if j, added := kt.index(fmt.Appendf(nil, "k%d", i)); j != i || !added {
			t.Fatalf("key %d: index %d added %v", i, j, added)
		}
	}
	if len(kt.slots) != minSlots {
		t.Fatalf("%d slots: the table grew before half full", len(kt.slots))
	}
	for i := range n {
		if j, added := kt.index(fmt.Appendf(nil, "k%d", i)); j != i || added {
			t.Fatalf("key %d again: index %d added %v", i, j, added)
		}
	}

	kt.reset()
	kt.index([]byte("a"))
	// Plant, where "b" would go, a slot with b's tag numbering "a".
	h := maphash.Bytes(kt.seed, []byte("b"))
	mask := uint64(len(kt.slots) - 1)
	p := h & mask
	for kt.slots[p] != 0 {
		p = (p + 1) & mask
	}
	kt.slots[p] = h>>32<<32 | 1
	if j, added := kt.index([]byte("b")); j != 1 || !added {
		t.Fatalf(`"b" behind a slot with its tag numbering "a": index %d added %v, want 1 added`, j, added)
	}
	if j, added := kt.index([]byte("a")); j != 0 || added {
		t.Fatalf(`"a": index %d added %v, want 0 held`, j, added)
	}
}
