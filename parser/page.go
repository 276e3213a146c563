package parser

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"

	"github.com/logtally/logtally/fnv1a"
)

// maxMethodLen bounds the method token; longer ones are not HTTP methods
// anyone logs on purpose.
const maxMethodLen = 32

// hashSuffixLen is the length of the suffix of a cut page: "~" and 16 hex
// digits of the 64-bit FNV-1a hash of the whole page.
const hashSuffixLen = 1 + 16

// Other is the page the hits of a site's pages past
// PageConfig.MaxPagesPerMinute in a minute are counted under (the
// aggregator applies the bound, in line order). It does not start with
// '/', so it never merges with a page Parse gives.
var Other = []byte("(other)")

// root is the page of a target without a path ("http://host").
var root = []byte("/")

// Byte classes of a target's path, for the page scan.
const (
	plain   = iota // copied as is
	stop           // '?' or '#': the page ends here
	special        // log escape, space, control or non-ASCII: slow path
)

var pathClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c == '?' || c == '#':
			t[c] = stop
		case c <= ' ' || c == '\\' || c >= 0x7f:
			t[c] = special
		}
	}
	return t
}()

// allPlain reports whether the 8 bytes of w are all of class plain: none
// is a control, a space, '\\', 0x7f or above, '?' or '#'. Each test
// below is exact about whether some byte passes it (a borrow or carry
// only disturbs the bytes after one that does).
func allPlain(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	low := (w - ones*0x21) & ^w & highs // a byte below 0x21
	high := (w + ones) | w              // bit 7: a byte of 0x7f or above
	return (low|high&highs|zero(w^ones*'?')|zero(w^ones*'#')|zero(w^ones*'\\'))&highs == 0
}

// isTchar reports whether c is an RFC 9110 token character.
var isTchar = func() (t [256]bool) {
	for c := range t {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			t[c] = true
		case bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), byte(c)) >= 0:
			t[c] = true
		}
	}
	return t
}()

// splitRequest splits a request line as logged (still escaped) into its
// method and path: the target reduced from absolute form, starting with
// '/', query and fragment not yet removed. ok is false for "-", empty
// lines, binary garbage and targets that are not paths.
//
// The protocol is the last space-separated word if it starts with "HTTP/";
// the target is everything between the method and the protocol (so a
// target with a space, which servers log for the 400 they answer, is kept
// whole). Without a protocol (HTTP/0.9) the target runs to the end.
func splitRequest(req []byte) (method, path []byte, ok bool) {
	// The method: token characters up to the first space.
	sp := 0
	for sp < len(req) && sp <= maxMethodLen && isTchar[req[sp]] {
		sp++
	}
	if sp == 0 || sp > maxMethodLen || sp == len(req) || req[sp] != ' ' {
		return nil, nil, false
	}
	method = req[:sp]
	target := req[sp+1:]
	if n := len(target); n >= 9 && target[n-9] == ' ' && string(target[n-8:n-3]) == "HTTP/" &&
		target[n-3] != ' ' && target[n-2] != ' ' && target[n-1] != ' ' {
		target = target[:n-9] // the usual "HTTP/1.1": its space is the last
	} else if i := bytes.LastIndexByte(target, ' '); i >= 0 && bytes.HasPrefix(target[i+1:], []byte("HTTP/")) {
		target = target[:i]
	}
	path, ok = targetPath(target)
	if !ok {
		return nil, nil, false
	}
	return method, path, true
}

// targetPath reduces a request target from absolute form and checks that
// it is a path.
func targetPath(target []byte) ([]byte, bool) {
	target = reduceAbsolute(target)
	if len(target) == 0 || target[0] != '/' {
		return nil, false
	}
	return target, true
}

