package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// unjoin returns the errors joined in err (by errors.Join), or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// FieldError is a bad value: Field is the dotted key (source[2].format).
type FieldError struct {
	// Field is the key, with a source's index in brackets.
	Field string
	// Problem says what is wrong, quoting the value.
	Problem string
	// Err is the cause, if there is one (reading mongo.uri_file).
	Err error
}

// Error returns "field: problem".
func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// Unwrap returns the cause, or nil.
func (e *FieldError) Unwrap() error { return e.Err }

var decodeErrRe = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

var indexRe = regexp.MustCompile(`^(\w+)\[(\d+)\]$`)

// key turns "source[2].format" into the TOML key path plus index for lineOf.
func (e *FieldError) key() toml.Key { return toml.Key(strings.Split(e.Field, ".")) }

// problem returns fe, the problem of key k, prefixed with name and the
// line where k is set when it can be found, else the line of the header of
// its table (a required key missing: "source[1].site" at the second
// [[source]]). It wraps fe.
func problem(name string, data []byte, k toml.Key, fe *FieldError) error {
	if line := lineOf(data, k); line > 0 {
		return fmt.Errorf("%s:%d: %w", name, line, fe)
	}
	lines := strings.Split(string(data), "\n")
	for n := len(k) - 1; n >= 1; n-- {
		if line := tableLine(lines, k[:n]); line > 0 {
			return fmt.Errorf("%s:%d: %w", name, line, fe)
		}
	}
	return fmt.Errorf("%s: %w", name, fe)
}

// lineOf finds the line setting key k: the key inside the table named by
// the rest of k ("source[1].page" is the [source.page] table of the second
// [[source]]). A key inside an inline table or array ("rewrite[0].match")
// is found at the line of its outer key, a dotted key ("page.max_length")
// in its parent table. It returns 0 when it cannot tell.
func lineOf(data []byte, k toml.Key) int {
	lines := strings.Split(string(data), "\n")
	for n := len(k) - 1; n >= 0; n-- {
		if line := findKey(lines, k[:n], k[n:]); line > 0 {
			return line
		}
	}
	return 0
}

// headerLine reports whether line n (from 1) of data is a table header.
func headerLine(data []byte, n int) bool {
	lines := strings.Split(string(data), "\n")
	return n >= 1 && n <= len(lines) && strings.HasPrefix(strings.TrimSpace(lines[n-1]), "[")
}

// tableLine returns the line of the header of table ("source[1]",
// "source[1].page"), or 0.
func tableLine(lines []string, table toml.Key) int {
	m := newTableMatcher(table)
	for i, raw := range lines {
		if line := strings.TrimSpace(raw); strings.HasPrefix(line, "[") && m.opens(line) {
			return i + 1
		}
	}
	return 0
}

// tableMatcher tells which header line opens a table ("source[1]",
// "source[1].page"): it is fed every header line in order, since the
// index of an array table is counted by its [[name]] headers.
type tableMatcher struct {
	want   string         // the table's dotted name, indexes left out
	idx    int            // the array index, -1 for none
	arrays map[string]int // [[name]] headers seen
}

func newTableMatcher(table toml.Key) *tableMatcher {
	m := &tableMatcher{idx: -1, arrays: map[string]int{}}
	var names []string
	for _, part := range table {
		name, i := splitIndex(part)
		names = append(names, name)
		if i >= 0 {
			m.idx = i
		}
	}
	m.want = strings.Join(names, ".")
	return m
}

// opens reports whether header line (trimmed, starting with "[") opens
// the table.
func (m *tableMatcher) opens(line string) bool {
	name := strings.TrimSpace(strings.Trim(strings.SplitN(line, "#", 2)[0], " []"))
	if strings.HasPrefix(line, "[[") {
		m.arrays[name]++
	}
	top := strings.SplitN(name, ".", 2)[0]
	return name == m.want && (m.idx < 0 || m.arrays[top]-1 == m.idx)
}

// splitIndex splits "source[2]" into "source" and 2; the index is -1 if
// there is none.
func splitIndex(part string) (string, int) {
	if m := indexRe.FindStringSubmatch(part); m != nil {
		n, _ := strconv.Atoi(m[2])
		return m[1], n
	}
	return part, -1
}

// findKey returns the line of key rest (its first part, or all of it
// dotted) inside the table named by table, or 0.
func findKey(lines []string, table, rest toml.Key) int {
	m := newTableMatcher(table)
	var leaves []string
	for _, part := range rest {
		name, _ := splitIndex(part)
		leaves = append(leaves, name)
	}
	leaf, dotted := leaves[0], strings.Join(leaves, ".")
	inTable := m.want == ""
	for i, raw := range lines {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "[") {
			inTable = m.opens(line)
			continue
		}
		if !inTable {
			continue
		}
		if eq := strings.IndexByte(line, '='); eq > 0 {
			if key := strings.Trim(strings.TrimSpace(line[:eq]), `"'`); key == leaf || key == dotted {
				return i + 1
			}
		}
	}
	return 0
}
