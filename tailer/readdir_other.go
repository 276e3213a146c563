//go:build unix && !linux

package tailer

import (
	"io/fs"
	"os"
)

// readDir returns the entries of dir sorted by name, with their types;
// their inode numbers are not known (0: every file is stat'ed).
func readDir(dir string) ([]dirEnt, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]dirEnt, len(es))
	for i, e := range es {
		t := entOther
		switch {
		case e.Type().IsRegular():
			t = entRegular
		case e.Type()&fs.ModeSymlink != 0 || e.Type()&fs.ModeIrregular != 0:
			t = entMaybeLink
		}
		out[i] = dirEnt{name: e.Name(), typ: t}
	}
	return out, nil
}
