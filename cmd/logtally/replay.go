package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"time"

	logtallyd "github.com/logtally/logtally/daemon" // daemon is the tests' helper that runs logtally run
	"github.com/logtally/logtally/dryrun"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/replay"
	"github.com/logtally/logtally/termview"
)

const replayUsage = `usage: logtally replay -config FILE [-source NAME] [-site S] [-format F] [-log-format L]
                       [-since T] [-until T] [-jobs N] [-dry-run] [-log-level L] FILE|GLOB...

Counts archived access logs (plain, gzip, zstd or bzip2, told by their first
bytes) into MongoDB's buckets, each line once: a file, or a copy of it, that
was counted before (by replay or by the daemon, on this host or another) is
counted only past where it was counted. With the daemon running on the same
state_dir, the files are handed to it; otherwise replay opens the state dir
itself. Ctrl-C stops reading and flushes what was counted: the same command
resumes. A file no source's globs (or their rotated names) match needs -site
and -format. -dry-run parses and prints a summary, with no database or state
(-config is then optional: without it, -site and -format say how to parse);
with [dimensions] enabled in -config, the hits by dimension too.
`

func cmdReplay(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, replayUsage); fs.PrintDefaults() }
	dry := fs.Bool("dry-run", false, "parse and aggregate in memory, print a summary; no database")
	cfgPath := fs.String("config", "", "the config `file`")
	srcName := fs.String("source", "", "parse every file as the [[source]] `name` (default: the source whose globs match each file)")
	site := fs.String("site", "", "the `site` of every hit, or {host} to take it from the line")
	format := fs.String("format", "", "log `format`: "+fmt.Sprint(parser.Formats))
	logFormat := fs.String("log-format", "", "nginx log_format `string`, for -format nginx")
	since := fs.String("since", "", "count only hits at or after `T` (RFC 3339 or 2006-01-02, UTC)")
	until := fs.String("until", "", "count only hits before `T` (RFC 3339 or 2006-01-02, UTC)")
	jobs := fs.Int("jobs", runtime.GOMAXPROCS(0), "files read and decompressed at once (with -dry-run, also the goroutines parsing them)")
	logLevel := fs.String("log-level", "warn", "log `level` on stderr: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() == 0 {
		return usagef("replay: no log FILE given")
	}
	files, err := replay.ExpandFiles(fs.Args())
	if err != nil {
		return usagef("replay: %w", err)
	}
	req := replay.Request{Files: files, Source: *srcName, Site: *site, Format: *format, LogFormat: *logFormat, Jobs: *jobs}
	if req.Since, err = parseWhen("since", *since); err != nil {
		return usageError{err}
	}
	if req.Until, err = parseWhen("until", *until); err != nil {
		return usageError{err}
	}
	if !req.Since.IsZero() && !req.Until.IsZero() && !req.Since.Before(req.Until) {
		return usagef("replay: -since %s is not before -until %s", *since, *until)
	}
	if *jobs < 1 {
		return usagef("replay: -jobs %d: must be at least 1", *jobs)
	}
	if *dry {
		return dryRun(req, *cfgPath, *logFormat, stdout, stderr)
	}
	if *cfgPath == "" {
		return usagef("replay: -config is required (only -dry-run works without one)")
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return usageError{err}
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
		return usagef("replay: -log-level %q: %w", *logLevel, err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))

	// The first signal stops reading (what is counted is flushed); a
	// second exits at once: what is committed is in the buffer, what is
	// not was never counted.
	ctx, release := onStopSignals(func(os.Signal) {
		fmt.Fprintln(stderr, "\nreplay: stopping: reading stopped, flushing what was counted (Ctrl-C again exits at once; nothing is lost either way)")
	}, func(os.Signal) {
		fmt.Fprintln(stderr, "replay: exiting at once; run the same command again to resume")
	}, 130)
	defer release()

	show := termview.NewReplayProgress(stderr, termview.IsTerminal(os.Stderr), processClock)
	var last replay.Progress
	report := func(p replay.Progress) { last = p; show.Update(p) }
	start := processClock.Now()
	sum, where, err := logtallyd.Replay(ctx, cfg, req, report, processClock, log)
	if sum != nil || last.TotalBytes > 0 {
		show.Finish(last)
	}
	if sum != nil {
		termview.ReplaySummary(stdout, sum, where, processClock.Now().Sub(start))
	}
	if ce := (*logtallyd.ConfigError)(nil); errors.As(err, &ce) {
		return usagef("replay: %w", err)
	}
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if sum.Stopped {
		return fmt.Errorf("replay: stopped before the end: what was counted is kept; run the same command again to resume")
	}
	return nil
}

// parseWhen parses -since/-until: RFC 3339 or a date (UTC midnight).
func parseWhen(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("replay: -%s %q: want RFC 3339 (2026-11-23T10:00:00Z) or a date (2026-11-23)", flag, s)
}

// dryRun parses the files in memory and prints a summary.
func dryRun(req replay.Request, cfgPath, logFormat string, stdout, stderr io.Writer) error {
	var pc parser.Config
	maxLine := int(config.Default().MaxLineBytes)
	if cfgPath != "" {
		cfg, err := config.Load(cfgPath)
		if err != nil {
			return usageError{err}
		}
		src, err := cfg.Source(req.Source)
		if err != nil {
			return usagef("replay: %w", err)
		}
		pc = src.Parser()
		maxLine = int(cfg.MaxLineBytes)
		if pc.Dims, err = dimsConfig(cfg); err != nil {
			return usagef("replay: %w", err)
		}
	} else if req.Source != "" {
		return usagef("replay: -source needs -config")
	}
	if req.Site != "" {
		pc.Site = req.Site
	}
	if req.Format != "" {
		pc.Format = req.Format
	}
	if logFormat != "" {
		pc.LogFormat = logFormat
	}
	pc.Since, pc.Until = req.Since, req.Until
	d, err := dryrun.NewParallel(pc, maxLine, req.Jobs, stderr)
	if err != nil {
		return usagef("replay: %w", err)
	}
	clk := processClock
	start := clk.Now()
	if err := d.ReadFiles(req.Files); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if err := d.Summary(stdout, clk.Now().Sub(start)); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if pc.Dims != nil {
		st := d.Stats()
		if err := writeDimsSummary(stdout, &st.ByDim); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	}
	return nil
}
