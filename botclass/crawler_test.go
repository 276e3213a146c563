package botclass

import (
	"bytes"
	"os"
	"sort"
	"strings"
	"testing"
	"unsafe"

	"github.com/logtally/logtally/uafamily"
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

// TestCrawlerNames: real bots' user agents, as their operators document
// them, get their crawler's name, operator and purpose.
func TestCrawlerNames(t *testing.T) {
	r := Default()
	for _, c := range []struct {
		ua                   string
		class                Class
		name, operator, purp string
	}{
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", Search, "Googlebot", "Google", "search"},
		{"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/141.0.7390.122 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", Search, "Googlebot", "Google", "search"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36", Search, "bingbot", "Microsoft", "search"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.3; +https://openai.com/gptbot)", AI, "GPTBot", "OpenAI", "ai-training"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot", AI, "ChatGPT-User", "OpenAI", "ai-assistant"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.3; +https://openai.com/searchbot", AI, "OAI-SearchBot", "OpenAI", "ai-search"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", AI, "ClaudeBot", "Anthropic", "ai-training"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)", AI, "Claude-User", "Anthropic", "ai-assistant"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)", AI, "PerplexityBot", "Perplexity", "ai-search"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)", AI, "Perplexity-User", "Perplexity", "ai-assistant"},
		{"Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)", AI, "Bytespider", "ByteDance", "ai-training"},
		{"Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", Other, "AhrefsBot", "Ahrefs", "seo"},
		{"Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", Other, "SemrushBot", "Semrush", "seo"},
		{"Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", Other, "MJ12bot", "Majestic", "seo"},
		{"Mozilla/5.0 (compatible; DotBot/1.2; +https://opensiteexplorer.org/dotbot; help@moz.com)", Other, "DotBot", "Moz", "seo"},
		{"Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)", Tool, "UptimeRobot", "UptimeRobot", "monitor"},
		{"curl/8.5.0", Tool, "curl", "", "tool"},
		{"python-requests/2.32.3", Tool, "python-requests", "", "tool"},
		{"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", AI, "facebookexternalhit", "Meta", "preview"},
		{"Twitterbot/1.0", Other, "Twitterbot", "X", "preview"},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", Search, "Applebot", "Apple", "search"},
		{"Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", Search, "YandexBot", "Yandex", "search"},
		{"Mozilla/5.0 (compatible; YandexImages/3.0; +http://yandex.com/bots)", Search, "Yandex", "Yandex", "search"},
		{"Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)", Search, "Baiduspider", "Baidu", "search"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36", Suspect, "HeadlessChrome", "", "tool"},
		{"-", Suspect, "(other suspect)", "", "other"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36", Person, "", "", "other"},
	} {
		a := r.Agent([]byte(c.ua))
		if a.Class != c.class || a.Name != c.name || a.Operator != c.operator || a.Purpose.String() != c.purp {
			t.Errorf("%s\n\tgot %v %q %q %v, want %v %q %q %s", c.ua, a.Class, a.Name, a.Operator, a.Purpose, c.class, c.name, c.operator, c.purp)
		}
	}
}

// TestAgentConsistent: on every agent of the tests (crawler-user-agents'
// instances, the Apache log, the real agents' table), Agent gives
// Classify's class; every bot has a name and the (bot) families, every
// person no name and uafamily's families; and the bots the lists match
// (every instance) are named by them, not "(other ...)" but for the
// suspects.
func TestAgentConsistent(t *testing.T) {
	r := Default()
	var uas [][]byte
	b, err := os.ReadFile("testdata/crawler-user-agents-instances.txt")
	if err != nil {
		t.Fatal(err)
	}
	instances := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	uas = append(uas, instances...)
	uas = append(uas, apacheAgents(t)...)
	for _, list := range realAgents {
		for _, ua := range list {
			uas = append(uas, []byte(ua))
		}
	}
	unnamedInstances := map[Class]int{}
	for i, ua := range uas {
		a := r.Agent(ua)
		if cl := r.Classify(ua); a.Class != cl {
			t.Errorf("Agent(%q).Class = %v, Classify = %v", ua, a.Class, cl)
		}
		switch {
		case a.Class == Person && (*a.Crawler != Crawler{} || a.Families != uafamily.Parse(ua)):
			t.Errorf("Agent(%q): person with %+v", ua, a)
		case a.Class != Person && (a.Name == "" || a.Families != uafamily.Bot):
			t.Errorf("Agent(%q): %v with %+v", ua, a.Class, a)
		}
		if i < len(instances) && strings.HasPrefix(a.Name, "(other ") {
			unnamedInstances[a.Class]++
		}
	}
	if len(unnamedInstances) > 1 || unnamedInstances[Suspect] > 30 {
		t.Errorf("crawler-user-agents instances unnamed: %v", unnamedInstances)
	}
	t.Logf("%d agents; %d instances, unnamed: %v", len(uas), len(instances), unnamedInstances)
}

// TestAgentExtra: a source's own pattern gives its class and the class's
// unnamed crawler.
func TestAgentExtra(t *testing.T) {
	r, err := New([]Pattern{{Class: Tool, Match: `^internal-app/`}})
	if err != nil {
		t.Fatal(err)
	}
	a := r.Agent([]byte("internal-app/2.0 (build 7)"))
	if a.Class != Tool || a.Name != "(other tool)" || a.Purpose != PurposeTool || a.Families != uafamily.Bot {
		t.Errorf("extra pattern: %+v", a)
	}
}

func TestParsePurpose(t *testing.T) {
	for p := range NumPurposes {
		if q, err := ParsePurpose(p.String()); err != nil || q != p {
			t.Errorf("ParsePurpose(%q) = %v, %v", p.String(), q, err)
		}
	}
	if _, err := ParsePurpose("crawling"); err == nil {
		t.Error("ParsePurpose(crawling): no error")
	}
}

// TestCacheAgent: the cache's Agent is the Rules', on a miss and on hits
// in either generation, with the digest; hits allocate nothing; and an
// entry is 32 bytes, as it was holding the class alone (key 16, class 1,
// padding 7, digest 8): the ids fill the padding.
func TestCacheAgent(t *testing.T) {
	r := Default()
	c := NewCacheDigest(r, 4, func(b []byte) uint64 { return uint64(len(b)) })
	uas := [][]byte{
		[]byte("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"),
		[]byte("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.3; +https://openai.com/gptbot)"),
		[]byte("curl/8.5.0"),
	}
	for round := range 3 {
		for _, ua := range uas {
			a, d := c.LookupAgent(ua)
			if want := r.Agent(ua); a != want || d != uint64(len(ua)) || c.Agent(ua) != want || c.Class(ua) != want.Class {
				t.Errorf("round %d: LookupAgent(%q) = %+v, %d; want %+v, %d", round, ua, a, d, want, len(ua))
			}
		}
	}
	if h, m := c.Stats(); m != 3 || h != 3*3*3-3 { // 3 rounds of 3 agents of 3 calls
		t.Errorf("stats: %d hits, %d misses", h, m)
	}
	if n := testing.AllocsPerRun(100, func() {
		for _, ua := range uas {
			agentSink = c.Agent(ua)
		}
	}); n != 0 {
		t.Errorf("Agent hits allocate %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { agentSink = r.Agent(uas[0]); agentSink = r.Agent(uas[1]) }); n != 0 {
		t.Errorf("Rules.Agent (a miss) allocates %v times", n)
	}
	if s := unsafe.Sizeof(entry{}); s != 32 {
		t.Errorf("a cache entry is %d bytes, want 32", s)
	}
}

var agentSink Agent
