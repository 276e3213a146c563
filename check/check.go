package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/logrotate"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
)

// Sources checks cfg, a config with sources (for logtally run), printing
// what it finds on w: the config files read; per source the files its
// tailer would follow (and a match it cannot examine yet), with the
// rotated setting logrotate's olddir calls for (its configuration read
// under logrotateRoot, /etc); the state dir; MongoDB reachable. The
// problems (a file two sources match, a bad state dir, MongoDB down) are
// returned, joined.
func Sources(cfg config.Config, path, logrotateRoot string, stdout io.Writer) error {
	var problems []error
	fmt.Fprintf(stdout, "config %s: ok (%d sources)\n", path, len(cfg.Sources))
	fmt.Fprintf(stdout, "config files: %s\n", strings.Join(cfg.Files, ", "))
	seen := map[stream.FileID]match{}
	rules := logrotate.Rules(logrotateRoot)
	for _, s := range cfg.Sources {
		fmt.Fprintf(stdout, "source %q (site %s, format %s):\n", s.Name, s.Site, s.Format)
		// The files the source's tailer would follow: regular and
		// uncompressed, each once even when two globs or paths reach it.
		files, err := tailer.DiscoverSource(tailer.SourceFiles{Paths: s.Paths, Rotated: s.Rotated, FollowSymlinks: s.FollowSymlinks})
		for _, f := range files {
			fmt.Fprintf(stdout, "  %s\n", f.Path)
			other, dup := seen[f.ID]
			if dup {
				also := ""
				if other.path != f.Path {
					also = " (also as " + other.path + ")"
				}
				problems = append(problems, fmt.Errorf("%s%s is matched by sources %q and %q: it would be counted twice", f.Path, also, other.source, s.Name))
				continue
			}
			seen[f.ID] = match{source: s.Name, path: f.Path}
		}
		for _, err := range unjoin(err) {
			var pe *os.PathError
			if errors.As(err, &pe) {
				fmt.Fprintf(stdout, "  %s (%v)\n", pe.Path, err) // followed once it can be read
				continue
			}
			problems = append(problems, fmt.Errorf("source %q: %w", s.Name, err))
		}
		if len(files) == 0 {
			fmt.Fprintf(stdout, "  (no file matches now; followed when one appears)\n")
		}
		if len(s.Rotated) == 0 {
			var paths []string
			for _, f := range files {
				paths = append(paths, f.Path)
			}
			for _, h := range logrotate.OlddirHints(rules, paths) {
				fmt.Fprintf(stdout, "  warning: %s\n", h)
			}
		}
	}
	if locked, err := buffer.CheckDir(cfg.StateDir, config.BufferFile); err != nil {
		problems = append(problems, fmt.Errorf("state_dir: %w", err))
	} else if locked {
		fmt.Fprintf(stdout, "state_dir %s: ok; its buffer is in use by a running logtally\n", cfg.StateDir)
	} else {
		fmt.Fprintf(stdout, "state_dir %s: ok\n", cfg.StateDir)
	}
	if err := geoDatabases(cfg.Geo, stdout); err != nil {
		problems = append(problems, err)
	}
	if w := cfg.HTTP.ListenWarning(); w != "" {
		fmt.Fprintf(stdout, "warning: %s\n", w)
	}
	if err := ping(context.Background(), cfg.Mongo); err != nil {
		problems = append(problems, err)
	} else {
		fmt.Fprintf(stdout, "mongo %s: reachable, database %q\n", cfg.Mongo.Redacted(), cfg.Mongo.Database)
	}
	if len(problems) > 0 {
		return fmt.Errorf("check failed:\n%w", errors.Join(problems...))
	}
	return nil
}

// geoDatabases reads the [geo] databases as the daemon would (geo.Open)
// and prints each: its files, type, build date and the attribution its
// licence asks for; an error if one cannot be read (its file and what is
// wrong, never its content). Nothing with no [geo] file named.
func geoDatabases(g config.Geo, stdout io.Writer) error {
	if g.CountryDB == "" && g.ASNDB == "" {
		return nil
	}
	db, err := geo.Open(g.CountryDB, g.ASNDB)
	if err != nil {
		return err // "geo: <role> database <path>: what is wrong"
	}
	for _, in := range db.Databases() {
		fmt.Fprintf(stdout, "geo %s: %s (%s, built %s)\n", in.Role, strings.Join(in.Files, ", "), in.Type, in.Built.UTC().Format("2006-01-02"))
		if in.Attribution != "" {
			fmt.Fprintf(stdout, "  attribution: %s\n", in.Attribution)
		}
	}
	return nil
}

// Reader checks a config without [[source]], one for serve and query,
// printing what it finds on w: MongoDB is reachable, its user reads every
// collection they read (a problem each it cannot), and not the salts (a
// warning if it can: with a salt and the visitors registers a guessed
// address can be tested, and the page needs none). The problems are
// returned.
func Reader(cfg config.Config, path string, stdout io.Writer) error {
	fmt.Fprintf(stdout, "config %s: ok (no [[source]]: a config for logtally serve and query; logtally run needs one)\n", path)
	fmt.Fprintf(stdout, "config files: %s\n", strings.Join(cfg.Files, ", "))
	ctx := context.Background()
	if err := ping(ctx, cfg.Mongo); err != nil {
		return fmt.Errorf("check failed:\n%w", err)
	}
	fmt.Fprintf(stdout, "mongo %s: reachable, database %q\n", cfg.Mongo.Redacted(), cfg.Mongo.Database)
	reads := cfg.Reader(nil, nil).Reads()
	unreadable, salts, err := readerAccess(ctx, cfg.Mongo, reads)
	if err != nil {
		return fmt.Errorf("check failed:\n%w", err)
	}
	if salts {
		fmt.Fprintf(stdout, "warning: the mongo user can read the salts collection: with a salt and the visitors registers, "+
			"a guessed address and user agent can be tested; give serve and query a user whose role allows find on %s only "+
			"(README, Dashboard)\n", strings.Join(reads, ", "))
	} else {
		fmt.Fprintf(stdout, "mongo user: cannot read the salts: ok\n")
	}
	if len(unreadable) > 0 {
		return fmt.Errorf("check failed:\nthe mongo user cannot read %s: logtally serve and query read %s",
			strings.Join(unreadable, ", "), strings.Join(reads, ", "))
	}
	fmt.Fprintf(stdout, "mongo user: reads %s\n", strings.Join(reads, ", "))
	return nil
}

// unjoin returns the errors joined in err (by errors.Join), or err alone.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// match is the first source and path a file was matched by.
type match struct{ source, path string }
