package botclass

import (
	"sort"
	"testing"
)

// TestCrawlerFacts: every token of data/crawlers.txt is one a list names
// (a fact nothing uses is a typo or a token the lists dropped), and every
// crawler has a name and a purpose in range.
func TestCrawlerFacts(t *testing.T) {
	l, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	var unused []string
	for tok := range l.facts {
		if !l.factsUsed[tok] {
			unused = append(unused, tok)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("data/crawlers.txt: no list names %q", unused)
	}
	if len(l.facts) < 60 {
		t.Errorf("data/crawlers.txt: %d facts", len(l.facts))
	}
	purposes := map[Purpose]int{}
	for i, c := range l.crawlers {
		if i > 0 && c.Name == "" || c.Purpose >= NumPurposes {
			t.Errorf("crawler %d: %+v", i, c)
		}
		purposes[c.Purpose]++
	}
	t.Logf("%d crawlers; by purpose: %v", len(l.crawlers), purposes)
}
