package botclass

import (
	_ "embed"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/logtally/logtally/internal/pinned"
)

// The embedded lists: see data/VERSIONS and doc.go.
var (
	//go:embed data/crawler-user-agents/patterns.txt
	cuaPatterns string
	//go:embed data/ai.robots.txt/agents.txt
	aiAgents string
	//go:embed data/search.txt
	searchList string
	//go:embed data/tool.txt
	toolList string
	//go:embed data/headless.txt
	headlessList string
	//go:embed data/VERSIONS
	versions string
	//go:embed data/ai.robots.txt/info.tsv
	aiInfo string
	//go:embed data/crawler-user-agents/tags.tsv
	cuaTags string
	//go:embed data/crawlers.txt
	crawlersList string
)

// aiSkipped are the ai.robots.txt names not used as user-agent tokens,
// and why. (Names that are robots.txt tokens only, such as Google-Extended
// or Applebot-Extended, are kept: no user agent carries them, so they
// match nothing and cost nothing.)
var aiSkipped = map[string]string{
	// A common word: as a whole word it would make "Sogou web spider"
	// and other search engines' spiders "ai".
	"Spider": "generic word",
}

// rank orders the literal lists: a user agent gets the class of the best
// (lowest) rank it matches.
type rank uint8

const (
	rankSearch   rank = iota // data/search.txt: the search engines we name, before the broad AI list
	rankAI                   // ai.robots.txt
	rankTool                 // data/tool.txt
	rankHeadless             // data/headless.txt: Suspect
	rankOther                // crawler-user-agents' literal patterns
	rankRegex                // a required literal of a crawler-user-agents regexp: run it
	rankExempt               // an ancientExempt device: old versions are normal
	rankNone
)

var rankClass = [rankOther + 1]Class{Search, AI, Tool, Suspect, Other}

// lists are the embedded lists, compiled.
type lists struct {
	ac *automaton
	// res are the crawler-user-agents patterns that are not plain
	// literals, compiled as upstream matches them (case-sensitive); each
	// runs only when one of its required literals is in the user agent,
	// or always if it has none (always).
	res    []*regexp.Regexp
	always []int
	// crawlers are the named bots (see crawler.go): the first NumClasses
	// are each class's unnamed bots; literals and regexps (reCrawler)
	// hold indexes.
	crawlers  []Crawler
	reCrawler []uint16
	// named is each list name's crawler, for CrawlerNamed (see byName).
	named map[string]uint16
	// factsUsed are the data/crawlers.txt tokens some list names (the
	// tests check all are).
	factsUsed map[string]bool
	facts     map[string]fact
	// Counts, for Version and the tests.
	nCUA, nCUALiteral, nAI, nSearch, nTool, nHeadless int
}

