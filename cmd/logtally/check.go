package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/tailer"
)

func cmdCheck(args []string, stdout, stderr io.Writer) error {
	fs, path := parseFlags("check", stderr)
	if err := requireConfig(fs, args, path); err != nil {
		return err
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return usageError{err}
	}
	var problems []error
	fmt.Fprintf(stdout, "config %s: ok (%d sources)\n", *path, len(cfg.Sources))
	seen := map[fileKey]match{}
	for _, s := range cfg.Sources {
		fmt.Fprintf(stdout, "source %q (site %s, format %s):\n", s.Name, s.Site, s.Format)
		n := 0
		for _, g := range s.Paths {
			matches, _ := filepath.Glob(g)
			for _, m := range matches {
				st, err := os.Stat(m)
				if err != nil {
					fmt.Fprintf(stdout, "  %s (%v)\n", m, err)
					continue
				}
				if !st.Mode().IsRegular() || tailer.Compressed(m) {
					continue // the tailer follows uncompressed regular files only
				}
				k := keyOf(m, st)
				other, dup := seen[k]
				if dup && other.source == s.Name {
					continue // matched by two globs of this source: followed once
				}
				n++
				fmt.Fprintf(stdout, "  %s\n", m)
				if dup {
					also := ""
					if other.path != m {
						also = " (also as " + other.path + ")"
					}
					problems = append(problems, fmt.Errorf("%s%s is matched by sources %q and %q: it would be counted twice", m, also, other.source, s.Name))
					continue
				}
				seen[k] = match{source: s.Name, path: m}
			}
		}
		if n == 0 {
			fmt.Fprintf(stdout, "  (no file matches now; followed when one appears)\n")
		}
	}
	if err := ping(context.Background(), cfg.Mongo); err != nil {
		problems = append(problems, err)
	} else {
		fmt.Fprintf(stdout, "mongo %s: reachable, database %q\n", cfg.Mongo.Redacted(), cfg.Mongo.Database)
	}
	if len(problems) > 0 {
		return usageError{fmt.Errorf("check failed:\n%w", errors.Join(problems...))}
	}
	return nil
}

// fileKey identifies a file as the tailer does, by device and inode, so a
// file reached by two paths (a symlink, a hard link, "dir/../dir") is one.
type fileKey struct {
	dev, ino uint64
	path     string // only when the system gives no inode
}

func keyOf(path string, st os.FileInfo) fileKey {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return fileKey{dev: uint64(sys.Dev), ino: uint64(sys.Ino)}
	}
	return fileKey{path: path}
}

// match is the first source and path a file was matched by.
type match struct{ source, path string }
