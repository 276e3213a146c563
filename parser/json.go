package parser

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// The fields a JSON line is read for.
const (
	jTime = iota
	jURI
	jRequest
	jMethod
	jStatus
	jHost
	jUA
	jBytes
	jRT
	jUpstream
	jClient
	jXFF
	jRef
	numJSON
)

// jMeasures is the first of the fields read for a measure, the client or
// the referer only: they are not unescaped with the others (the client
// and the referer are, bounded: stringField), and a bad value does not
// lose the hit.
const jMeasures = jBytes

// maxJSONDepth bounds the nesting of objects read; deeper lines are
// malformed. maxJSONPath bounds a dotted field name.
const (
	maxJSONDepth = 16
	maxJSONPath  = 256
)

// jsonFormat reads one JSON object per line.
type jsonFormat struct {
	names  [numJSON]string
	layout timeLayout
	scale  int // TimeUnit as a power of ten of microseconds

	vals [numJSON]jsonVal
	bufs [numJSON][]byte // decoded strings, reused
	path []byte          // dotted name of the current field, capacity maxJSONPath
	line []byte
}

type jsonVal struct {
	raw []byte // string contents (still escaped) or the scalar token
	str bool
	esc bool // raw holds backslash escapes
	set bool
}

// newJSONFormat reads the fields c names; the X-Forwarded-For field only
// with xff (Config.Client ClientForwardedFor), the referer only with ref
// (Config.Referer).
func newJSONFormat(c JSONFields, layout string, xff, ref bool) (*jsonFormat, error) {
	j := &jsonFormat{path: make([]byte, 0, maxJSONPath)}
	for i, v := range []struct{ name, def string }{
		jTime: {c.Time, "time"}, jURI: {c.URI, "request_uri"}, jRequest: {c.Request, "request"},
		jMethod: {c.Method, "request_method"}, jStatus: {c.Status, "status"}, jHost: {c.Host, "host"},
		jUA: {c.UserAgent, "http_user_agent"}, jBytes: {c.Bytes, "body_bytes_sent"},
		jRT: {c.RequestTime, "request_time"}, jUpstream: {c.UpstreamResponseTime, "upstream_response_time"},
		jClient: {c.Client, "remote_addr"}, jXFF: {c.ForwardedFor, "http_x_forwarded_for"},
		jRef: {c.Referer, "http_referer"},
	} {
		if i == jXFF && !xff || i == jRef && !ref {
			continue // names[k] "": matches no field
		}
		j.names[i] = v.def
		if v.name != "" {
			j.names[i] = v.name
		}
	}
	l, err := parseTimeLayout(layout, "rfc3339")
	if err != nil {
		return nil, &ConfigError{Field: "time_layout", Problem: err.Error()}
	}
	j.layout = l
	unit := c.TimeUnit
	if unit == "" {
		unit = "s"
	}
	scale, ok := timeUnits[unit]
	if !ok {
		return nil, &ConfigError{Field: "json.time_unit", Problem: fmt.Sprintf("%q: must be s, ms, us or ns", c.TimeUnit)}
	}
	j.scale = scale
	return j, nil
}

// read scans the object and reads the configured fields.
func (j *jsonFormat) read(line []byte, f *fields) Outcome {
	j.vals = [numJSON]jsonVal{}
	j.path = j.path[:0]
	j.line = line
	i := skipWS(line, 0)
	if i == len(line) || line[i] != '{' {
		return MalformedFields
	}
	i, ok := j.object(i, 0)
	if !ok || skipWS(line, i) != len(line) {
		return MalformedFields
	}
	var str [numJSON][]byte
	for k := range j.vals[:jMeasures] {
		v := &j.vals[k]
		if !v.set {
			continue
		}
		if !v.esc {
			str[k] = v.raw
			continue
		}
		b, ok := jsonUnescape(j.bufs[k][:0], v.raw)
		j.bufs[k] = b
		if !ok {
			return MalformedFields
		}
		str[k] = b
	}
	t, ok := j.layout.parse(str[jTime])
	if !ok {
		return MalformedTime
	}
	switch {
	case j.vals[jURI].set && j.vals[jURI].str:
		path, ok := targetPath(str[jURI])
		if !ok {
			return MalformedRequest
		}
		f.path = path
	case j.vals[jRequest].set && j.vals[jRequest].str:
		method, path, ok := splitRequest(str[jRequest])
		if !ok {
			return MalformedRequest
		}
		f.method, f.path = method, path
	default:
		return MalformedRequest
	}
	if m := str[jMethod]; j.vals[jMethod].str {
		if !isToken(m) {
			return MalformedRequest
		}
		f.method = m
	}
	st, ok := parseStatus(str[jStatus])
	if !ok {
		return MalformedStatus
	}
	f.time, f.status = t, st
	if j.vals[jHost].str {
		f.host = str[jHost]
	}
	if j.vals[jUA].str {
		f.ua = str[jUA]
	}
	f.bytes = sizeOf(j.number(jBytes))
	if v := j.number(jRT); v != nil {
		f.rt = rtOf(v, j.scale)
	}
	if v := j.number(jUpstream); f.rt == NoRT && v != nil {
		f.rt = sumDurations(v, j.scale)
	}
	f.client = j.stringField(jClient, false, maxClientLen)
	f.xff = j.stringField(jXFF, true, maxClientLen)
	f.ref = j.stringField(jRef, false, MaxRefererLen)
	return OK
}

