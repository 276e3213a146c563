package parser

import "bytes"

// readCLF reads the common log format, with the vhost prefix for
// vhost_combined, and the user agent of combined and vhost_combined.
func (p *Parser) readCLF(line []byte, f *fields) Outcome {
	if p.kind == kindVhost {
		sp := bytes.IndexByte(line, ' ')
		if sp <= 0 {
			return MalformedFields
		}
		f.host = line[:sp]
		line = line[sp+1:]
	}

	// %h: the client address, up to the first space.
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 {
		return MalformedFields
	}
	f.client = line[:sp]
	// %l %u: two fields before " [". The user may hold spaces and '['
	// (not every server escapes it), so the time is the first " [" whose
	// ']' is where a timestamp's would be.
	rest := line[sp+1:]
	open, o := timeOpen(rest)
	if o != OK {
		return o
	}
	if k := bytes.IndexByte(rest[:open-1], ' '); k <= 0 {
		return MalformedFields
	}

	// %t
	rest = rest[open+1:]
	t, ok := p.times.parse(rest[:timeLen])
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
	end := 3 // the usual: three digits and a space
	if len(rest) < 4 || rest[3] != ' ' {
		// (When rest[3] is a space but one of the three is too, the
		// status is not three digits either way.)
		if end = bytes.IndexByte(rest, ' '); end < 0 {
			end = len(rest)
		}
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
	size, end, ok := clfSize(rest)
	if !ok {
		return MalformedFields
	}
	if !p.hitsOnly {
		f.bytes = size
	}
	// What follows %b (combined's referer and user agent, extra fields)
	// is read only for the user agent (combined and vhost_combined: its
	// bot class, user-agent filters) and the referer (Config.Referer); a
	// broken referer or user agent does not make the line malformed: see
	// doc.go.
	if p.bots != nil || len(p.filter.agents) > 0 || p.ref {
		f.ref, f.ua = combinedTail(rest[end:])
	}
	f.time = t
	f.status = status
	f.method = method
	f.path = path
	return OK
}

// timeOpen returns the index in rest (the line after %h and its space)
// of the '[' that opens %t: the first " [" whose ']' is where a
// timestamp's would be. Without one, the Outcome is MalformedTime when
// rest has a " [" (a timestamp not of the layout), else MalformedFields.
func timeOpen(rest []byte) (int, Outcome) {
	if len(rest) > 5+timeLen && string(rest[:5]) == "- - [" && rest[5+timeLen] == ']' {
		return 4, OK // the usual: no identity, no user; the loop would find it first
	}
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

// combinedTail returns the referer and the user agent of ` "referer"
// "user agent"`: the referer nil if there is none (a common line) or it
// is not closed (the user agent is then nil too); the user agent as much
// of it as is there, nil if there is none, empty (not nil) for `""`.
func combinedTail(rest []byte) (ref, ua []byte) {
	if len(rest) >= 6 && string(rest[:6]) == ` "-" "` {
		ref, rest = rest[2:3], rest[4:] // no referer, the usual
	} else {
		if len(rest) < 2 || rest[0] != ' ' || rest[1] != '"' {
			return nil, nil
		}
		rest = rest[2:]
		q := closingQuote(rest)
		if q < 0 {
			return nil, nil
		}
		ref, rest = rest[:q], rest[q+1:]
	}
	if len(rest) < 2 || rest[0] != ' ' || rest[1] != '"' {
		return ref, nil
	}
	rest = rest[2:]
	if q := closingQuote(rest); q >= 0 {
		return ref, rest[:q]
	}
	return ref, rest
}

// clfSize reads %b at the start of rest: the field up to the first space
// (end: its length) must be digits (the size, capped at MaxBytes) or "-"
// (0); ok is false otherwise.
func clfSize(rest []byte) (size uint64, end int, ok bool) {
	var n uint64
	i := 0
	for ; i < len(rest) && rest[i] >= '0' && rest[i] <= '9'; i++ {
		if n <= MaxBytes {
			n = n*10 + uint64(rest[i]-'0')
		}
	}
	if i > 0 && (i == len(rest) || rest[i] == ' ') {
		return min(n, MaxBytes), i, true
	}
	if end = bytes.IndexByte(rest, ' '); end < 0 {
		end = len(rest)
	}
	return 0, end, end == 1 && rest[0] == '-'
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

// isToken reports whether b is an HTTP method token of at most
// maxMethodLen bytes.
func isToken(b []byte) bool {
	if len(b) == 0 || len(b) > maxMethodLen {
		return false
	}
	for _, c := range b {
		if !isTchar[c] {
			return false
		}
	}
	return true
}
