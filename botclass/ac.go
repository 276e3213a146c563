package botclass

import (
	"bytes"
	"slices"
)

// The literal lists are matched in one pass over the user agent by an
// Aho-Corasick automaton: a DFA over ASCII-folded bytes whose states are
// the prefixes of the literals, each state knowing every literal that
// ends there (its own and those of its failure chain).

// Literal flags.
const (
	// litExact: the literal must match with its own case (the
	// crawler-user-agents patterns, which upstream matches case-sensitively).
	// Without it, ASCII letters match in either case.
	litExact uint8 = 1 << iota
	// litWord: an end of the literal that is a letter or digit must not
	// touch a letter or digit of the user agent (whole-word matching).
	litWord
	// litProduct: stricter than litWord, for the ai.robots.txt names
	// (robots.txt tokens, some of them common words: Code, Cursor,
	// OpenAI): the literal must also not touch a '.', '/' or '@' on its
	// left or a '.' or '@' on its right, so that it is a product token,
	// not part of a host name, path or address ("code.google.com",
	// "https://openai.com" are not the agents Code and OpenAI).
	litProduct
)

// literal is one string the automaton looks for.
type literal struct {
	text  string // as listed
	rank  rank   // what a match means (see rank)
	flags uint8
	re    int // index in Rules.res when rank == rankRegex
	// crawler is the index in lists.crawlers of the bot the literal names
	// (unused for rankRegex and rankExempt).
	crawler uint16
}

// automaton is the Aho-Corasick DFA. Bytes are mapped to symbols first
// (ASCII letters folded, bytes no literal uses to symbol 0), so that a
// state's row has one entry per symbol rather than 256.
type automaton struct {
	sym  [256]uint8
	nsym int
	// next[row+sym] is the step from the state whose row starts at row,
	// reading sym, encoded as the next state's row<<1 | 1 if some
	// literal ends there: the scan needs no multiplication and looks at
	// the outputs only when there are some.
	next  []uint32
	outAt []uint32 // literals ending in state s: outs[outAt[s]:outAt[s+1]]
	outs  []uint32 // indexes in lits
	lits  []literal
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func isAlnum(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// newAutomaton builds the automaton of lits (none empty).
func newAutomaton(lits []literal) *automaton {
	a := &automaton{lits: lits}
	// The alphabet: every folded byte the literals use.
	for _, l := range lits {
		for i := 0; i < len(l.text); i++ {
			a.sym[lowerASCII(l.text[i])] = 1
		}
	}
	a.nsym = 1
	for b := 0; b < 256; b++ {
		if a.sym[b] != 0 {
			a.sym[b] = uint8(a.nsym)
			a.nsym++
		}
	}
	for b := 'A'; b <= 'Z'; b++ {
		a.sym[b] = a.sym[b+'a'-'A']
	}
	if a.nsym > 256 {
		// 255 distinct bytes in the literals: impossible with 8-bit
		// symbols; the lists are far from it (see TestEmbeddedData).
		panic("botclass: literal alphabet over 255 bytes")
	}

	// The trie: 0 is the root and, in next, "no edge" until the DFA is
	// completed (no edge leads back to the root in a trie). Its states,
	// one per distinct prefix of the literals' symbols, are counted first
	// (the literals sorted: each adds its length past the prefix it shares
	// with the one before), so that next is allocated once, not grown
	// (megabytes of garbage at every start).
	syms := make([][]byte, len(lits))
	for i, l := range lits {
		syms[i] = make([]byte, len(l.text))
		for j := 0; j < len(l.text); j++ {
			syms[i][j] = a.sym[l.text[j]]
		}
	}
	slices.SortFunc(syms, bytes.Compare)
	states := 1
	for i, k := range syms {
		shared := 0
		if i > 0 {
			for shared < len(k) && shared < len(syms[i-1]) && k[shared] == syms[i-1][shared] {
				shared++
			}
		}
		states += len(k) - shared
	}
	a.next = make([]uint32, a.nsym, states*a.nsym)
	own := make([][]uint32, 1, states)
	for i, l := range lits {
		s := uint32(0)
		for j := 0; j < len(l.text); j++ {
			c := uint32(a.sym[l.text[j]])
			t := a.next[s*uint32(a.nsym)+c]
			if t == 0 {
				t = uint32(len(own))
				own = append(own, nil)
				a.next = append(a.next, make([]uint32, a.nsym)...)
				a.next[s*uint32(a.nsym)+c] = t
			}
			s = t
		}
		own[s] = append(own[s], uint32(i))
	}

	// Breadth first: failure links, missing edges filled from the
	// failure state's row (already complete: it is shallower), outputs
	// merged with the failure state's.
	n := len(own)
	fail := make([]uint32, n)
	out := make([][]uint32, n)
	queue := []uint32{0}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s != 0 {
			out[s] = append(slices.Clone(own[s]), out[fail[s]]...)
		}
		row := a.next[int(s)*a.nsym : int(s+1)*a.nsym]
		frow := a.next[int(fail[s])*a.nsym : int(fail[s]+1)*a.nsym]
		for c := 1; c < a.nsym; c++ {
			switch t := row[c]; {
			case t != 0:
				// A trie edge (s's row holds nothing else yet): t fails
				// to where s's failure goes on c, or to the root.
				if s != 0 {
					fail[t] = frow[c]
				}
				queue = append(queue, t)
			case s != 0:
				row[c] = frow[c]
			}
		}
	}
	a.outAt = make([]uint32, n+1)
	for s := range n {
		slices.Sort(out[s])
		a.outs = append(a.outs, slices.Compact(out[s])...)
		a.outAt[s+1] = uint32(len(a.outs))
	}
	if uint64(n)*uint64(a.nsym)*2 >= 1<<32 {
		panic("botclass: automaton too large for 32-bit steps")
	}
	for i, t := range a.next {
		v := t * uint32(a.nsym) << 1
		if a.outAt[t+1] > a.outAt[t] {
			v |= 1
		}
		a.next[i] = v
	}
	return a
}

// outputs returns the literals ending in the state a step v leads to.
func (a *automaton) outputs(v uint32) []uint32 {
	s := v >> 1 / uint32(a.nsym)
	return a.outs[a.outAt[s]:a.outAt[s+1]]
}
