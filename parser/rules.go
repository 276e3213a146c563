package parser

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// maxKeptParams bounds the query parameters kept in one page; further
// matching parameters are dropped.
const maxKeptParams = 16

// pageRules are the compiled PageConfig rules.
type pageRules struct {
	keepQuery  [][]byte
	rewrites   []rewrite
	lowercase  bool
	stripSlash bool
	indexFiles [][]byte // "/index.html"

	work, final []byte                // scratch, fixed capacity
	params      [maxKeptParams][]byte // kept parameters of the current line
}

type rewrite struct {
	re   *regexp.Regexp
	repl []byte
}

// newPageRules compiles c; it returns nil rules when there are none.
func newPageRules(c PageConfig) (*pageRules, []error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: field, Problem: fmt.Sprintf(format, args...)})
	}
	r := &pageRules{lowercase: c.Lowercase, stripSlash: c.StripTrailingSlash}
	for i, k := range c.KeepQuery {
		if k == "" || strings.ContainsAny(k, "&=#? ") {
			bad(fmt.Sprintf("page.keep_query[%d]", i), "%q: must be a query parameter name", k)
			continue
		}
		r.keepQuery = append(r.keepQuery, []byte(k))
	}
	for i, rw := range c.Rewrite {
		f := fmt.Sprintf("page.rewrite[%d]", i)
		if rw.Match == "" {
			bad(f+".match", "must not be empty")
			continue
		}
		re, err := regexp.Compile(rw.Match)
		if err != nil {
			bad(f+".match", "%q: %v", rw.Match, err)
			continue
		}
		if !strings.HasPrefix(rw.Replace, "/") && !strings.HasPrefix(rw.Replace, "$") {
			bad(f+".replace", "%q: must start with '/' (or a group such as $1)", rw.Replace)
			continue
		}
		if strings.ContainsFunc(rw.Replace, func(c rune) bool { return c <= ' ' || c == 0x7f }) {
			bad(f+".replace", "%q: must not hold spaces or control characters", rw.Replace)
			continue
		}
		r.rewrites = append(r.rewrites, rewrite{re: re, repl: []byte(rw.Replace)})
	}
	for i, name := range c.IndexFiles {
		if name == "" || strings.ContainsAny(name, "/?# ") {
			bad(fmt.Sprintf("page.index_files[%d]", i), "%q: must be a file name", name)
			continue
		}
		r.indexFiles = append(r.indexFiles, []byte("/"+name))
	}
	if len(r.keepQuery) == 0 && len(r.rewrites) == 0 && !r.lowercase && !r.stripSlash && len(r.indexFiles) == 0 {
		return nil, errs
	}
	return r, errs
}

// rulePage builds the page of path (which starts with '/' and may hold a
// query) with the page rules, checking the path filters on the page before
// rewrites.
func (p *Parser) rulePage(path []byte) ([]byte, Outcome) {
	r := p.rules
	end := 0
	for end < len(path) && pathClass[path[end]] != stop {
		end++
	}
	w := pageWriter{buf: r.work[:0]}
	p.decode(&w, path[:end], r.lowercase)
	if w.n > cap(w.buf) {
		// Too long to rewrite: cut and hashed as it is.
		page := p.bound(&w)
		if p.filter.excludedPath(page) {
			return nil, FilteredPath
		}
		return page, OK
	}
	base := w.buf
	if p.filter.excludedPath(base) {
		return nil, FilteredPath
	}
	for _, f := range r.indexFiles {
		if bytes.HasSuffix(base, f) {
			base = base[:len(base)-len(f)+1]
			break
		}
	}
	if r.stripSlash {
		for len(base) > 1 && base[len(base)-1] == '/' {
			base = base[:len(base)-1]
		}
	}
	for _, rw := range r.rewrites {
		if rw.re.Match(base) {
			base = rw.re.ReplaceAll(base, rw.repl)
			if len(base) == 0 || base[0] != '/' {
				base = append([]byte{'/'}, base...)
			}
		}
	}
	out := pageWriter{buf: r.final[:0]}
	out.write(base)
	if len(r.keepQuery) > 0 && end < len(path) && path[end] == '?' {
		q := path[end+1:]
		if i := bytes.IndexByte(q, '#'); i >= 0 {
			q = q[:i]
		}
		p.appendQuery(&out, q)
	}
	return p.bound(&out), OK
}

// appendQuery writes "?" and the kept parameters of the query q, sorted by
// name (stable), if any.
func (p *Parser) appendQuery(w *pageWriter, q []byte) {
	r := p.rules
	n := 0
	for len(q) > 0 && n < maxKeptParams {
		var param []byte
		if i := bytes.IndexByte(q, '&'); i >= 0 {
			param, q = q[:i], q[i+1:]
		} else {
			param, q = q, nil
		}
		name := param
		if i := bytes.IndexByte(param, '='); i >= 0 {
			name = param[:i]
		}
		for _, k := range r.keepQuery {
			if bytes.Equal(name, k) {
				r.params[n] = param
				n++
				break
			}
		}
	}
	if n == 0 {
		return
	}
	kept := r.params[:n]
	for i := 1; i < n; i++ { // insertion sort: stable, no allocation
		for j := i; j > 0 && bytes.Compare(paramName(kept[j]), paramName(kept[j-1])) < 0; j-- {
			kept[j], kept[j-1] = kept[j-1], kept[j]
		}
	}
	for i, param := range kept {
		if i == 0 {
			w.byte('?')
		} else {
			w.byte('&')
		}
		p.decode(w, param, false)
		kept[i] = nil
	}
}

func paramName(param []byte) []byte {
	if i := bytes.IndexByte(param, '='); i >= 0 {
		return param[:i]
	}
	return param
}
