package parser

import (
	"strings"
	"testing"
)

// TestPageHashPinned pins the suffix of cut pages: values computed before
// the hash moved to hash/fnv, and checked against an independent FNV-1a 64.
// Pages are stored in MongoDB: if this test fails, a long page's counts
// split between its old and its new name.
func TestPageHashPinned(t *testing.T) {
	long := "/" + strings.Repeat("abcdefghij", 60) // 601 bytes
	rules := PageConfig{KeepQuery: []string{"q"}, Lowercase: true}
	for _, tc := range []struct {
		name   string
		cfg    Config
		target string
		keep   string // the start of the page kept before the suffix
		suffix string
	}{
		{"fast path", Config{Format: "combined"}, long,
			long[:DefaultMaxPageLen-hashSuffixLen], "~1f9f5c76a58de776"},
		{"fast path, query dropped", Config{Format: "combined"}, long + "?q=1#f",
			long[:DefaultMaxPageLen-hashSuffixLen], "~1f9f5c76a58de776"},
		{"max_length 64", Config{Format: "combined", MaxPageLen: 64}, long,
			long[:64-hashSuffixLen], "~1f9f5c76a58de776"},
		// Escapes, UTF-8 and bytes to percent-encode: the slow path, which
		// keeps MaxPageLen bytes and hashes the rest as it streams.
		{"slow path", Config{Format: "combined"}, `/caf\xC3\xA9/\xFF` + long[1:],
			"/café/%FF" + long[1:DefaultMaxPageLen-hashSuffixLen-len("/café/%FF")+1], "~430ba1ab354baa18"},
		{"rules", Config{Format: "combined", Page: rules}, strings.ToUpper(long),
			long[:DefaultMaxPageLen-hashSuffixLen], "~1f9f5c76a58de776"},
		{"rules, kept query", Config{Format: "combined", Page: rules}, "/a?q=" + long[1:],
			"/a?q=" + long[1:DefaultMaxPageLen-hashSuffixLen-len("/a?q=")+1], "~966e3bf82dc8a570"},
		// Longer than the rules' buffer (4 KiB): hashed as it streams.
		{"rules, over 4 KiB", Config{Format: "combined", Page: rules}, "/" + strings.Repeat("É", 3000),
			"/" + strings.Repeat("É", (DefaultMaxPageLen-hashSuffixLen-1)/2), "~768b0eec58d4eade"},
	} {
		p := mustNew(t, tc.cfg)
		var h Hit
		if o := p.Parse(reqLine(tc.target), &h); o != OK {
			t.Fatalf("%s: %v", tc.name, o)
		}
		if got, want := string(h.Page), tc.keep+tc.suffix; got != want {
			t.Errorf("%s: page\n%q\nwant\n%q", tc.name, got, want)
		}
	}
}
