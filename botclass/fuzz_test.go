package botclass

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// reference classifies ua the slow, obvious way: every literal searched
// for on its own, every regexp run. Classify must agree with it (the
// automaton finds every match; the required literals never skip a regexp
// that matches).
func reference(l *lists, ua []byte) Class {
	best := rankNone
	regexSeen, exempt := false, false
	folded := foldASCII(ua)
	for _, lit := range l.ac.lits {
		hay, needle := folded, foldASCII([]byte(lit.text))
		if lit.flags&litExact != 0 {
			hay, needle = ua, []byte(lit.text)
		}
		for off := 0; ; {
			i := bytes.Index(hay[off:], needle)
			if i < 0 {
				break
			}
			start := off + i
			off = start + 1
			if lit.flags&(litWord|litProduct) != 0 && !wordAt(ua, start, start+len(needle), lit.flags&litProduct != 0) {
				continue
			}
			switch {
			case lit.rank == rankExempt:
				exempt = true
			case lit.rank == rankRegex:
				regexSeen = true
			case lit.rank < best:
				best = lit.rank
			}
			break
		}
	}
	if best <= rankOther {
		return rankClass[best]
	}
	for _, re := range l.res {
		if re.Match(ua) {
			if !regexSeen {
				return Class(255) // a regexp matched though none of its literals was seen
			}
			return Other
		}
	}
	if suspect(ua, exempt) {
		return Suspect
	}
	return Person
}

// foldASCII returns a copy of b with its ASCII letters in lower case.
func foldASCII(b []byte) []byte {
	f := make([]byte, len(b))
	for i, c := range b {
		f[i] = lowerASCII(c)
	}
	return f
}

func TestClassifyMatchesReference(t *testing.T) {
	l, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	r := Default()
	check := func(ua []byte) {
		if got, want := r.Classify(ua), reference(l, ua); got != want {
			t.Errorf("Classify(%q) = %v, reference %v", ua, got, want)
		}
	}
	for _, uas := range realAgents {
		for _, ua := range uas {
			check([]byte(ua))
		}
	}
	// Pieces of literals run together: a literal often ends inside
	// another's prefix, where only the failure links find it.
	rnd := rand.New(rand.NewPCG(18, 1))
	lits := l.ac.lits
	for range 5000 {
		var ua []byte
		for range 1 + rnd.IntN(4) {
			x := lits[rnd.IntN(len(lits))].text
			i, j := rnd.IntN(len(x)/2+1), len(x)-rnd.IntN(len(x)/2+1)
			if rnd.IntN(2) == 0 {
				i, j = 0, len(x) // whole
			}
			ua = append(ua, x[i:max(i, j)]...)
			if rnd.IntN(3) == 0 {
				ua = append(ua, " /;.-("[rnd.IntN(6)])
			}
		}
		check(ua)
	}
	seen := map[string]bool{}
	for _, ua := range apacheAgents(t) {
		if !seen[string(ua)] {
			seen[string(ua)] = true
			check(ua)
		}
	}
}

func FuzzClassify(f *testing.F) {
	for _, uas := range realAgents {
		for _, ua := range uas {
			f.Add([]byte(ua))
		}
	}
	f.Add([]byte("Mozilla/5.0 (compatible; MSIE 99999999999999999999.0; Trident/99999999999999)"))
	f.Add([]byte("\xff\xfeMozilla/5.0 (\x00) Chrome/\xff"))
	f.Add([]byte("AdsBot-Google"))
	r := Default()
	l, err := embedded()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, ua []byte) {
		orig := bytes.Clone(ua)
		c := r.Classify(ua)
		if c >= NumClasses {
			t.Fatalf("Classify(%q) = %d, out of range", ua, c)
		}
		if !bytes.Equal(ua, orig) {
			t.Fatalf("Classify changed its input")
		}
		if c2 := r.Classify(bytes.Clone(ua)); c2 != c {
			t.Fatalf("Classify(%q): %v, then %v", ua, c, c2)
		}
		if want := reference(l, ua); c != want {
			t.Fatalf("Classify(%q) = %v, reference %v", ua, c, want)
		}
		cache := NewCache(r, 2)
		for range 2 { // a miss, then a hit
			if got := cache.Class(ua); got != c {
				t.Fatalf("Cache.Class(%q) = %v, Classify %v", ua, got, c)
			}
		}
		if h, m := cache.Stats(); len(ua) <= maxCachedLen && (h != 1 || m != 1) {
			t.Fatalf("stats %d hits %d misses after a miss and a hit", h, m)
		}
		a := r.Agent(ua)
		if a.Class != c || (a.Class == Person) != (a.Name == "") || a.Purpose >= NumPurposes || cache.Agent(ua) != a {
			t.Fatalf("Agent(%q) = %+v (%+v), Classify %v", ua, a, *a.Crawler, c)
		}
		if !bytes.Equal(ua, orig) {
			t.Fatalf("Agent changed its input")
		}
	})
}
