package main

import (
	"io"

	"github.com/logtally/logtally/check"
	"github.com/logtally/logtally/config"
)

// logrotateRoot is where check reads logrotate.conf and logrotate.d, for
// olddir: a source's `rotated` globs must find the files rotated into
// another directory (tests change it).
var logrotateRoot = "/etc"

// cmdCheck checks a config against this host and MongoDB; every problem
// is a usage error (exit 2).
func cmdCheck(args []string, stdout, stderr io.Writer) error {
	fs, path := parseFlags("check", stderr)
	if err := requireConfig(fs, args, path); err != nil {
		return err
	}
	// A file without [[source]] is one for serve and query (LoadReader):
	// run refuses it, check checks what those read.
	cfg, err := config.LoadReader(*path)
	if err != nil {
		return usageError{err}
	}
	if len(cfg.Sources) == 0 {
		err = check.Reader(cfg, *path, stdout)
	} else {
		err = check.Sources(cfg, *path, logrotateRoot, stdout)
	}
	if err != nil {
		return usageError{err}
	}
	return nil
}
