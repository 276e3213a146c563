package botclass

import "fmt"

// Class is what a user agent says its client is. The zero value is
// Person: a user agent no list names and no heuristic suspects.
type Class uint8

// The classes, in the order the measures store them.
const (
	// Person is every user agent not classified below: counted as a
	// person (a client can send any user agent: see doc.go).
	Person Class = iota
	// Search is a search-engine crawler (Googlebot, bingbot, YandexBot…).
	Search
	// AI is an AI crawler or assistant fetcher (GPTBot, ClaudeBot,
	// PerplexityBot…), from the ai.robots.txt list.
	AI
	// Tool is an HTTP tool, library or monitor (curl, python-requests,
	// Go-http-client, UptimeRobot…).
	Tool
	// Other is any other declared bot (crawler-user-agents patterns).
	Other
	// Suspect is an agent that declares nothing but looks automated:
	// empty or "-", absurdly short, an ancient browser version, a
	// headless browser.
	Suspect
	// NumClasses is the number of classes.
	NumClasses
)

var classNames = [NumClasses]string{"people", "search", "ai", "tool", "bot", "suspect"}

// String returns the class's name: "people", "search", "ai", "tool",
// "bot" or "suspect" (the names of ParseClass, query -bots and the
// metrics' class label).
func (c Class) String() string {
	if c < NumClasses {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// ParseClass returns the class named s (see String).
func ParseClass(s string) (Class, error) {
	for i, n := range classNames {
		if n == s {
			return Class(i), nil
		}
	}
	return 0, fmt.Errorf("%q: unknown bot class (want search, ai, tool, bot or suspect)", s)
}
