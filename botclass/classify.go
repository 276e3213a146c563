package botclass

import (
	"fmt"
	"regexp"
	"slices"
	"sync"
)

// DefaultCacheSize is the number of distinct user agents a Cache holds
// when NewCache is given 0.
const DefaultCacheSize = 4096

// Pattern is a source's own classification rule (config: bots = [{class,
// match}]): user agents matching Match are Class. Patterns are tried
// before the embedded lists, in order.
type Pattern struct {
	Class Class
	// Match is a Go regular expression, matched case-insensitively.
	Match string
}

// Rules classify user agents. They are immutable: one Rules may be used
// by any number of goroutines.
type Rules struct {
	extra []rule
	l     *lists // shared by every Rules
}

type rule struct {
	class Class
	re    *regexp.Regexp
}

// embedded compiles the embedded lists once.
var embedded = sync.OnceValues(compileLists)

// defaultRules are the embedded lists alone.
var defaultRules = sync.OnceValue(func() *Rules {
	r, err := New(nil)
	if err != nil {
		panic(fmt.Sprintf("botclass: the embedded lists: %v", err)) // TestEmbeddedData
	}
	return r
})

// Default returns the embedded lists with no extra patterns, compiled
// once.
func Default() *Rules { return defaultRules() }

// New returns the embedded lists with extra patterns tried first.
func New(extra []Pattern) (*Rules, error) {
	l, err := embedded()
	if err != nil {
		return nil, fmt.Errorf("botclass: the embedded lists: %w", err)
	}
	r := &Rules{l: l}
	for i, p := range extra {
		if p.Class == Person || p.Class >= NumClasses {
			return nil, fmt.Errorf("bots[%d].class: %v: must be search, ai, tool, bot or suspect", i, p.Class)
		}
		re, err := regexp.Compile("(?i)" + p.Match)
		if err != nil {
			return nil, fmt.Errorf("bots[%d].match: %w", i, err)
		}
		r.extra = append(r.extra, rule{p.Class, re})
	}
	return r, nil
}

// Classify returns the class of ua (the user agent as logged, without
// quotes). In order: the extra patterns; the ai, search, tool, headless
// and crawler-user-agents lists (the best class any of them matches);
// the suspect heuristics; else Person. See doc.go.
func (r *Rules) Classify(ua []byte) Class {
	c, _ := r.classify(ua)
	return c
}

// classify returns the class of ua and the index of its crawler in
// r.l.crawlers.
func (r *Rules) classify(ua []byte) (Class, uint16) {
	for _, x := range r.extra {
		if x.re.Match(ua) {
			return x.class, uint16(x.class) // unnamed: see unnamed
		}
	}
	return r.l.classify(ua)
}

// classify matches ua against the lists in one pass of the automaton,
// then the crawler-user-agents regexps whose required literal it saw,
// then the heuristics. It returns the class and the index in l.crawlers
// of the crawler the first literal of the best list names (or the
// class's unnamed crawler).
func (l *lists) classify(ua []byte) (Class, uint16) {
	a := l.ac
	best := rankNone
	var crawler uint16
	var cand [8]int // regexps to run
	nc, overflow := 0, false
	exempt := false
	v := uint32(0) // the root
	for i := 0; i < len(ua); i++ {
		v = a.next[v>>1+uint32(a.sym[ua[i]])]
		if v&1 == 0 {
			continue
		}
		for _, k := range a.outputs(v) {
			lit := &a.lits[k]
			if lit.rank >= best {
				continue
			}
			if lit.rank == rankExempt {
				exempt = true
				continue
			}
			end := i + 1
			start := end - len(lit.text)
			if lit.flags&litExact != 0 && string(ua[start:end]) != lit.text {
				continue
			}
			if lit.flags&(litWord|litProduct) != 0 && !wordAt(ua, start, end, lit.flags&litProduct != 0) {
				continue
			}
			if lit.rank == rankRegex {
				if !slices.Contains(cand[:nc], lit.re) {
					if nc == len(cand) {
						overflow = true
					} else {
						cand[nc] = lit.re
						nc++
					}
				}
				continue
			}
			best, crawler = lit.rank, lit.crawler
			if best == rankSearch { // the first rank: nothing beats it
				return Search, crawler
			}
		}
	}
	if best <= rankOther {
		return rankClass[best], crawler
	}
	if overflow {
		for i, re := range l.res {
			if re.Match(ua) {
				return Other, l.reCrawler[i]
			}
		}
	} else {
		for _, i := range cand[:nc] {
			if l.res[i].Match(ua) {
				return Other, l.reCrawler[i]
			}
		}
		for _, i := range l.always {
			if l.res[i].Match(ua) {
				return Other, l.reCrawler[i]
			}
		}
	}
	if suspect(ua, exempt) {
		return Suspect, uint16(Suspect)
	}
	return Person, uint16(Person)
}

// wordAt reports whether ua[start:end] is a whole word: an end that is a
// letter or digit does not touch another letter or digit. With product,
// it is also not within a host name, path or address (see litProduct).
func wordAt(ua []byte, start, end int, product bool) bool {
	if start > 0 {
		b := ua[start-1]
		if isAlnum(ua[start]) && isAlnum(b) || product && (b == '.' || b == '/' || b == '@') {
			return false
		}
	}
	if end < len(ua) {
		b := ua[end]
		if isAlnum(ua[end-1]) && isAlnum(b) || product && (b == '.' || b == '@') {
			return false
		}
	}
	return true
}
