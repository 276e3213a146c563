package parser

import (
	stdfnv "hash/fnv"
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
		if raceEnabled {
			continue
		}
		line := reqLine(tc.target)
		if n := testing.AllocsPerRun(20, func() { p.Parse(line, &h) }); n != 0 {
			t.Errorf("%s: %v allocs per line", tc.name, n)
		}
	}
}

// TestPageWriterSum checks pageWriter's hash against hash/fnv over the
// whole input, for every mix of byte and write calls around the point
// where the input overflows buf and around the tail's size.
func TestPageWriterSum(t *testing.T) {
	data := []byte(strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyz", 10))
	for _, capacity := range []int{0, 1, 17, 64, 100, len(data) - 1, len(data), len(data) + 1} {
		for _, split := range []int{0, 1, 2, 63, 64, 65, 129} {
			for _, bytewise := range []bool{false, true} {
				w := pageWriter{buf: make([]byte, 0, capacity)}
				for i := 0; i < len(data); {
					end := min(i+max(split, 1), len(data))
					if bytewise && i%2 == 0 {
						for _, c := range data[i:end] {
							w.byte(c)
						}
					} else {
						w.write(data[i:end])
					}
					i = end
				}
				want := stdfnv.New64a()
				want.Write(data)
				if got := w.sum(); got != want.Sum64() || w.n != len(data) || string(w.buf) != string(data[:min(capacity, len(data))]) {
					t.Errorf("cap %d, split %d, bytewise %v: sum %x, n %d, kept %d; want %x, %d", capacity, split, bytewise, got, w.n, len(w.buf), want.Sum64(), len(data))
				}
			}
		}
	}
}
