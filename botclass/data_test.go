package botclass

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/logtally/logtally/internal/pinned"
)

// TestEmbeddedData: the embedded lists parse, every upstream line is
// used, VERSIONS pins a commit, date and licence for each upstream list,
// and the licences are there.
func TestEmbeddedData(t *testing.T) {
	l, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(cuaPatterns, "\n"); l.nCUA != n || n < 1000 {
		t.Errorf("crawler-user-agents: %d patterns compiled of %d lines", l.nCUA, n)
	}
	if n := strings.Count(aiAgents, "\n"); l.nAI != n || n < 100 {
		t.Errorf("ai.robots.txt: %d names of %d lines", l.nAI, n)
	}
	if l.nSearch < 20 || l.nTool < 40 || l.nHeadless < 5 {
		t.Errorf("own lists: %d search, %d tool, %d headless tokens", l.nSearch, l.nTool, l.nHeadless)
	}
	if len(l.always) != 0 {
		t.Errorf("%d crawler-user-agents regexps have no required literal and run on every miss: %v", len(l.always), l.always)
	}
	t.Logf("crawler-user-agents: %d patterns, %d literal, %d regexps; ai.robots.txt %d names; own lists %d search, %d tool, %d headless; automaton %d literals, %d states × %d symbols",
		l.nCUA, l.nCUALiteral, len(l.res), l.nAI, l.nSearch, l.nTool, l.nHeadless, len(l.ac.lits), len(l.ac.outAt)-1, l.ac.nsym)

	line := regexp.MustCompile(`^([^\t]+)\thttps://github\.com/([^\t]+)\t([0-9a-f]{40})\t(\d{4}-\d\d-\d\d)\tMIT\t[^\t]+$`)
	want := map[string]string{
		"crawler-user-agents": "monperrus/crawler-user-agents",
		"ai.robots.txt":       "ai-robots-txt/ai.robots.txt",
	}
	for _, s := range strings.Split(strings.TrimSpace(versions), "\n") {
		if strings.HasPrefix(s, "#") {
			continue
		}
		m := line.FindStringSubmatch(s)
		if m == nil {
			t.Errorf("VERSIONS: %q: want name, repository, commit, date, MIT, files", s)
			continue
		}
		if want[m[1]] != m[2] {
			t.Errorf("VERSIONS: %s from %s, want %q", m[1], m[2], want[m[1]])
		}
		delete(want, m[1])
		lic, err := os.ReadFile("data/" + m[1] + "/LICENSE")
		if err != nil || !strings.Contains(string(lic), "MIT License") || !strings.Contains(string(lic), "Permission is hereby granted") {
			t.Errorf("data/%s/LICENSE: not the MIT licence (%v)", m[1], err)
		}
	}
	for name := range want {
		t.Errorf("VERSIONS names no commit for %s", name)
	}
	if v := Version(); !strings.Contains(v, "crawler-user-agents@") || !strings.Contains(v, "ai.robots.txt@") {
		t.Errorf("Version() = %q", v)
	}
}

// TestOwnListsReachable: every token of our lists gives its class (none is
// shadowed by an earlier list) except those listed as shadowed.
func TestOwnListsReachable(t *testing.T) {
	shadowed := map[string]bool{"Scrapy": true} // named by ai.robots.txt: ai
	r := Default()
	for _, o := range []struct {
		file, text string
		want       Class
	}{
		{"data/search.txt", searchList, Search},
		{"data/tool.txt", toolList, Tool},
		{"data/headless.txt", headlessList, Suspect},
	} {
		toks, err := pinned.OwnList(o.file, o.text)
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range toks {
			ua := "Mozilla/5.0 (compatible; " + tok + " 1.0)"
			got := r.Classify([]byte(ua))
			if shadowed[tok] {
				if got == o.want {
					t.Errorf("%s: %q is %v: no longer shadowed, update the test", o.file, tok, got)
				}
			} else if got != o.want {
				t.Errorf("%s: %q gives %v, want %v", o.file, ua, got, o.want)
			}
		}
	}
}
