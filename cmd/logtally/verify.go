package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/query"
	"github.com/logtally/logtally/replay"
	"github.com/logtally/logtally/verify"
)

const verifyUsage = `usage: logtally verify -config FILE [-source NAME | -site S -format F [-log-format L]]
                       [-from T] [-to T] [-all-hosts] [-jobs N] [-max-diffs N] [-max-sums N] FILE|GLOB...

Answers "are my numbers right?": reads the logs and archives given (plain,
gzip, zstd, bzip2) as the daemon counts them (the source's parser, filters,
page rules, max_sites, max_pages_per_minute), sums them per bucket and
compares every counter and measure of the minute, daily and monthly buckets
and the site days with MongoDB over the range the files cover (or -from to
-to). It writes nothing. MongoDB holding less than the files is a
difference (hits lost); holding more is reported as "more in MongoDB: other
hosts?" unless -all-hosts says the files are every host's logs. Counters
whose period reaches outside the range are judged for lost hits only;
buckets past their retention and the visitors are not judged. With
[dimensions] enabled, each site day's counts by dimension (referrer,
channel, country, asn, browser, os, device, crawler) are compared value
by value too, the [geo] databases read as the daemon reads them.
Exit status: 0 exact, 1 a difference (or MongoDB could not be read), 2 bad
input.
`

func cmdVerify(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, verifyUsage); fs.PrintDefaults() }
	cfgPath := fs.String("config", "", "the config `file` (required: MongoDB and the buckets)")
	srcName := fs.String("source", "", "parse every file as the [[source]] `name` (default: the only source)")
	site := fs.String("site", "", "the `site` of every hit, or {host} to take it from the line")
	format := fs.String("format", "", "log `format`: "+fmt.Sprint(parser.Formats))
	logFormat := fs.String("log-format", "", "nginx log_format `string`, for -format nginx")
	from := fs.String("from", "", "judge from `T` (RFC 3339, a date, now or -2h; default the files' first hit)")
	to := fs.String("to", "", "judge until `T`, excluded (default the second after the files' last hit)")
	allHosts := fs.Bool("all-hosts", false, "the files are every host's logs of the range: MongoDB holding more than them is a difference")
	jobs := fs.Int("jobs", runtime.GOMAXPROCS(0), "files read and decompressed at once, and goroutines parsing them")
	maxDiffs := fs.Int("max-diffs", verify.DefaultMaxDiffs, "differences listed at most (`N`; all are counted)")
	maxSums := fs.Int("max-sums", verify.DefaultMaxSums, "(site, page, second) sums held at most (`N`, about 300 bytes each at the peak); past it the files are read again, a range at a time")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	switch {
	case fs.NArg() == 0:
		return usagef("verify: no log FILE given")
	case *cfgPath == "":
		return usagef("verify: -config FILE is required")
	case *jobs < 1:
		return usagef("verify: -jobs %d: must be at least 1", *jobs)
	case *maxDiffs < 1:
		return usagef("verify: -max-diffs %d: must be at least 1", *maxDiffs)
	case *maxSums < 1:
		return usagef("verify: -max-sums %d: must be at least 1", *maxSums)
	}
	files, err := replay.ExpandFiles(fs.Args())
	if err != nil {
		return usagef("verify: %w", err)
	}
	now := processClock.Now()
	opts := verify.Options{Jobs: *jobs, AllHosts: *allHosts, Clock: processClock, MaxSums: *maxSums, MaxDiffs: *maxDiffs, Log: stderr}
	for _, t := range []struct {
		flag, value string
		to          *time.Time
	}{{"from", *from, &opts.From}, {"to", *to, &opts.To}} {
		if t.value == "" {
			continue
		}
		if *t.to, err = query.ParseTime(t.value, now, time.UTC); err != nil {
			return usagef("verify: -%s: %w", t.flag, err)
		}
	}
	if !opts.From.IsZero() && !opts.To.IsZero() && !opts.From.Before(opts.To) {
		return usagef("verify: -from %s is not before -to %s", *from, *to)
	}
	cfg, err := config.LoadReader(*cfgPath)
	if err != nil {
		return usageError{err}
	}
	if opts.Parser, err = verifyParser(cfg, *srcName, *site, *format, *logFormat); err != nil {
		return usageError{err}
	}
	if opts.Parser.Dims, err = dimsConfig(cfg); err != nil {
		return usagef("verify: %w", err)
	}
	if _, err := parser.New(opts.Parser); err != nil {
		return usagef("verify: %w", err)
	}
	opts.MaxLine = int(cfg.MaxLineBytes)
	r := cfg.Reader(nil, processClock)
	opts.Collections, opts.Retention = r.Collections, r.Retention

	client, db, err := cfg.Mongo.Connect("logtally-verify")
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		client.Disconnect(ctx)
	}()
	opts.DB = db
	ctx, release := onStopSignals(func(os.Signal) {
		fmt.Fprintln(stderr, "\nverify: stopping (it wrote nothing)")
	}, func(os.Signal) {}, 130)
	defer release()
	rep, err := verify.Verify(ctx, files, opts)
	if errors.Is(err, verify.ErrFiles) {
		return usagef("verify: %w", err)
	}
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	rep.Write(stdout)
	if !rep.Exact() {
		return fmt.Errorf("verify: not exact: %d differences", rep.NDiffs)
	}
	return nil
}

// verifyParser returns how verify parses the files: -source's (or the
// only source's) parser with -site, -format and -log-format over it, or
// those flags alone (a config without a source, or with several and no
// -source).
func verifyParser(cfg config.Config, source, site, format, logFormat string) (parser.Config, error) {
	var pc parser.Config
	switch {
	case source != "" || len(cfg.Sources) == 1:
		src, err := cfg.Source(source)
		if err != nil {
			return pc, fmt.Errorf("verify: %w", err)
		}
		pc = src.Parser()
	case site == "" || format == "":
		return pc, fmt.Errorf("verify: the config has %d sources: choose one with -source NAME, or give -site and -format", len(cfg.Sources))
	}
	if site != "" {
		pc.Site = site
	}
	if format != "" {
		pc.Format = format
	}
	if logFormat != "" {
		pc.LogFormat = logFormat
	}
	return pc, nil
}
