package parser

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// refTail is what readCLF read after the request before its fast paths
// (the status up to the first space, the size up to the next, validated
// then converted, the referer always scanned for its closing quote): the
// reference TestCLFTailFastPaths compares Parse with.
func refTail(rest []byte) (status int, size uint64, ua []byte, o Outcome) {
	if len(rest) == 0 || rest[0] != ' ' {
		return 0, 0, nil, MalformedFields
	}
	rest = rest[1:]
	end := bytes.IndexByte(rest, ' ')
	if end < 0 {
		end = len(rest)
	}
	status, ok := parseStatus(rest[:end])
	if !ok {
		return 0, 0, nil, MalformedStatus
	}
	if end == len(rest) {
		return 0, 0, nil, MalformedFields
	}
	rest = rest[end+1:]
	end = bytes.IndexByte(rest, ' ')
	if end < 0 {
		end = len(rest)
	}
	sz := rest[:end]
	isSize := len(sz) == 1 && sz[0] == '-'
	if !isSize && len(sz) > 0 {
		isSize = true
		for _, c := range sz {
			isSize = isSize && c >= '0' && c <= '9'
		}
	}
	if !isSize {
		return 0, 0, nil, MalformedFields
	}
	return status, sizeOf(sz), refUA(rest[end:]), OK
}

func refUA(rest []byte) []byte {
	if len(rest) < 2 || rest[0] != ' ' || rest[1] != '"' {
		return nil
	}
	rest = rest[2:]
	q := closingQuote(rest)
	if q < 0 {
		return nil
	}
	rest = rest[q+1:]
	if len(rest) < 2 || rest[0] != ' ' || rest[1] != '"' {
		return nil
	}
	rest = rest[2:]
	if q := closingQuote(rest); q >= 0 {
		return rest[:q]
	}
	return rest
}

// Parse reads the status, the size and the user agent of combined lines
// as readCLF did before its fast paths (three digits and a space, a size
// read in one pass, no referer): on tails built from the bytes those
// paths look at (digits, '-', spaces, quotes, backslashes), and on
// realistic ones.
func TestCLFTailFastPaths(t *testing.T) {
	p := mustNew(t, Config{Format: "combined"})
	const head = `1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1"`
	pieces := []string{"200", "404", "20", "2000", "099", "600", " ", "  ", "-", "--", "0", "123", "18446744073709551616",
		"1125899906842625", `"`, `"-"`, `""`, `\"`, `\\`, "a", `"Mozilla/5.0"`, `"-" "UA"`, "\t"}
	rng := rand.New(rand.NewPCG(9, 10))
	tails := []string{` 200 123 "-" "Mozilla/5.0"`, ` 200 - "-" "UA"`, ` 304 0 "http://r/" "UA x"`, ` 200 5`, ` 200 5 "-"`,
		` 200 5 "-" "`, ` 200 5 "-" "a\"b"`, ` 200 5 "-""UA"`, ` 200 5 "-"  "UA"`, ` 200 12 "-" ""`, ` 200 1-`, ` 200 -1`}
	for range 200_000 {
		var b []byte
		for range rng.IntN(7) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
			if rng.IntN(2) == 0 {
				b = append(b, ' ')
			}
		}
		tails = append(tails, string(b))
	}
	var h Hit
	for _, tail := range tails {
		line := []byte(head + tail)
		h = Hit{} // Parse leaves UA as it was when the line has none
		o := p.Parse(line, &h)
		st, size, ua, want := refTail([]byte(tail))
		if o != want {
			t.Fatalf("Parse(%q) = %v, want %v", line, o, want)
		}
		if o == OK && (h.Status != st || h.Bytes != size || !bytes.Equal(h.UA, ua) || (h.UA == nil) != (ua == nil)) {
			t.Fatalf("Parse(%q): status %d bytes %d user agent %q, want %d %d %q", line, h.Status, h.Bytes, h.UA, st, size, ua)
		}
	}
}

