package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/replay"
)

const replayUsage = `usage: logtally replay -dry-run [-config FILE [-source NAME]] [-site S] [-format F] [-log-format L] FILE...

Reads access logs (plain, gzip, zstd or bzip2, told by their first bytes), parses them as a source would and
prints a summary. -config takes a [[source]]'s settings (-source NAME when
there are several); -site, -format and -log-format override them. Without
-dry-run, replay would write to MongoDB: not implemented yet.
`

func cmdReplay(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, replayUsage); fs.PrintDefaults() }
	dry := fs.Bool("dry-run", false, "parse and aggregate in memory, print a summary; no database")
	cfgPath := fs.String("config", "", "take the source settings from this config `file`")
	srcName := fs.String("source", "", "the `name` of the [[source]] in -config (default: the only one)")
	site := fs.String("site", "", "the `site` of every hit, or {host} to take it from the line")
	format := fs.String("format", "", "log `format`: "+fmt.Sprint(parser.Formats))
	logFormat := fs.String("log-format", "", "nginx log_format `string`, for -format nginx")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if !*dry {
		return usagef("replay: writing to MongoDB is not implemented yet; use -dry-run")
	}
	if fs.NArg() == 0 {
		return usagef("replay: no log FILE given")
	}
	var pc parser.Config
	maxLine := int(config.Default().MaxLineBytes)
	if *cfgPath != "" {
		cfg, err := config.Load(*cfgPath)
		if err != nil {
			return usageError{err}
		}
		src, err := pickSource(cfg.Sources, *srcName)
		if err != nil {
			return usageError{err}
		}
		pc = src.Parser()
		maxLine = int(cfg.MaxLineBytes)
	} else if *srcName != "" {
		return usagef("replay: -source needs -config")
	}
	if *site != "" {
		pc.Site = *site
	}
	if *format != "" {
		pc.Format = *format
	}
	if *logFormat != "" {
		pc.LogFormat = *logFormat
	}
	p, err := parser.New(pc)
	if err != nil {
		return usagef("replay: %w", err)
	}
	d := replay.NewDryRun(p, parser.NewPageLimiter(pc.Page.MaxPagesPerMinute), maxLine, stderr)
	clk := clock.Real{}
	start := clk.Now()
	for _, name := range fs.Args() {
		if err := d.ReadFile(name); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	}
	d.Summary(stdout, clk.Now().Sub(start))
	return nil
}

// pickSource returns the source named name, or the only source.
func pickSource(sources []config.Source, name string) (config.Source, error) {
	if name == "" {
		if len(sources) != 1 {
			return config.Source{}, fmt.Errorf("replay: the config has %d sources: choose one with -source NAME", len(sources))
		}
		return sources[0], nil
	}
	for _, s := range sources {
		if s.Name == name {
			return s, nil
		}
	}
	return config.Source{}, fmt.Errorf("replay: no source named %q in the config", name)
}
