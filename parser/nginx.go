package parser

import (
	"bytes"
	"errors"
	"fmt"
)

// ngxVar is an nginx variable logtally reads; ngxOther is any other.
type ngxVar uint8

const (
	ngxOther ngxVar = iota
	ngxTimeLocal
	ngxTimeISO
	ngxMsec
	ngxRequest
	ngxRequestURI
	ngxURI
	ngxMethod
	ngxStatus
	ngxHost
	ngxHTTPHost
	ngxServerName
	ngxUA
	ngxBodyBytes
	ngxBytesSent
	ngxRequestTime
	ngxUpstreamTime
	ngxRemoteAddr
	ngxXFF
	ngxRef
)

var ngxVars = map[string]ngxVar{
	"time_local":      ngxTimeLocal,
	"time_iso8601":    ngxTimeISO,
	"msec":            ngxMsec,
	"request":         ngxRequest,
	"request_uri":     ngxRequestURI,
	"uri":             ngxURI,
	"document_uri":    ngxURI,
	"request_method":  ngxMethod,
	"status":          ngxStatus,
	"host":            ngxHost,
	"http_host":       ngxHTTPHost,
	"server_name":     ngxServerName,
	"http_user_agent": ngxUA,
	"http_referer":    ngxRef, // read only with Config.Referer

	"body_bytes_sent":        ngxBodyBytes,
	"bytes_sent":             ngxBytesSent,
	"request_time":           ngxRequestTime,
	"upstream_response_time": ngxUpstreamTime,

	"remote_addr":          ngxRemoteAddr,
	"http_x_forwarded_for": ngxXFF, // read only with Config.Client ClientForwardedFor
}

// ngxSeg is one variable of a log_format and the literal text after it.
type ngxSeg struct {
	v     ngxVar
	name  string
	after []byte
}

// nginxFormat is a compiled nginx log_format.
type nginxFormat struct {
	prefix    []byte // literal text before the first variable
	segs      []ngxSeg
	timeVar   ngxVar
	hostVar   ngxVar // 0 if none
	lastNeed  int    // index of the last segment whose value a hit needs
	lastRead  int    // index of the last segment whose value is read (needed, measures, user agent)
	bytesVar  ngxVar // $body_bytes_sent, else $bytes_sent; 0 if none
	hasUA     bool
	hasMethod bool
	hasXFF    bool // $http_x_forwarded_for is read
	hasRef    bool // $http_referer is read
}

// compileNginx compiles an nginx log_format string: literal text and
// $variables (or ${variable}). Each variable's value ends where the
// literal text after it starts (after a closing '"' not escaped by a
// backslash, for literals starting with '"'); $time_local is 26 bytes.
// $http_x_forwarded_for is read only with xff, $http_referer only with ref.
func compileNginx(format string, xff, ref bool) (*nginxFormat, error) {
	if format == "" {
		return nil, errors.New("must not be empty for format nginx")
	}
	n := &nginxFormat{}
	var lit []byte
	var cur *ngxSeg
	flush := func() {
		if cur == nil {
			n.prefix = lit
		} else {
			cur.after = lit
		}
		lit = nil
	}
	for i := 0; i < len(format); {
		c := format[i]
		if c != '$' {
			lit = append(lit, c)
			i++
			continue
		}
		var name string
		j := i + 1
		if j < len(format) && format[j] == '{' {
			k := j + 1
			for k < len(format) && format[k] != '}' {
				k++
			}
			if k == len(format) {
				return nil, fmt.Errorf("%q: unclosed ${", format)
			}
			name, j = format[j+1:k], k+1
		} else {
			for j < len(format) && (format[j] == '_' || format[j] >= 'a' && format[j] <= 'z' ||
				format[j] >= 'A' && format[j] <= 'Z' || format[j] >= '0' && format[j] <= '9') {
				j++
			}
			name = format[i+1 : j]
		}
		if name == "" {
			lit = append(lit, c)
			i++
			continue
		}
		flush()
		v := ngxVars[name]
		if v == ngxXFF && !xff || v == ngxRef && !ref {
			v = ngxOther
		}
		n.segs = append(n.segs, ngxSeg{v: v, name: name})
		cur = &n.segs[len(n.segs)-1]
		i = j
	}
	flush()
	var hasTarget, hasStatus bool
	for i, s := range n.segs {
		if s.v != ngxOther && s.v != ngxUA && s.v != ngxRef && !s.v.measure() {
			n.lastNeed = i
		}
		if s.v != ngxOther {
			n.lastRead = i
		}
		if len(s.after) == 0 && i < len(n.segs)-1 && s.v != ngxTimeLocal {
			return nil, fmt.Errorf("$%s and $%s have nothing between them: the line cannot be split", s.name, n.segs[i+1].name)
		}
		switch s.v {
		case ngxTimeLocal, ngxTimeISO, ngxMsec:
			if n.timeVar == 0 {
				n.timeVar = s.v
			}
		case ngxRequest:
			hasTarget, n.hasMethod = true, true
		case ngxRequestURI, ngxURI:
			hasTarget = true
		case ngxMethod:
			n.hasMethod = true
		case ngxStatus:
			hasStatus = true
		case ngxHost, ngxHTTPHost, ngxServerName:
			if n.hostVar == 0 || s.v < n.hostVar {
				n.hostVar = s.v
			}
		case ngxUA:
			n.hasUA = true
		case ngxXFF:
			n.hasXFF = true
		case ngxRef:
			n.hasRef = true
		case ngxBodyBytes, ngxBytesSent:
			if n.bytesVar == 0 || s.v < n.bytesVar {
				n.bytesVar = s.v
			}
		}
	}
	switch {
	case n.timeVar == 0:
		return nil, fmt.Errorf("%q: no $time_local, $time_iso8601 or $msec", format)
	case !hasTarget:
		return nil, fmt.Errorf("%q: no $request, $request_uri or $uri", format)
	case !hasStatus:
		return nil, fmt.Errorf("%q: no $status", format)
	}
	return n, nil
}