// refTimeOpen is timeOpen without its fast path: the loop readCLF had.
func refTimeOpen(rest []byte) (int, Outcome) {
	bracket := false
	for off := 0; ; {
		i := bytes.IndexByte(rest[off:], '[')
		if i < 0 {
			if bracket {
				return -1, MalformedTime
			}
			return -1, MalformedFields
		}
		i += off
		if i > 0 && rest[i-1] == ' ' {
			bracket = true
			if i+1+timeLen < len(rest) && rest[i+1+timeLen] == ']' {
				return i, OK
			}
		}
		off = i + 1
	}
}

// refSplitRequest is splitRequest as it was before its fast paths (the
// method up to the first space, then checked; the protocol after the last
// space).
func refSplitRequest(req []byte) (method, path []byte, ok bool) {
	sp := bytes.IndexByte(req, ' ')
	if sp <= 0 || sp > maxMethodLen {
		return nil, nil, false
	}
	method = req[:sp]
	for _, c := range method {
		if !isTchar[c] {
			return nil, nil, false
		}
	}
	target := req[sp+1:]
	if i := bytes.LastIndexByte(target, ' '); i >= 0 && bytes.HasPrefix(target[i+1:], []byte("HTTP/")) {
		target = target[:i]
	}
	path, ok = targetPath(target)
	if !ok {
		return nil, nil, false
	}
	return method, path, true
}

// timeOpen and splitRequest find what the code before their fast paths
// found, on strings built from the bytes those paths look at.
func TestTimeOpenAndSplitRequestFastPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	build := func(pieces []string, n int) []byte {
		var b []byte
		for range rng.IntN(n) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		return b
	}
	stamp := "[10/Oct/2000:13:55:36 -0700]"
	heads := []string{"-", " ", "[", "]", "a", "- - ", "- - [", stamp, stamp[1:], stamp[:27], "- ", "x y ", `"`}
	for _, r := range [][]byte{[]byte("- - " + stamp + ` "GET`), []byte("- - " + stamp), []byte("- - " + stamp[:27])} {
		o1, out1 := timeOpen(r)
		o2, out2 := refTimeOpen(r)
		if o1 != o2 || out1 != out2 {
			t.Fatalf("timeOpen(%q) = %d, %v; before: %d, %v", r, o1, out1, o2, out2)
		}
	}
	for range 300_000 {
		r := build(heads, 6)
		o1, out1 := timeOpen(r)
		o2, out2 := refTimeOpen(r)
		if o1 != o2 || out1 != out2 {
			t.Fatalf("timeOpen(%q) = %d, %v; before: %d, %v", r, o1, out1, o2, out2)
		}
	}
	reqs := []string{"GET", "POST", "G", " ", "  ", "/", "/a", "HTTP/", "HTTP/1.1", "HTTP/1. ", "HTTP/ 1", "1.1", "x", "(",
		"http://h", "?q", strings.Repeat("M", maxMethodLen-2), "\t", "é"}
	reqs = append(reqs, "GET / HTTP/1.1", "GET /a HTTP/1.1 HTTP/1.1", "GET /a b HTTP/2.0", "GET /a HTTP/1. ", "GET HTTP/1.1",
		strings.Repeat("M", maxMethodLen)+" / HTTP/1.1", strings.Repeat("M", maxMethodLen+1)+" / HTTP/1.1") // whole, first
	for k := range 500_000 {
		r := build(reqs, 7)
		if k < 7 {
			r = []byte(reqs[len(reqs)-7+k])
		}
		m1, p1, ok1 := splitRequest(r)
		m2, p2, ok2 := refSplitRequest(r)
		if ok1 != ok2 || !bytes.Equal(m1, m2) || !bytes.Equal(p1, p2) {
			t.Fatalf("splitRequest(%q) = %q, %q, %v; before: %q, %q, %v", r, m1, p1, ok1, m2, p2, ok2)
		}
	}
}
