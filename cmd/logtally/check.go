package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/logtally/logtally/config"
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
	seen := map[string]string{}
	for _, s := range cfg.Sources {
		fmt.Fprintf(stdout, "source %q (site %s, format %s):\n", s.Name, s.Site, s.Format)
		n := 0
		for _, g := range s.Paths {
			matches, _ := filepath.Glob(g)
			for _, m := range matches {
				n++
				fmt.Fprintf(stdout, "  %s\n", m)
				if other, dup := seen[m]; dup && other != s.Name {
					problems = append(problems, fmt.Errorf("%s is matched by sources %q and %q: it would be counted twice", m, other, s.Name))
				}
				seen[m] = s.Name
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
