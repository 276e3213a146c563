package query

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Shown returns name (a page: text from the logs) as the table, the chart
// and the dashboard show it: every character that would make it look like
// another name, or hide part of it, written visibly as an escape. That is
// every rune that is not graphic (Unicode's controls, C1 included; format
// characters: the bidirectional controls U+202A–U+202E, U+2066–U+2069,
// U+200E, U+200F, U+061C, which make "/\u202etxt.exe" show as
// "/exe.txt", zero-width characters, soft hyphen, byte order mark, tags;
// line and paragraph separators; private use; unassigned), every space
// but ' ' (U+00A0 looks like one), and the Hangul fillers, letters that
// show nothing, as \uXXXX (\UXXXXXXXX beyond the BMP, lowercase hex);
// a byte that is not UTF-8 as \xHH. Any other name is returned as it is.
// The form is for people: a literal "\u202e" in a name shows the same,
// and CSV and JSON keep names as they are.
func Shown(name string) string {
	i := 0
	for i < len(name) {
		r, n := utf8.DecodeRuneInString(name[i:])
		if (r == utf8.RuneError && n == 1) || hidden(r) {
			break
		}
		i += n
	}
	if i == len(name) {
		return name
	}
	var b strings.Builder
	b.Grow(len(name) + 16)
	b.WriteString(name[:i])
	for i < len(name) {
		r, n := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			writeHex(&b, uint32(name[i]), 2)
		case hidden(r) && r <= 0xffff:
			b.WriteString(`\u`)
			writeHex(&b, uint32(r), 4)
		case hidden(r):
			b.WriteString(`\U`)
			writeHex(&b, uint32(r), 8)
		default:
			b.WriteString(name[i : i+n])
		}
		i += n
	}
	return b.String()
}

// hidden reports whether Shown escapes r.
func hidden(r rune) bool {
	switch {
	case r == ' ':
		return false
	case r < utf8.RuneSelf:
		return r < ' ' || r == 0x7f
	case r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0: // Hangul fillers
		return true
	}
	return !unicode.IsGraphic(r) || unicode.Is(unicode.Zs, r)
}

func writeHex(b *strings.Builder, v uint32, digits int) {
	s := strconv.FormatUint(uint64(v), 16)
	for range digits - len(s) {
		b.WriteByte('0')
	}
	b.WriteString(s)
}
