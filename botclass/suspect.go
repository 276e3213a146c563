package botclass

import "bytes"

// The suspect heuristics, tried on a user agent no list matched. Each is
// documented in doc.go with its limits.

// minLength is the length under which a user agent that no list names is
// suspect: the shortest real browser user agents are over 60 bytes; the
// short tools (curl/8.0, Wget/1.21) are in the lists.
const minLength = 10

// Browser versions under which a browser's user agent is suspect (see
// doc.go for why these numbers).
const (
	minChrome  = 70 // Chrome 70: October 2018
	minFirefox = 60 // Firefox 60 ESR: May 2018
	maxOldIE   = 10 // every Internet Explorer but 11
)

// ancientExempt are the devices whose browsers keep old engines for years
// (smart TVs, set-top boxes, consoles): an old version there is normal.
// Matched in any case, by the automaton (rankExempt).
var ancientExempt = []string{
	"smart-tv", "smarttv", "tizen", "web0s", "webos", "netcast", "hbbtv",
	"crkey", "playstation", "nintendo", "xbox", "aftb", "aftm", "aftt",
}

// suspect reports whether ua, which no list matched, looks automated;
// exempt says ua names a device of ancientExempt.
func suspect(ua []byte, exempt bool) bool {
	ua = bytes.TrimSpace(ua)
	switch {
	case len(ua) == 0 || len(ua) == 1 && ua[0] == '-':
		return true // empty, or the log's "-"
	case len(ua) < minLength:
		return true
	case !hasProduct(ua):
		return true // no name/version token at all
	case bytes.HasPrefix(ua, []byte("Mozilla/")) && bytes.IndexByte(ua, '(') < 0:
		return true // "Mozilla/5.0" and nothing else: every browser sends a (platform)
	}
	return !exempt && ancient(ua)
}

// hasProduct reports whether ua holds a product token with a version: a
// letter or digit, "/", a letter or digit (Mozilla/5.0, okhttp/4.9).
func hasProduct(ua []byte) bool {
	for i := 1; i+1 < len(ua); i++ {
		if ua[i] == '/' && isAlnum(ua[i-1]) && isAlnum(ua[i+1]) {
			return true
		}
	}
	return false
}

// ancient reports whether ua is a browser far older than anyone still
// browses with.
func ancient(ua []byte) bool {
	if v, ok := version(ua, "Chrome/"); ok {
		return v < minChrome
	}
	if v, ok := version(ua, "Firefox/"); ok {
		return v < minFirefox
	}
	if v, ok := version(ua, "MSIE "); ok {
		// Compatibility view sends an old MSIE version with the real
		// engine: Trident/7.0 is IE 11 (Outlook and Office send this).
		if t, ok := version(ua, "Trident/"); ok {
			v = t + 4
		}
		return v <= maxOldIE
	}
	return false
}

// version returns the major version after the first tok in ua that does
// not follow a letter or digit ("Chrome/" but not "HeadlessChrome/").
func version(ua []byte, tok string) (int, bool) {
	for off := 0; ; {
		i := bytes.Index(ua[off:], []byte(tok))
		if i < 0 {
			return 0, false
		}
		i += off
		off = i + len(tok)
		if i > 0 && isAlnum(ua[i-1]) {
			continue
		}
		v, n := 0, 0
		for j := off; j < len(ua) && '0' <= ua[j] && ua[j] <= '9' && n < 6; j++ {
			v = v*10 + int(ua[j]-'0')
			n++
		}
		if n == 0 {
			continue
		}
		return v, true
	}
}
