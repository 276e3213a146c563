package redact

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Terminal returns s, a name read from the logs (a site, a page), as it
// may be printed on a terminal: control characters (C0, DEL, C1), which a
// terminal may obey, and Unicode's bidirectional formatting characters,
// which make a line read in another order than it is written, are shown
// escaped as Go writes them (\x1b, \u202e), as are bytes that are not
// UTF-8 (\xff). Everything else is left as it is.
func Terminal(s string) string {
	if strings.IndexFunc(s, unsafeRune) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for j := 0; j < len(s); {
		r, n := utf8.DecodeRuneInString(s[j:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[j])
		case unsafeRune(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[j : j+n])
		}
		j += n
	}
	return b.String()
}

// unsafeRune reports whether r is a control character or a bidirectional
// formatting character.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
