// Command logtally tails web access logs and keeps pre-aggregated page-view
// counts in MongoDB. See the README for the subcommands.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/logtally/logtally/clock"
)

// processClock is the process's one clock: every command hands it to the
// components that read the time (clock.Real, moved only in test binaries;
// an in-process test may replace it).
var processClock clock.Clock = clock.Real{}

// usageError is a bad command line or config: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

const usage = `usage: logtally <command> [flags]

commands:
  run -config FILE [-log-level L]
                        run the daemon until SIGTERM or SIGINT; SIGHUP re-reads the config
  check -config FILE    validate the config and state_dir, list the files each source
                        would follow, ping MongoDB
  state -config FILE    print the state dir's checkpoints, pending counts and batches
                        (the daemon's /status while it runs)
  replay -config FILE [-source NAME] [-site S] [-format F] [-log-format L]
         [-since T] [-until T] [-jobs N] [-dry-run] [-log-level L] FILE|GLOB...
                        count archived logs (plain, gzip, zstd, bzip2) into the buckets,
                        each line once; -dry-run (no -config needed) parses them and
                        prints a summary, with no database or state
  query -config FILE -site S -from T [-to T] [-page P] [-step minute|hour|day|month]
        [-top N] [-measure M[,M...]] [-format table|csv|json|chart] [-tz ZONE]
                        print a site's page views (or other measures) from
                        the buckets; with -bots instead, its views by bot class;
                        with -by D, by where they came from (referrer, channel,
                        country, asn, browser, os, device, crawler)
  verify -config FILE [-source NAME | -site S -format F [-log-format L]]
         [-from T] [-to T] [-all-hosts] [-jobs N] [-max-diffs N] [-max-sums N] FILE|GLOB...
                        are my numbers right? read the logs as the daemon counts them and
                        compare every counter of their buckets with MongoDB; -all-hosts says
                        the files are every host's logs; writes nothing; exit 0 exact,
                        1 a difference, 2 bad input
  serve -config FILE [-listen HOST:PORT] [-log-level L]
                        serve the dashboard, a read-only web page of the buckets
                        ([dashboard] listen, default 127.0.0.1:9465)
  version               print the version

logtally <command> -h describes the command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	err := dispatch(args, stdout, stderr)
	if err == nil {
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "logtally: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usagef("no command given")
	}
	switch args[0] {
	case "run":
		return cmdRun(args[1:], stderr)
	case "check":
		return cmdCheck(args[1:], stdout, stderr)
	case "state":
		return cmdState(args[1:], stdout, stderr)
	case "replay":
		return cmdReplay(args[1:], stdout, stderr)
	case "query":
		return cmdQuery(args[1:], stdout, stderr)
	case "verify":
		return cmdVerify(args[1:], stdout, stderr)
	case "serve":
		return cmdServe(args[1:], stderr)
	case "version", "-version", "--version":
		return cmdVersion(stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return usagef("unknown command %q", args[0])
	}
}

// parseFlags parses a subcommand's flags; -config is required.
func parseFlags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "config `file` (TOML)")
	return fs, path
}

func requireConfig(fs *flag.FlagSet, args []string, path *string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	if *path == "" {
		return usagef("%s: -config FILE is required", fs.Name())
	}
	return nil
}