// read splits line by the format and reads the fields.
func (n *nginxFormat) read(line []byte, f *fields, times *timeCache) Outcome {
	if !bytes.HasPrefix(line, n.prefix) {
		return MalformedFields
	}
	rest := line[len(n.prefix):]
	var tm, req, target, method, status, rt, upstream []byte
	var targetVar ngxVar
	// Segments after the last one read are not split: nothing in them is
	// used, and a broken one there would not lose the hit anyway.
segs:
	for i, s := range n.segs[:n.lastRead+1] {
		var val []byte
		switch {
		case s.v == ngxTimeLocal:
			if len(rest) < timeLen || !bytes.HasPrefix(rest[timeLen:], s.after) {
				return MalformedFields
			}
			val, rest = rest[:timeLen], rest[timeLen+len(s.after):]
		case len(s.after) == 0:
			val, rest = rest, nil
		default:
			var j int
			if s.after[0] == '"' {
				j = quotedEnd(rest, s.after)
			} else {
				j = bytes.Index(rest, s.after)
			}
			if j < 0 && i > n.lastNeed {
				// A broken field after all those a hit needs (an
				// unterminated user agent) does not lose the hit;
				// the measures and addresses after it are not read
				// (nor a cut X-Forwarded-For: the client is then
				// $remote_addr).
				switch s.v {
				case ngxUA:
					f.ua = rest
				case ngxRef:
					f.ref = rest
				}
				break segs
			}
			if j < 0 {
				return MalformedFields
			}
			val, rest = rest[:j], rest[j+len(s.after):]
		}
		switch s.v {
		case ngxTimeLocal, ngxTimeISO, ngxMsec:
			if s.v == n.timeVar {
				tm = val
			}
		case ngxRequest:
			req = val
		case ngxRequestURI, ngxURI:
			if targetVar == 0 || s.v < targetVar {
				target, targetVar = val, s.v
			}
		case ngxMethod:
			method = val
		case ngxStatus:
			status = val
		case ngxHost, ngxHTTPHost, ngxServerName:
			if s.v == n.hostVar {
				f.host = val
			}
		case ngxUA:
			f.ua = val
		case ngxRef:
			f.ref = val
		case ngxBodyBytes, ngxBytesSent:
			if s.v == n.bytesVar {
				f.bytes = sizeOf(val)
			}
		case ngxRequestTime:
			rt = val
		case ngxUpstreamTime:
			upstream = val
		case ngxRemoteAddr:
			f.client = val
		case ngxXFF:
			f.xff = val
		}
	}
	var t int64
	var ok bool
	switch n.timeVar {
	case ngxTimeLocal:
		t, ok = times.parse(tm)
	case ngxTimeISO:
		t, ok = parseISO(tm)
	default:
		t, ok = parseEpoch(tm, false)
	}
	if !ok {
		return MalformedTime
	}
	if req != nil {
		m, path, ok := splitRequest(req)
		if !ok && target == nil {
			return MalformedRequest
		}
		f.method, f.path = m, path
	}
	if target != nil {
		path, ok := targetPath(target)
		if !ok {
			return MalformedRequest
		}
		f.path = path
	}
	if method != nil {
		if !isToken(method) {
			return MalformedRequest
		}
		f.method = method
	}
	st, ok := parseStatus(status)
	if !ok {
		return MalformedStatus
	}
	f.time, f.status = t, st
	if rt != nil {
		f.rt = rtOf(rt, 6)
	}
	if f.rt == NoRT && upstream != nil {
		f.rt = sumDurations(upstream, 6)
	}
	return OK
}

// measure reports whether v is read for a measure or the client only: a
// broken value does not lose the hit.
func (v ngxVar) measure() bool { return v >= ngxBodyBytes }

// quotedEnd returns the index of the first '"' in s not escaped by a
// backslash that starts after, or -1.
func quotedEnd(s, after []byte) int {
	for off := 0; off <= len(s); {
		q := closingQuote(s[off:])
		if q < 0 {
			return -1
		}
		if bytes.HasPrefix(s[off+q:], after) {
			return off + q
		}
		off += q + 1
	}
	return -1
}