// stringField returns the string value of field k (with list the
// leftmost element of its list), unescaped into j.bufs[k]; nil when the
// field is absent or not a string, or when its escapes are bad or make it
// longer than 6 × limit before decoding (it could only decode to more
// than limit bytes: the buffer stays bounded; a referer, cut to limit
// after, is then lost, not the hit).
func (j *jsonFormat) stringField(k int, list bool, limit int) []byte {
	v := &j.vals[k]
	if !v.set || !v.str {
		return nil
	}
	raw := v.raw
	if list {
		raw = leftmost(raw)
	}
	if !v.esc {
		return raw
	}
	if len(raw) > 6*limit {
		return nil
	}
	b, ok := jsonUnescape(j.bufs[k][:0], raw)
	j.bufs[k] = b
	if !ok {
		return nil
	}
	return b
}

// number returns the value of measure field k: a number token, or a
// string's contents; nil when the field is absent or null. A string with
// escapes is returned as it is, so it reads as garbage (no number needs
// them).
func (j *jsonFormat) number(k int) []byte {
	v := &j.vals[k]
	if !v.set || !v.str && string(v.raw) == "null" {
		return nil
	}
	return v.raw
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// object reads the object starting at b[i] == '{' and returns the index
// after it.
func (j *jsonFormat) object(i, depth int) (int, bool) {
	b := j.line
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		end, _, ok := scanString(b, i)
		if !ok {
			return 0, false
		}
		key := b[i+1 : end]
		i = skipWS(b, end+1)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			return 0, false
		}
		mark := len(j.path)
		fits := mark+1+len(key) <= cap(j.path)
		if fits {
			if mark > 0 {
				j.path = append(j.path, '.')
			}
			j.path = append(j.path, key...)
		}
		match := -1
		if fits {
			for k, name := range j.names {
				if string(j.path) == name && name != "" {
					match = k
					break
				}
			}
		}
		switch c := b[i]; {
		case c == '"':
			end, esc, ok := scanString(b, i)
			if !ok {
				return 0, false
			}
			if match >= 0 {
				j.vals[match] = jsonVal{raw: b[i+1 : end], str: true, esc: esc, set: true}
			}
			i = end + 1
		case c == '{':
			if depth+1 >= maxJSONDepth {
				return 0, false
			}
			if i, ok = j.object(i, depth+1); !ok {
				return 0, false
			}
		case c == '[':
			if i, ok = skipNested(b, i); !ok {
				return 0, false
			}
		default:
			k := i
			for k < len(b) && b[k] != ',' && b[k] != '}' && b[k] != ']' && b[k] != ' ' &&
				b[k] != '\t' && b[k] != '\r' && b[k] != '\n' {
				k++
			}
			if k == i {
				return 0, false
			}
			if match >= 0 {
				j.vals[match] = jsonVal{raw: b[i:k], set: true}
			}
			i = k
		}
		j.path = j.path[:mark]
		i = skipWS(b, i)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// scanString returns the index of the closing quote of the string starting
// at b[i] == '"', and whether it holds escapes.
func scanString(b []byte, i int) (end int, esc, ok bool) {
	for k := i + 1; k < len(b); k++ {
		switch b[k] {
		case '\\':
			esc = true
			k++
		case '"':
			return k, esc, true
		}
	}
	return 0, false, false
}

// skipNested skips the array or object starting at b[i], without reading
// it, and returns the index after it.
func skipNested(b []byte, i int) (int, bool) {
	depth := 0
	for k := i; k < len(b); k++ {
		switch b[k] {
		case '"':
			end, _, ok := scanString(b, k)
			if !ok {
				return 0, false
			}
			k = end
		case '[', '{':
			depth++
			if depth > maxJSONDepth {
				return 0, false
			}
		case ']', '}':
			depth--
			if depth == 0 {
				return k + 1, true
			}
		}
	}
	return 0, false
}

// jsonUnescape appends the JSON string contents src, unescaped, to dst.
// Lone surrogates become U+FFFD.
func jsonUnescape(dst, src []byte) ([]byte, bool) {
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		if i == len(src) {
			return dst, false
		}
		switch src[i] {
		case '"', '\\', '/':
			dst = append(dst, src[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(src, i+1)
			if !ok {
				return dst, false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(src, i+3); ok && i+2 < len(src) && src[i+1] == '\\' && src[i+2] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						i += 6
					}
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, false
		}
	}
	return dst, true
}

// hex4 reads four hex digits at src[i:].
func hex4(src []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(src) {
		return 0, false
	}
	var r rune
	for _, c := range src[i : i+4] {
		d := unhex(c)
		if d > 15 {
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}
