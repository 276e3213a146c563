package parser

import (
	"fmt"
	stdfnv "hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPage(t *testing.T) {
	p := mustNew(t, Config{Format: "combined"})
	for _, tc := range []struct{ path, want string }{
		{"/", "/"},
		{"/a/b", "/a/b"},
		{"/a/b?x=1", "/a/b"},
		{"/a/b#frag", "/a/b"},
		{"/?", "/"},
		{"/a%20b%FF", "/a%20b%FF"}, // percent escapes are kept as logged
		{"/a b", "/a%20b"},
		{"/a\tb\x00\x7f", "/a%09b%00%7F"},
		{"/é", "/é"},
		{"/\xe9", "/%E9"},
		{"/\xc3", "/%C3"},
		{"/\xc3?\xff", "/%C3"},
		{"/\xf0\x9f\x98\x80", "/😀"},
		{"/\xf0\x9f\x98", "/%F0%9F%98"},
		{"/\xc0\xaf", "/%C0%AF"},               // overlong '/'
		{"/\xed\xa0\x80", "/%ED%A0%80"},        // surrogate
		{"/\xf4\x90\x80\x80", "/%F4%90%80%80"}, // above U+10FFFF
		{`/\xF0\x9F\x98\x80`, "/😀"},
		{`/\xf0\x9f\x98\x80`, "/😀"},
		{`/\xF0\x9F` + "\x98\x80", "/😀"}, // half escaped, half raw
		{`/\xC3\xA9\xC3`, "/é%C3"},
		{`/\x2F\x3F`, "//?"}, // an escaped '?' is a path byte, not the query
		{`/\x`, `/\x`},
		{`/\xZZ`, `/\xZZ`},
		{`/\x4`, `/\x4`},
		{`/\`, `/\`},
		{`/\\`, `/\`},
		{`/\"`, `/"`},
		{`/a\b\n\r\t\v`, "/a%08%0A%0D%09%0B"},
		{`/\u00e9`, `/\u00e9`},
		{`/a\x20b`, "/a%20b"},
	} {
		got := p.page([]byte(tc.path))
		if string(got) != tc.want {
			t.Errorf("page(%q) = %q, want %q", tc.path, got, tc.want)
		}
		if !utf8.Valid(got) {
			t.Errorf("page(%q) = %q is not valid UTF-8", tc.path, got)
		}
	}
}

func TestSplitRequest(t *testing.T) {
	for _, tc := range []struct {
		req, method, path string
		ok                bool
	}{
		{"GET /a?b HTTP/1.1", "GET", "/a?b", true},
		{"GET /a b HTTP/1.0", "GET", "/a b", true},
		{"GET /a HTTP/1.1 ", "GET", "/a HTTP/1.1 ", true}, // no protocol word at the end
		{"GET /a", "GET", "/a", true},
		{"M-SEARCH /x HTTP/1.1", "M-SEARCH", "/x", true},
		{"get /x HTTP/1.1", "get", "/x", true},
		{"GET http://h:80/x?y HTTP/1.1", "GET", "/x?y", true},
		{"GET Http://h HTTP/1.1", "GET", "/", true},
		{"GET https://h#x/y HTTP/1.1", "GET", "/", true},
		{"GET https:/h/x HTTP/1.1", "", "", false},
		{"GET //h/x HTTP/1.1", "GET", "//h/x", true},
		{"-", "", "", false},
		{"", "", "", false},
		{" /a HTTP/1.1", "", "", false},
		{"GET", "", "", false},
		{"GET ", "", "", false},
		{"G\\x45T /a HTTP/1.1", "", "", false},
		{"GET\t/a HTTP/1.1", "", "", false},
		{"CONNECT h:443 HTTP/1.1", "", "", false},
		{"OPTIONS * HTTP/1.1", "", "", false},
	} {
		m, path, ok := splitRequest([]byte(tc.req))
		if ok != tc.ok || string(m) != tc.method || string(path) != tc.path {
			t.Errorf("splitRequest(%q) = %q, %q, %v, want %q, %q, %v", tc.req, m, path, ok, tc.method, tc.path, tc.ok)
		}
	}
}

// TestPageLong checks the bound on page length: cut pages are exactly
// MaxPageLen bytes, keep a prefix, end in "~" and the FNV-1a hash of the
// whole page, never merge, and are the same whichever path built them.
func TestPageLong(t *testing.T) {
	const max = 64
	p := mustNew(t, Config{Format: "combined", MaxPageLen: max})
	hashOf := func(s string) string {
		h := stdfnv.New64a()
		h.Write([]byte(s))
		return fmt.Sprintf("~%016x", h.Sum64())
	}

	exact := "/" + strings.Repeat("a", max-1)
	if got := string(p.page([]byte(exact))); got != exact {
		t.Errorf("page of exactly %d bytes changed to %q", max, got)
	}

	long1 := "/" + strings.Repeat("a", 100) + "1"
	long2 := "/" + strings.Repeat("a", 100) + "2"
	got1 := string(p.page([]byte(long1)))
	got2 := string(p.page([]byte(long2 + "?q=1")))
	if want := long1[:max-hashSuffixLen] + hashOf(long1); got1 != want {
		t.Errorf("long page = %q, want %q", got1, want)
	}
	if len(got1) != max || len(got2) != max {
		t.Errorf("long pages of %d and %d bytes, want %d", len(got1), len(got2), max)
	}
	if got1 == got2 {
		t.Errorf("two long pages merged into %q", got1)
	}
	if again := string(p.page([]byte(long1))); again != got1 {
		t.Errorf("same page gave %q then %q", got1, again)
	}

	// The slow path (escapes) gives the same page as the fast path for
	// the same bytes.
	escaped := `/\x61` + long1[2:]
	if got := string(p.page([]byte(escaped))); got != got1 {
		t.Errorf("escaped long page = %q, want %q", got, got1)
	}

	// Cuts fall on rune boundaries: 'é' is two bytes, so the cut backs off
	// one byte when it would split one.
	for _, prefix := range []string{"/", "/x"} {
		path := prefix + strings.Repeat("é", 100)
		got := string(p.page([]byte(path)))
		if !utf8.ValidString(got) || len(got) > max || !strings.HasSuffix(got, hashOf(path)) {
			t.Errorf("page(%q) = %q (%d bytes)", path, got, len(got))
		}
		if kept := strings.TrimSuffix(got, hashOf(path)); !strings.HasPrefix(path, kept) || len(kept) < max-hashSuffixLen-1 {
			t.Errorf("page(%q) kept %q", path, kept)
		}
	}

	// Percent-encoding can make a short path long; the hash covers the
	// encoded page.
	invalid := "/" + strings.Repeat("\xff", 30)
	encoded := "/" + strings.Repeat("%FF", 30)
	if got, want := string(p.page([]byte(invalid))), encoded[:max-hashSuffixLen]+hashOf(encoded); got != want {
		t.Errorf("page(%q) = %q, want %q", invalid, got, want)
	}
}

// allPlain agrees with pathClass on every byte value at every position of
// a word of plain bytes, and on random words (mostly of the bytes near
// the classes' edges).
func TestAllPlain(t *testing.T) {
	want := func(w uint64) bool {
		for i := range 8 {
			if pathClass[byte(w>>(8*i))] != plain {
				return false
			}
		}
		return true
	}
	for pos := range 8 {
		for c := range 256 {
			for _, fill := range []uint64{0x6161616161616161, 0x7e7e7e7e7e7e7e7e, 0x2121212121212121} {
				w := fill&^(0xff<<(8*pos)) | uint64(c)<<(8*pos)
				if allPlain(w) != want(w) {
					t.Fatalf("allPlain(%#016x) = %v, want %v", w, allPlain(w), want(w))
				}
			}
		}
	}
	edges := []byte{0, 0x1f, ' ', '!', '"', '#', '$', '>', '?', '@', '[', '\\', ']', 'a', '~', 0x7f, 0x80, 0xff, '/'}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 1_000_000 {
		var w uint64
		for i := range 8 {
			c := uint64(edges[rng.IntN(len(edges))])
			if rng.IntN(2) == 0 {
				c = uint64(rng.IntN(256))
			}
			w |= c << (8 * i)
		}
		if allPlain(w) != want(w) {
			t.Fatalf("allPlain(%#016x) = %v, want %v", w, allPlain(w), want(w))
		}
	}
}