// reduceAbsolute returns the path of an absolute-form target
// ("http://host/a?b" → "/a?b", "http://host" → "/"); other targets are
// returned unchanged.
func reduceAbsolute(t []byte) []byte {
	var n int
	switch {
	case hasPrefixFold(t, "http://"):
		n = len("http://")
	case hasPrefixFold(t, "https://"):
		n = len("https://")
	default:
		return t
	}
	for i, c := range t[n:] {
		switch c {
		case '/':
			return t[n+i:]
		case '?', '#':
			return root
		}
	}
	return root
}

// hasPrefixFold reports whether s starts with the lowercase ASCII prefix,
// ignoring the case of letters in s.
func hasPrefixFold(s []byte, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// page returns the page of path (which starts with '/'): the path up to
// the first '?' or '#', with log escapes undone, invalid UTF-8, controls
// and spaces percent-encoded, and bounded to p.maxPageLen bytes. The result
// points into path or into p.scratch.
func (p *Parser) page(path []byte) []byte {
	i := 0
	for i+8 <= len(path) && allPlain(binary.LittleEndian.Uint64(path[i:])) {
		i += 8
	}
	for i < len(path) && pathClass[path[i]] == plain {
		i++
	}
	if i == len(path) || pathClass[path[i]] == stop {
		pg := path[:i]
		if len(pg) <= p.maxPageLen {
			return pg
		}
		cut := p.maxPageLen - hashSuffixLen
		return appendHashSuffix(append(p.scratch[:0], pg[:cut]...), fnv1a.Extend(fnv1a.Offset, pg))
	}
	end := i
	for end < len(path) && pathClass[path[end]] != stop {
		end++
	}
	return p.slowPage(path[:end])
}

// slowPage builds the page of src, a path without query that has at least
// one byte of class special, into p.scratch. It streams: the output is
// hashed whole but only its first p.maxPageLen bytes are kept, so the
// scratch space never grows whatever the line.
func (p *Parser) slowPage(src []byte) []byte {
	w := pageWriter{buf: p.scratch[:0]}
	p.decode(&w, src, false)
	return p.bound(&w)
}

// decode writes src to w with log escapes undone (when the format has
// them), invalid UTF-8, controls and spaces percent-encoded, and ASCII
// letters lowercased if lower.
func (p *Parser) decode(w *pageWriter, src []byte, lower bool) {
	for i := 0; i < len(src); {
		c := src[i]
		if c > ' ' && c < 0x7f && c != '\\' {
			if lower && c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			w.byte(c)
			i++
			continue
		}
		next := i + 1
		if p.logEsc {
			c, next = unescape(src, i)
		}
		if c < utf8.RuneSelf {
			switch {
			case c <= ' ' || c == 0x7f:
				w.percent(c)
			case lower && c >= 'A' && c <= 'Z':
				w.byte(c + 'a' - 'A')
			default:
				w.byte(c)
			}
			i = next
			continue
		}
		// Gather the decoded bytes that may complete this rune.
		var r [utf8.UTFMax]byte
		var ends [utf8.UTFMax]int
		r[0], ends[0] = c, next
		n := 1
		for j := next; n < utf8.UTFMax && j < len(src); n++ {
			if p.logEsc {
				r[n], j = unescape(src, j)
			} else {
				r[n], j = src[j], j+1
			}
			ends[n] = j
		}
		if _, size := utf8.DecodeRune(r[:n]); size > 1 {
			for _, b := range r[:size] {
				w.byte(b)
			}
			i = ends[size-1]
			continue
		}
		w.percent(c)
		i = next
	}
}

// bound returns what w holds if it is at most p.maxPageLen bytes, or else
// its start cut on a rune boundary and suffixed with the hash of all of
// it. cap(w.buf) must be at least p.maxPageLen.
func (p *Parser) bound(w *pageWriter) []byte {
	if w.n <= p.maxPageLen {
		return w.buf[:w.n]
	}
	h := w.sum() // before the suffix overwrites the bytes after the cut
	cut := p.maxPageLen - hashSuffixLen
	for cut > 0 && w.buf[cut]&0xC0 == 0x80 {
		cut--
	}
	return appendHashSuffix(w.buf[:cut], h)
}

// unescape decodes the byte at src[i], undoing the escapes Apache and nginx
// write in quoted fields: \" \\ \xHH (both) and \b \n \r \t \v (Apache).
// Any other backslash stands for itself. It returns the byte and the index
// after it.
func unescape(src []byte, i int) (byte, int) {
	c := src[i]
	if c != '\\' || i+1 == len(src) {
		return c, i + 1
	}
	switch src[i+1] {
	case '\\', '"':
		return src[i+1], i + 2
	case 'b':
		return '\b', i + 2
	case 'n':
		return '\n', i + 2
	case 'r':
		return '\r', i + 2
	case 't':
		return '\t', i + 2
	case 'v':
		return '\v', i + 2
	case 'x':
		if i+3 < len(src) {
			hi, lo := unhex(src[i+2]), unhex(src[i+3])
			if hi < 16 && lo < 16 {
				return hi<<4 | lo, i + 4
			}
		}
	}
	return c, i + 1
}

// unhex returns the value of a hex digit, or 16 if c is not one.
func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 16
}

