package verify

import (
	"fmt"
	"math"
	"testing"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/measure"
)

// A shard past its budget lowers the window's end to a day's start and
// forgets the days after it, keeping the first day whole; the sums the
// window keeps are those before its end; a first day alone past the
// budget is kept, and shed again only once it doubles.
func TestShardSheds(t *testing.T) {
	p := newPass(true, all, math.MinInt64)
	p.budget = 10
	sh := p.newShard().(*shard)
	v := measure.Vector{measure.Views: 1}
	add := func(day, n int) {
		for i := range n {
			sec := int64(day)*86400 + int64(i)
			sh.Sums(0, buffer.AppendKey(nil, []byte("s"), fmt.Appendf(nil, "/p%d", i%3), sec), &v)
		}
	}
	add(0, 4)
	add(1, 4)
	add(2, 4) // 12 > 10: keep about 5, day 0 whole
	if hi := p.hi.Load(); hi != 86400 {
		t.Fatalf("window's end %d, want day 1's start", hi)
	}
	if sh.n != 4 || sh.inRange != 12 || len(sh.sites) != 1 || !sh.spans[0].any || sh.spans[0].max != 2*86400+3 {
		t.Fatalf("held %d, in range %d, sites %v, span %+v", sh.n, sh.inRange, sh.sites, sh.spans[0])
	}
	add(3, 2) // after the end: not kept
	if sh.n != 4 {
		t.Fatalf("held %d after sums past the window", sh.n)
	}
	w := window([]*shard{sh}, span{p.lo, p.hi.Load()})
	n := 0
	for _, ps := range w["s"] {
		for _, x := range ps.sums {
			n++
			if x.sec >= 86400 {
				t.Errorf("window holds %d", x.sec)
			}
		}
	}
	if n != 4 {
		t.Errorf("window holds %d sums, want 4", n)
	}

	// One day alone past the budget: kept whole, shed at 11, 23 and 47 sums (next at 94).
	p = newPass(true, all, math.MinInt64)
	p.budget = 10
	sh = p.newShard().(*shard)
	add(5, 50)
	if sh.n != 50 || p.hi.Load() != math.MaxInt64 || sh.limit != 94 {
		t.Errorf("one day: held %d, end %d, next shed at %d", sh.n, p.hi.Load(), sh.limit)
	}
}
