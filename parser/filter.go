package parser

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// BotUserAgents is the "bots" preset of filter.exclude_user_agents:
// lowercase substrings of the user agents of crawlers, monitors and HTTP
// libraries. It is a heuristic: a client can send any user agent.
var BotUserAgents = []string{
	"bot/", "bot-", "bot;", "bot)", "bot.htm", "bot@", "crawler", "crawling", "spider", "slurp",
	"curl/", "wget/", "python-requests", "python-urllib", "aiohttp", "go-http-client",
	"java/", "libwww-perl", "okhttp", "apache-httpclient", "httpclient", "scrapy",
	"headlesschrome", "phantomjs", "facebookexternalhit", "bingpreview", "mediapartners-google",
	"feedfetcher", "lighthouse", "pingdom", "uptimerobot", "statuscake", "monitoring", "archiver",
}

// maxUALen bounds the part of a user agent the user-agent filters read.
const maxUALen = 1024

// filters are the compiled FilterConfig.
type filters struct {
	methods      [][]byte   // nil: all
	status       *[600]bool // nil: all
	exts         [][]byte   // lowercase, without dot
	pathPrefixes [][]byte
	pathRegexps  []*regexp.Regexp
	agents       [][]byte // lowercase
	uaBuf        []byte   // scratch, capacity maxUALen
}

var statusClassRe = regexp.MustCompile(`^[1-5](xx|[0-9][0-9])$`)

func newFilters(c FilterConfig, hasUA, hasMethod bool) (filters, []error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: field, Problem: fmt.Sprintf(format, args...)})
	}
	var f filters
	if len(c.Methods) > 0 && !hasMethod {
		bad("filter.methods", "the format does not log the method")
	}
	for i, m := range c.Methods {
		m = strings.ToUpper(m)
		if !isToken([]byte(m)) {
			bad(fmt.Sprintf("filter.methods[%d]", i), "%q: must be an HTTP method", c.Methods[i])
			continue
		}
		f.methods = append(f.methods, []byte(m))
	}
	for i, s := range c.Status {
		ls := strings.ToLower(s)
		if !statusClassRe.MatchString(ls) {
			bad(fmt.Sprintf("filter.status[%d]", i), `%q: must be a status class such as "2xx" or a status such as "404"`, s)
			continue
		}
		if f.status == nil {
			f.status = new([600]bool)
		}
		if strings.HasSuffix(ls, "xx") {
			base := int(ls[0]-'0') * 100
			for st := base; st < base+100; st++ {
				f.status[st] = true
			}
		} else {
			st, _ := strconv.Atoi(ls)
			f.status[st] = true
		}
	}
	for i, e := range c.ExcludeExtensions {
		e = strings.ToLower(strings.TrimPrefix(e, "."))
		if e == "" || strings.ContainsAny(e, "/.?# ") {
			bad(fmt.Sprintf("filter.exclude_extensions[%d]", i), "%q: must be a file extension such as \"png\"", c.ExcludeExtensions[i])
			continue
		}
		f.exts = append(f.exts, []byte(e))
	}
	for i, s := range c.ExcludePaths {
		field := fmt.Sprintf("filter.exclude_paths[%d]", i)
		switch {
		case strings.HasPrefix(s, "^"):
			re, err := regexp.Compile(s)
			if err != nil {
				bad(field, "%q: %v", s, err)
				continue
			}
			f.pathRegexps = append(f.pathRegexps, re)
		case strings.HasPrefix(s, "/"):
			f.pathPrefixes = append(f.pathPrefixes, []byte(s))
		default:
			bad(field, "%q: must be a path prefix starting with '/' or a regular expression starting with '^'", s)
		}
	}
	if len(c.ExcludeUserAgents) > 0 && !hasUA {
		bad("filter.exclude_user_agents", "the format does not log the user agent")
	}
	for i, s := range c.ExcludeUserAgents {
		if s == "bots" {
			for _, b := range BotUserAgents {
				f.agents = append(f.agents, []byte(b))
			}
			continue
		}
		if s == "" {
			bad(fmt.Sprintf("filter.exclude_user_agents[%d]", i), "must not be empty")
			continue
		}
		f.agents = append(f.agents, []byte(strings.ToLower(s)))
	}
	return f, errs
}

// early applies the filters that need no page: methods, status, user
// agents.
func (f *filters) early(fl *fields) Outcome {
	if f.methods != nil {
		ok := false
		for _, m := range f.methods {
			if bytes.Equal(m, fl.method) {
				ok = true
				break
			}
		}
		if !ok {
			return FilteredMethod
		}
	}
	if f.status != nil && !f.status[fl.status] {
		return FilteredStatus
	}
	if len(f.agents) > 0 && len(fl.ua) > 0 {
		ua := fl.ua[:min(len(fl.ua), maxUALen)]
		b := f.uaBuf[:0]
		for _, c := range ua {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
		}
		for _, a := range f.agents {
			if bytes.Contains(b, a) {
				return FilteredUserAgent
			}
		}
	}
	return OK
}

// excludedExt reports whether the last extension of path (up to its query)
// is excluded.
func (f *filters) excludedExt(path []byte) bool {
	end := 0
	for end < len(path) && pathClass[path[end]] != stop {
		end++
	}
	seg := path[bytes.LastIndexByte(path[:end], '/')+1 : end]
	dot := bytes.LastIndexByte(seg, '.')
	if dot < 0 {
		return false
	}
	ext := seg[dot+1:]
	for _, e := range f.exts {
		if len(e) == len(ext) && equalLower(ext, e) {
			return true
		}
	}
	return false
}

// equalLower reports whether b equals the lowercase lower, ignoring the
// case of ASCII letters in b. They have the same length.
func equalLower(b, lower []byte) bool {
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// excludedPath reports whether page matches an exclude_paths entry.
func (f *filters) excludedPath(page []byte) bool {
	for _, p := range f.pathPrefixes {
		if bytes.HasPrefix(page, p) {
			return true
		}
	}
	for _, re := range f.pathRegexps {
		if re.Match(page) {
			return true
		}
	}
	return false
}
