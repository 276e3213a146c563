package botclass

import (
	"fmt"
	"strings"
)

// Purpose is what a named crawler fetches for: a closed set (see doc.go,
// "Names", for where each crawler's comes from).
type Purpose uint8

// The purposes. The zero value is PurposeOther.
const (
	PurposeOther       Purpose = iota // none of the below, or not known
	PurposeSearch                     // a search engine's index
	PurposeAITraining                 // data for AI models (or an AI data provider's crawl)
	PurposeAIAssistant                // a fetch on a user's behalf by an AI assistant or agent
	PurposeAISearch                   // an AI search engine's index or answers
	PurposeSEO                        // SEO and marketing crawls (backlinks, audits)
	PurposeMonitor                    // uptime, health and performance checks
	PurposePreview                    // link previews (social networks, chat apps)
	PurposeFeed                       // feed readers and aggregators
	PurposeArchive                    // archivers
	PurposeTool                       // an HTTP tool, library or automated browser, for whatever its user wants
	NumPurposes
)

var purposeNames = [NumPurposes]string{"other", "search", "ai-training", "ai-assistant", "ai-search", "seo", "monitor", "preview", "feed", "archive", "tool"}

// String returns the purpose's name ("search", "ai-training"...): a
// constant.
func (p Purpose) String() string {
	if p < NumPurposes {
		return purposeNames[p]
	}
	return "other"
}

// ParsePurpose returns the purpose named s (see String).
func ParsePurpose(s string) (Purpose, error) {
	for i, n := range purposeNames {
		if n == s {
			return Purpose(i), nil
		}
	}
	return 0, fmt.Errorf("%q: unknown purpose (want one of %s)", s, strings.Join(purposeNames[:], ", "))
}

// Crawler is what the lists say of a named bot.
type Crawler struct {
	// Name is short and stable: the token the lists match
	// ("Googlebot", "GPTBot", "curl"), or "(other <class>)" for a bot no
	// list names (a source's own pattern, the suspect heuristics); ""
	// for people.
	Name string
	// Operator is who runs it ("Google", "OpenAI"), "" when the lists do
	// not say.
	Operator string
	Purpose  Purpose
}

// CrawlerNamed returns what the lists say of the crawler named name (a
// Crawler's Name, as the counts by dimension keep it: "Googlebot",
// "GPTBot"), or false for a name no list gives: people's "", the classes'
// "(other <class>)", any other value. A name several lists give is the
// one a user agent carrying it gets (see byName). It allocates nothing.
func (r *Rules) CrawlerNamed(name string) (Crawler, bool) {
	id, ok := r.l.named[name]
	if !ok {
		return Crawler{}, false
	}
	return r.l.crawlers[id], true
}

// unnamed is the crawler of each class's bots that no list names: the
// first NumClasses entries of lists.crawlers (Person's is empty).
func unnamed(c Class) Crawler {
	if c == Person {
		return Crawler{}
	}
	p := PurposeOther
	if c == Tool {
		p = PurposeTool
	}
	return Crawler{Name: "(other " + c.String() + ")", Purpose: p}
}

// aiPurpose maps ai.robots.txt's free-text "function" to a purpose: an
// assistant or agent (a fetch on a user's behalf) if it says assistant,
// agent, "on behalf" or user queries; AI search if it says search; else
// training (its scrapers, data providers and training crawlers).
func aiPurpose(function string) Purpose {
	f := strings.ToLower(function)
	switch {
	case strings.Contains(f, "assistant") || strings.Contains(f, "agent") || strings.Contains(f, "on behalf") || strings.Contains(f, "user quer"):
		return PurposeAIAssistant
	case strings.Contains(f, "search"):
		return PurposeAISearch
	}
	return PurposeAITraining
}

// cuaPurpose maps crawler-user-agents' tags to a purpose, the first of
// this order that the tags hold.
func cuaPurpose(tags string) Purpose {
	order := []struct {
		tag string
		p   Purpose
	}{
		{"ai-crawler", PurposeAITraining},
		{"search-engine", PurposeSearch},
		{"seo", PurposeSEO},
		{"monitoring", PurposeMonitor},
		{"social-preview", PurposePreview},
		{"feed-reader", PurposeFeed},
		{"archiver", PurposeArchive},
		{"http-library", PurposeTool},
		{"browser-automation", PurposeTool},
	}
	have := strings.Split(tags, ",")
	for _, o := range order {
		for _, h := range have {
			if h == o.tag {
				return o.p
			}
		}
	}
	return PurposeOther // scanner, advertising, academic, or no tag
}

// crawlerName is the name of a list's token or literal: without the
// regexp escapes' slashes and the spaces or slashes at its ends
// ("Googlebot/" is Googlebot).
func crawlerName(tok string) string {
	return strings.Trim(tok, " /")
}

// fact is a line of data/crawlers.txt.
type fact struct {
	name, operator string
	purpose        Purpose
}

// parseFacts reads data/crawlers.txt: "token<TAB>name<TAB>operator<TAB>
// purpose<TAB>source" lines (name "=" for the token itself, operator "-"
// for none), # comments and blank lines.
func parseFacts(text string) (map[string]fact, error) {
	facts := map[string]fact{}
	for n, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 5 || f[0] == "" || f[1] == "" || strings.TrimSpace(f[4]) == "" {
			return nil, fmt.Errorf("data/crawlers.txt:%d: want token, name, operator, purpose and source, TAB-separated", n+1)
		}
		p, err := ParsePurpose(f[3])
		if err != nil {
			return nil, fmt.Errorf("data/crawlers.txt:%d: %w", n+1, err)
		}
		if _, dup := facts[f[0]]; dup {
			return nil, fmt.Errorf("data/crawlers.txt:%d: %s listed twice", n+1, f[0])
		}
		name, op := f[1], f[2]
		if name == "=" {
			name = f[0]
		}
		if op == "-" {
			op = ""
		}
		facts[f[0]] = fact{name, op, p}
	}
	return facts, nil
}
