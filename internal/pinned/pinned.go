package pinned

import (
	"bufio"
	"fmt"
	"strings"
)

// OwnList returns the values of one of our own lists, text, read from
// file: "value<TAB>source" lines, # comments and blank lines. A line
// without a value or a source is an error naming file:line.
func OwnList(file, text string) ([]string, error) {
	var vals []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		v, src, ok := strings.Cut(line, "\t")
		v = strings.TrimSpace(v)
		if !ok || v == "" || strings.TrimSpace(src) == "" {
			return nil, fmt.Errorf("%s:%d: want a value, a TAB and its source", file, n)
		}
		vals = append(vals, v)
	}
	return vals, sc.Err()
}

// List is one upstream list a VERSIONS file pins.
type List struct {
	Name, Repository, Commit, Date string
}

// Lists returns the lists versions (a VERSIONS file's text) pins, in its
// order: # comments and lines short of name, repository, commit and date
// are skipped.
func Lists(versions string) []List {
	var ls []List
	for _, line := range strings.Split(versions, "\n") {
		f := strings.Split(line, "\t")
		if strings.HasPrefix(line, "#") || len(f) < 4 {
			continue
		}
		ls = append(ls, List{f[0], f[1], f[2], f[3]})
	}
	return ls
}

// Version describes the lists versions pins, for logs: each one's name,
// commit (its first 12 digits) and commit date, as
// "name@commit (date), ...".
func Version(versions string) string {
	var parts []string
	for _, l := range Lists(versions) {
		c := l.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		parts = append(parts, l.Name+"@"+c+" ("+l.Date+")")
	}
	return strings.Join(parts, ", ")
}
