package replay

import (
	"fmt"
	"path/filepath"
	"strings"
)

// ExpandFiles returns the files of a command line's FILE|GLOB arguments
// (logtally replay, verify): it expands globs and makes every path
// absolute; a pattern that matches nothing is an error.
func ExpandFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		matches := []string{a}
		if strings.ContainsAny(a, "*?[") {
			m, err := filepath.Glob(a)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", a, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("%q matches no file", a)
			}
			matches = m
		}
		for _, m := range matches {
			abs, err := filepath.Abs(m)
			if err != nil {
				return nil, err
			}
			out = append(out, abs)
		}
	}
	return out, nil
}
