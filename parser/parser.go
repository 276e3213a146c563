package parser

import (
	"bytes"
	"errors"
	"fmt"
)

// DefaultMaxPageLen is the page length bound used when Config.MaxPageLen
// is 0.
const DefaultMaxPageLen = 512

// MinMaxPageLen is the smallest accepted Config.MaxPageLen: a cut page
// keeps at least 15 bytes of the path before its hash suffix.
const MinMaxPageLen = 32

// Hit is one parsed request. Its slices point into the line, into the
// Parser's scratch space or into the Parser's configuration; they are valid
// until the next Parse call on the same Parser and must not be modified.
// Copy what you keep.
type Hit struct {
	// Site is the configured site name.
	Site []byte
	// Page is the request path without query or fragment: never empty,
	// starts with '/', valid UTF-8, at most MaxPageLen bytes.
	Page []byte
	// Time is the request time in Unix seconds (UTC).
	Time int64
	// Status is the HTTP status, 100..599.
	Status int
	// Method is the request method as logged, an HTTP token.
	Method []byte
}

// Config configures a Parser. The zero value of each optional field means
// its default.
type Config struct {
	// Format is the log format: "combined" or "common" (the Apache and
	// nginx defaults). Both read the common fields and ignore the rest of
	// the line, so each accepts the other's lines.
	Format string
	// Site is the site name every hit of this source gets. Required.
	Site string
	// MaxPageLen bounds pages in bytes (default DefaultMaxPageLen, at
	// least MinMaxPageLen). Longer pages are cut on a UTF-8 boundary and
	// suffixed with "~" and 16 hex digits of a hash of the whole page, so
	// two long pages never merge; the result is at most MaxPageLen bytes.
	MaxPageLen int
}

// Parser turns access-log lines into hits. It keeps scratch space, so one
// Parser must not be used by several goroutines at once; make one per
// goroutine (they are cheap).
type Parser struct {
	site       []byte
	maxPageLen int
	scratch    []byte // page output, capacity maxPageLen
}

// New returns a Parser for cfg, or an error if cfg is invalid.
func New(cfg Config) (*Parser, error) {
	p := &Parser{site: []byte(cfg.Site), maxPageLen: cfg.MaxPageLen}
	switch cfg.Format {
	case "combined", "common":
		// The same parser for now: see doc.go. Issue 3's formats
		// (vhost_combined, nginx log_format, json, regex) select theirs here.
	case "":
		return nil, errors.New("parser: log format is empty (want combined or common)")
	default:
		return nil, fmt.Errorf("parser: unknown log format %q (want combined or common)", cfg.Format)
	}
	if cfg.Site == "" {
		return nil, errors.New("parser: site is empty")
	}
	switch {
	case p.maxPageLen == 0:
		p.maxPageLen = DefaultMaxPageLen
	case p.maxPageLen < MinMaxPageLen:
		return nil, fmt.Errorf("parser: max page length %d is below the minimum %d", cfg.MaxPageLen, MinMaxPageLen)
	}
	p.scratch = make([]byte, 0, p.maxPageLen)
	return p, nil
}

// Parse parses one line, without its "\n" (a trailing "\n" and then "\r"
// are stripped if present). On OK it fills h; otherwise it sets h to the
// zero Hit and the Outcome says why. Parse never allocates and never
// panics, whatever the bytes.
//
// The line starts with "%h %l %u %t \"%r\" %>s %b"; anything after %b
// and a space (combined's referer and user agent, further fields) is
// ignored.
func (p *Parser) Parse(line []byte, h *Hit) Outcome {
	o := p.parse(line, h)
	if o != OK {
		*h = Hit{}
	}
	return o
}

func (p *Parser) parse(line []byte, h *Hit) Outcome {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if isBlank(line) {
		return MalformedEmpty
	}

	// %h: the client address, up to the first space.
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 {
		return MalformedFields
	}
	// %l %u: two fields before " [". The user may hold spaces and '['
	// (not every server escapes it), so the time is the first " [" whose
	// ']' is where a timestamp's would be.
	rest := line[sp+1:]
	open, bracket := -1, false
	for off := 0; open < 0; {
		i := bytes.IndexByte(rest[off:], '[')
		if i < 0 {
			if bracket {
				return MalformedTime
			}
			return MalformedFields
		}
		i += off
		if i > 0 && rest[i-1] == ' ' {
			bracket = true
			if i+1+timeLen < len(rest) && rest[i+1+timeLen] == ']' {
				open = i
			}
		}
		off = i + 1
	}
	if k := bytes.IndexByte(rest[:open-1], ' '); k <= 0 {
		return MalformedFields
	}

	// %t
	rest = rest[open+1:]
	t, ok := parseTime(rest[:timeLen])
	if !ok {
		return MalformedTime
	}
	rest = rest[timeLen+1:]

	// "%r"
	if len(rest) < 2 || rest[0] != ' ' || rest[1] != '"' {
		return MalformedFields
	}
	rest = rest[2:]
	q := closingQuote(rest)
	if q < 0 {
		return MalformedFields
	}
	method, path, ok := splitRequest(rest[:q])
	if !ok {
		return MalformedRequest
	}
	rest = rest[q+1:]

	// %>s
	if len(rest) == 0 || rest[0] != ' ' {
		return MalformedFields
	}
	rest = rest[1:]
	end := bytes.IndexByte(rest, ' ')
	if end < 0 {
		end = len(rest)
	}
	status, ok := parseStatus(rest[:end])
	if !ok {
		return MalformedStatus
	}
	if end == len(rest) {
		return MalformedFields // no %b
	}

	// %b
	rest = rest[end+1:]
	end = bytes.IndexByte(rest, ' ')
	if end < 0 {
		end = len(rest)
	}
	if !isSize(rest[:end]) {
		return MalformedFields
	}
	// Whatever follows %b (combined's referer and user agent, extra
	// fields) does not change the hit, so it is not read: see doc.go.

	h.Site = p.site
	h.Page = p.page(path)
	h.Time = t
	h.Status = status
	h.Method = method
	return OK
}

// isBlank reports whether line holds only spaces and tabs.
func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// closingQuote returns the index of the first '"' in s that is not escaped
// by a backslash (Apache writes \" and \\ inside quoted fields), or -1.
func closingQuote(s []byte) int {
	for off := 0; ; {
		i := bytes.IndexByte(s[off:], '"')
		if i < 0 {
			return -1
		}
		i += off
		n := 0
		for j := i - 1; j >= off && s[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return i
		}
		off = i + 1
	}
}

// parseStatus parses a three-digit status in 100..599.
func parseStatus(b []byte) (int, bool) {
	if len(b) != 3 {
		return 0, false
	}
	d0, d1, d2 := b[0]-'0', b[1]-'0', b[2]-'0'
	if d0 < 1 || d0 > 5 || d1 > 9 || d2 > 9 {
		return 0, false
	}
	return int(d0)*100 + int(d1)*10 + int(d2), true
}

// isSize reports whether b is a response size: digits, or "-" for none.
func isSize(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if len(b) == 1 && b[0] == '-' {
		return true
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
