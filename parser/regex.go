package parser

import (
	"fmt"
	"regexp"
)

// regexFormat is a compiled regex format: group indexes, -1 if absent.
type regexFormat struct {
	re                                        *regexp.Regexp
	time, path, request, method, status, site int
	ua, ref, client                           int
	bytes                                     int
	rt                                        [3]int // request_time, request_time_ms, request_time_us
	layout                                    timeLayout
}

func compileRegex(expr, layout string) (*regexFormat, error) {
	if expr == "" {
		return nil, &ConfigError{Field: "regex", Problem: "must not be empty for format regex"}
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, &ConfigError{Field: "regex", Problem: fmt.Sprintf("%q: %v", expr, err)}
	}
	r := &regexFormat{re: re}
	for _, g := range []struct {
		name string
		idx  *int
	}{{"time", &r.time}, {"path", &r.path}, {"request", &r.request}, {"method", &r.method},
		{"status", &r.status}, {"site", &r.site}, {"user_agent", &r.ua}, {"referer", &r.ref}, {"client", &r.client}, {"bytes", &r.bytes},
		{"request_time", &r.rt[0]}, {"request_time_ms", &r.rt[1]}, {"request_time_us", &r.rt[2]}} {
		*g.idx = re.SubexpIndex(g.name)
	}
	switch {
	case r.time < 0:
		return nil, &ConfigError{Field: "regex", Problem: fmt.Sprintf("%q: no (?P<time>...) group", expr)}
	case r.path < 0 && r.request < 0:
		return nil, &ConfigError{Field: "regex", Problem: fmt.Sprintf("%q: no (?P<path>...) or (?P<request>...) group", expr)}
	case r.status < 0:
		return nil, &ConfigError{Field: "regex", Problem: fmt.Sprintf("%q: no (?P<status>...) group", expr)}
	}
	r.layout, err = parseTimeLayout(layout, "clf")
	if err != nil {
		return nil, &ConfigError{Field: "time_layout", Problem: err.Error()}
	}
	return r, nil
}

// read matches line; this is the slow path (the match allocates).
func (r *regexFormat) read(line []byte, f *fields) Outcome {
	m := r.re.FindSubmatchIndex(line)
	if m == nil {
		return MalformedFields
	}
	group := func(i int) []byte {
		if i < 0 || m[2*i] < 0 {
			return nil
		}
		return line[m[2*i]:m[2*i+1]]
	}
	t, ok := r.layout.parse(group(r.time))
	if !ok {
		return MalformedTime
	}
	if p := group(r.path); p != nil {
		path, ok := targetPath(p)
		if !ok {
			return MalformedRequest
		}
		f.path = path
	} else {
		method, path, ok := splitRequest(group(r.request))
		if !ok {
			return MalformedRequest
		}
		f.method, f.path = method, path
	}
	if m := group(r.method); m != nil {
		if !isToken(m) {
			return MalformedRequest
		}
		f.method = m
	}
	st, ok := parseStatus(group(r.status))
	if !ok {
		return MalformedStatus
	}
	f.time, f.status = t, st
	f.host = group(r.site)
	f.ua = group(r.ua)
	f.ref = group(r.ref)
	f.client = group(r.client)
	f.bytes = sizeOf(group(r.bytes))
	for i, g := range r.rt {
		if v := group(g); v != nil {
			if f.rt = rtOf(v, regexScales[i]); f.rt != NoRT {
				break
			}
		}
	}
	return OK
}

// regexScales are the units of the groups request_time (seconds, Apache's
// %T), request_time_ms and request_time_us (Apache's %D).
var regexScales = [3]int{6, 3, 0}