const hexDigits = "0123456789ABCDEF"

// pageWriter collects a page's bytes into buf up to its capacity while
// counting all of them, and hashes them only once they overflow buf (a
// page longer than cap(buf), which is rare).
type pageWriter struct {
	buf  []byte
	n    int      // bytes written, kept or not
	h    uint64   // once n > cap(buf): FNV-1a 64 of buf and the overflow before tail
	tail [64]byte // overflow bytes not yet in h
	nt   int      // bytes in tail
}

func (w *pageWriter) byte(c byte) {
	if len(w.buf) < cap(w.buf) {
		w.buf = append(w.buf, c)
		w.n++
		return
	}
	w.spillByte(c)
}

func (w *pageWriter) write(b []byte) {
	if len(b) > cap(w.buf)-len(w.buf) {
		w.spill(b)
		return
	}
	w.buf = append(w.buf, b...)
	w.n += len(b)
}

// spillByte hashes c, a byte past cap(w.buf), through w.tail.
func (w *pageWriter) spillByte(c byte) {
	if w.n == cap(w.buf) {
		w.h = fnv1a.Extend(fnv1a.Offset, w.buf)
	}
	w.n++
	w.tail[w.nt] = c
	if w.nt++; w.nt == len(w.tail) {
		w.h, w.nt = fnv1a.Extend(w.h, w.tail[:]), 0
	}
}

// spill keeps what fits of b and hashes the rest through w.tail.
func (w *pageWriter) spill(b []byte) {
	n := cap(w.buf) - len(w.buf)
	w.buf = append(w.buf, b[:n]...)
	w.n += n
	if w.n == cap(w.buf) {
		w.h = fnv1a.Extend(fnv1a.Offset, w.buf)
	}
	w.n += len(b) - n
	w.h, w.nt = fnv1a.Extend(fnv1a.Extend(w.h, w.tail[:w.nt]), b[n:]), 0
}

// sum returns the FNV-1a 64 hash of all the bytes written.
func (w *pageWriter) sum() uint64 {
	if w.n <= cap(w.buf) {
		return fnv1a.Extend(fnv1a.Offset, w.buf)
	}
	return fnv1a.Extend(w.h, w.tail[:w.nt])
}

func (w *pageWriter) percent(c byte) {
	w.byte('%')
	w.byte(hexDigits[c>>4])
	w.byte(hexDigits[c&15])
}

// appendHashSuffix appends "~" and h as 16 lowercase hex digits.
func appendHashSuffix(b []byte, h uint64) []byte {
	const lower = "0123456789abcdef"
	b = append(b, '~')
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, lower[h>>uint(shift)&15])
	}
	return b
}