// compileLists compiles the embedded lists.
func compileLists() (*lists, error) {
	l := &lists{factsUsed: map[string]bool{}}
	var err error
	if l.facts, err = parseFacts(crawlersList); err != nil {
		return nil, err
	}
	ids := map[Crawler]uint16{}
	for c := range NumClasses {
		l.crawlers = append(l.crawlers, unnamed(c))
	}
	// crawler returns the index of the crawler named by tok, with what
	// the lists say of it unless data/crawlers.txt says otherwise.
	crawler := func(tok, operator string, p Purpose) uint16 {
		name := crawlerName(tok)
		if f, ok := l.facts[name]; ok {
			l.factsUsed[name] = true
			name, operator, p = f.name, f.operator, f.purpose
		}
		c := Crawler{name, operator, p}
		id, ok := ids[c]
		if !ok {
			id = uint16(len(l.crawlers))
			ids[c] = id
			l.crawlers = append(l.crawlers, c)
		}
		return id
	}
	var lits []literal
	seen := map[literal]bool{}
	add := func(x literal) {
		if !seen[x] {
			seen[x] = true
			lits = append(lits, x)
		}
	}

	// ai.robots.txt: agent names, product tokens, any case; what
	// info.tsv says of each, line by line.
	info := strings.Split(strings.TrimSuffix(aiInfo, "\n"), "\n")
	for i, name := range strings.Split(strings.TrimSuffix(aiAgents, "\n"), "\n") {
		if name == "" {
			return nil, fmt.Errorf("data/ai.robots.txt/agents.txt:%d: empty name", i+1)
		}
		f := strings.Split(info[min(i, len(info)-1)], "\t")
		if i >= len(info) || len(f) != 3 || f[0] != name {
			return nil, fmt.Errorf("data/ai.robots.txt/info.tsv:%d: not name, operator, function of %s", i+1, name)
		}
		l.nAI++
		if _, skip := aiSkipped[name]; !skip {
			add(literal{text: name, rank: rankAI, flags: litProduct, crawler: crawler(name, f[1], aiPurpose(f[2]))})
		}
	}
	if len(info) != l.nAI {
		return nil, fmt.Errorf("data/ai.robots.txt/info.tsv: %d lines for %d agents", len(info), l.nAI)
	}
	// Our lists.
	for _, o := range []struct {
		file    string
		text    string
		rank    rank
		n       *int
		purpose Purpose
	}{
		{"data/search.txt", searchList, rankSearch, &l.nSearch, PurposeSearch},
		{"data/tool.txt", toolList, rankTool, &l.nTool, PurposeTool},
		{"data/headless.txt", headlessList, rankHeadless, &l.nHeadless, PurposeTool},
	} {
		toks, err := pinned.OwnList(o.file, o.text)
		if err != nil {
			return nil, err
		}
		*o.n = len(toks)
		for _, t := range toks {
			add(literal{text: t, rank: o.rank, flags: litWord, crawler: crawler(t, "", o.purpose)})
		}
	}
	// crawler-user-agents: plain literals into the automaton, with their
	// case; the others compiled, with their required literals (any case)
	// into the automaton.
	tags := strings.Split(strings.TrimSuffix(cuaTags, "\n"), "\n")
	for i, p := range strings.Split(strings.TrimSuffix(cuaPatterns, "\n"), "\n") {
		pat, tag, ok := strings.Cut(tags[min(i, len(tags)-1)], "\t")
		if i >= len(tags) || !ok || pat != p {
			return nil, fmt.Errorf("data/crawler-user-agents/tags.tsv:%d: not the pattern and tags of %s", i+1, p)
		}
		purpose := cuaPurpose(tag)
		l.nCUA++
		re, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			return nil, fmt.Errorf("data/crawler-user-agents/patterns.txt:%d: %w", i+1, err)
		}
		re = re.Simplify()
		if re.Op == syntax.OpLiteral && re.Flags&syntax.FoldCase == 0 && len(re.Rune) > 0 {
			l.nCUALiteral++
			add(literal{text: string(re.Rune), rank: rankOther, flags: litExact, crawler: crawler(string(re.Rune), "", purpose)})
			continue
		}
		c, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("data/crawler-user-agents/patterns.txt:%d: %w", i+1, err)
		}
		l.res = append(l.res, c)
		req, ok := required(re)
		name := p // a regexp without a required literal: named by its pattern
		if ok {
			name = req[0]
		}
		l.reCrawler = append(l.reCrawler, crawler(name, "", purpose))
		if !ok {
			l.always = append(l.always, len(l.res)-1)
			continue
		}
		for _, s := range req {
			add(literal{text: s, rank: rankRegex, re: len(l.res) - 1})
		}
	}
	for _, x := range ancientExempt {
		add(literal{text: x, rank: rankExempt})
	}
	if len(tags) != l.nCUA {
		return nil, fmt.Errorf("data/crawler-user-agents/tags.tsv: %d lines for %d patterns", len(tags), l.nCUA)
	}
	if len(l.crawlers) > 1<<16 {
		return nil, fmt.Errorf("%d crawlers: over the 65,536 a uint16 numbers", len(l.crawlers))
	}
	l.ac = newAutomaton(lits)
	l.named = byName(l.crawlers, lits, l.reCrawler)
	return l, nil
}

// byName returns the index of each name's crawler in crawlers: of the
// literals (lits) and regexps (reCrawler, ranked rankRegex) naming it,
// the one of the best rank, the first of equals. A name the lists give
// twice with different facts (ChatGPT-User: ai.robots.txt's ai-assistant
// and OpenAI, crawler-user-agents' ai-training) is so the crawler a user
// agent carrying it is classified as. The classes' unnamed crawlers
// ("(other tool)"...) are not names.
func byName(crawlers []Crawler, lits []literal, reCrawler []uint16) map[string]uint16 {
	type best struct {
		rank rank
		id   uint16
	}
	m := map[string]best{}
	add := func(r rank, id uint16) {
		if int(id) < int(NumClasses) {
			return
		}
		name := crawlers[id].Name
		if b, ok := m[name]; !ok || r < b.rank {
			m[name] = best{r, id}
		}
	}
	for _, x := range lits {
		if x.rank <= rankOther {
			add(x.rank, x.crawler)
		}
	}
	for _, id := range reCrawler {
		add(rankRegex, id)
	}
	out := make(map[string]uint16, len(m))
	for name, b := range m {
		out[name] = b.id
	}
	return out
}

// required returns literals one of which every match of re contains
// (compared ASCII-case-insensitively), or false if it finds none (re can
// match without any literal, or is beyond this simple analysis).
func required(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{string(re.Rune)}, len(re.Rune) > 0
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		// The best of: each run of adjacent literals, each child's set;
		// best is the set whose shortest literal is longest.
		var best []string
		bestLen := 0
		consider := func(set []string) {
			m := len(set[0])
			for _, s := range set[1:] {
				m = min(m, len(s))
			}
			if m > bestLen {
				best, bestLen = set, m
			}
		}
		run := ""
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral {
				run += string(sub.Rune)
				continue
			}
			if run != "" {
				consider([]string{run})
				run = ""
			}
			if set, ok := required(sub); ok {
				consider(set)
			}
		}
		if run != "" {
			consider([]string{run})
		}
		return best, best != nil
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			set, ok := required(sub)
			if !ok {
				return nil, false
			}
			all = append(all, set...)
		}
		return all, true
	}
	return nil, false
}

// Version describes the embedded upstream lists: each one's name, commit
// and commit date, from data/VERSIONS (pinned.Version): logtally
// version prints it.
func Version() string { return pinned.Version(versions) }
