package tailer

import (
	"io"
	"math/rand/v2"
	"testing"
)

// TestHeadIndexMatchesCopyState: the index answers as copyState over the
// list of heads, through inserts, removals and replacements of random
// heads over a small alphabet (so that they share prefixes), with and
// without the asker's own head left out.
func TestHeadIndexMatchesCopyState(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(max int) []byte {
		b := make([]byte, rng.IntN(max+1))
		for i := range b {
			b[i] = "ab\n"[rng.IntN(3)]
		}
		return b
	}
	var x headIndex
	fls := make([]*follower, 40)
	for i := range fls {
		fls[i] = &follower{}
	}
	for step := range 5000 {
		fl := fls[rng.IntN(len(fls))]
		switch rng.IntN(3) {
		case 0:
			x.drop(fl)
		case 1:
			x.set(fl, word(8))
		default:
			x.update(fl, word(8))
		}
		var self *follower
		if rng.IntN(2) == 0 {
			self = fls[rng.IntN(len(fls))]
		}
		var heads [][]byte
		for _, f := range fls {
			if f.indexed && f != self && len(f.idxHead) > 0 {
				heads = append(heads, f.idxHead)
			}
		}
		b := word(10)
		wantFull, wantPartial := copyState(bytesReaderAt(b), heads)
		full, partial := x.match(b, self)
		if full != wantFull || partial != wantPartial {
			t.Fatalf("step %d: match(%q) = %v, %v; copyState over %q: %v, %v", step, b, full, partial, heads, wantFull, wantPartial)
		}
	}
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
