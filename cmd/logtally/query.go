package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/termview"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/query"
)

// queryTimeout bounds a whole query, reads included.
const queryTimeout = 2 * time.Minute

// cmdQuery prints the page views of a site from the buckets, or their
// measures (-measure), or the views by user-agent class (-bots), or the
// site's unique visitors (-measure visitors).
func cmdQuery(args []string, stdout, stderr io.Writer) error {
	fs, path := parseFlags("query", stderr)
	site := fs.String("site", "", "the `site` (required)")
	page := fs.String("page", "", "one `page` (path); default every page of the site")
	from := fs.String("from", "", "start `time`: RFC 3339, a date (2026-11-23), now or -2h (required)")
	to := fs.String("to", "now", "end `time` (excluded)")
	stepName := fs.String("step", "hour", "`step`: minute, hour, day or month")
	top := fs.Int("top", 0, "only the `N` pages with the most views over the range")
	format := fs.String("format", "table", "output `format`: "+strings.Join(query.Formats, ", "))
	tz := fs.String("tz", "UTC", "time `zone` of the output, such as Europe/Paris or Local (steps stay UTC-aligned)")
	measures := fs.String("measure", "views", "what each point reports, a comma-separated `list` (more than one with -format csv or json): "+query.MeasureNames+
		" (error_rate: (4xx+5xx)/views; rt_avg and rt_max in milliseconds, rt_count the hits that logged a time; people: views minus bots;"+
		" unmeasured: views counted before the measures were recorded;"+
		" visitors: the site's unique visitors, alone, at -step day (the default with it) or month, with their standard error)")
	bots := fs.Bool("bots", false, "the views of each user-agent class (people, search, ai, tool, bot, suspect) over the range, per whole day: from the sites collection, or with -page from its monthly buckets")
	by := fs.String("by", "", "the site's views over the range by where they came from, per whole day (with [dimensions] enabled): one of "+dimNames()+" (crawler: with each crawler's operator and purpose); -top N keeps the first N values")
	if err := requireConfig(fs, args, path); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case *site == "":
		return usagef("query: -site is required")
	case *from == "":
		return usagef("query: -from is required")
	case !slices.Contains(query.Formats, *format):
		return usagef("query: -format %q: must be one of %s", *format, strings.Join(query.Formats, ", "))
	case *top > 0 && *page != "":
		return usagef("query: -top ranks the pages of a site; it cannot be used with -page")
	case *top < 0:
		return usagef("query: -top %d: must be positive", *top)
	case *bots && set["measure"]:
		return usagef("query: -bots counts views by class; it cannot be used with -measure")
	case *bots && *top > 0:
		return usagef("query: -bots counts the site's or one page's views by class; it cannot be used with -top")
	case *by != "" && *page != "":
		return usagef("query: -by counts a site's views by value per day; they are not kept per page, so it cannot be used with -page")
	case *by != "" && (*bots || set["measure"]):
		return usagef("query: -by counts a site's views by value; it cannot be used with -bots or -measure")
	case *by != "" && !slices.Contains(query.ClassFormats, *format):
		return usagef("query: -by -format %q: must be one of %s", *format, strings.Join(query.ClassFormats, ", "))
	case *bots && !slices.Contains(query.ClassFormats, *format):
		return usagef("query: -bots -format %q: must be one of %s", *format, strings.Join(query.ClassFormats, ", "))
	}
	ms, err := query.ParseMeasures(*measures)
	if err != nil {
		return usagef("query: -measure: %w", err)
	}
	visitors := slices.Contains(ms, query.Visitors)
	switch {
	case visitors && len(ms) > 1:
		return usagef("query: -measure %s: visitors are counted per site and read alone; use -measure visitors", *measures)
	case visitors && *top > 0:
		return usagef("query: -measure visitors: visitors are counted per site; -top ranks pages")
	case visitors && !slices.Contains(query.VisitorFormats, *format):
		return usagef("query: -measure visitors -format %q: must be one of %s", *format, strings.Join(query.VisitorFormats, ", "))
	case visitors && !set["step"]:
		*stepName = "day" // visitors exist per salt period
	}
	if len(ms) > 1 && *format != "csv" && *format != "json" {
		return usagef("query: -measure %s: more than one measure needs -format csv or json (a %s shows one)", *measures, *format)
	}
	if (*bots || *by != "") && !set["step"] {
		*stepName = "day" // the classes and dimensions are kept per day
	}
	dim, dimOK := dims.Parse(*by)
	if *by != "" && !dimOK {
		return usagef("query: -by %q: must be one of %s", *by, dimNames())
	}
	loc, err := time.LoadLocation(*tz)
	if err != nil {
		return usagef("query: -tz %q: %w", *tz, err)
	}
	step, err := query.ParseStep(*stepName)
	if err != nil {
		return usagef("query: %w", err)
	}
	now := processClock.Now()
	req := query.Request{Site: *site, Page: *page, Step: step, Top: *top, Measures: ms}
	if *bots || *by != "" {
		req.Measures = nil
	}
	if req.From, err = query.ParseTime(*from, now, loc); err != nil {
		return usagef("query: -from: %w", err)
	}
	if req.To, err = query.ParseTime(*to, now, loc); err != nil {
		return usagef("query: -to: %w", err)
	}
	cfg, err := config.LoadReader(*path)
	if err != nil {
		return usageError{err}
	}
	r := cfg.Reader(nil, processClock)
	r.Clock = clock.NewFake(now) // the request's times and its check read one instant
	// The request is checked before connecting: its mistakes need no
	// database.
	check := r.Check
	if *bots {
		check = r.CheckClasses
	} else if *by != "" {
		check = r.CheckBreakdown
	} else if visitors {
		check = r.CheckVisitors
	}
	if _, err := check(req); err != nil {
		return queryError(err)
	}
	client, db, err := cfg.Mongo.Connect("logtally-query")
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	r.DB = db
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	if *by != "" {
		b, err := r.Breakdown(ctx, req, dim)
		if err != nil {
			return queryError(err)
		}
		return query.WriteBreakdown(stdout, b, *format, query.Options{Location: loc})
	}
	if *bots {
		c, err := r.Classes(ctx, req)
		if err != nil {
			return queryError(err)
		}
		return query.WriteClasses(stdout, c, *format, query.Options{Location: loc})
	}
	if visitors {
		v, err := r.Visitors(ctx, req)
		if err != nil {
			return queryError(err)
		}
		return query.WriteVisitors(stdout, v, *format, query.Options{Location: loc})
	}
	res, err := r.Query(ctx, req)
	if err != nil {
		return queryError(err)
	}
	return query.Write(stdout, res, *format, query.Options{Location: loc, Color: *format == "chart" && termview.ColorTerminal(stdout)})
}

// queryError makes the errors of the request itself usage errors (exit 2);
// database errors stay errors (exit 1).
func queryError(err error) error {
	for _, e := range []error{query.ErrBadRequest, query.ErrRetention, query.ErrUnknownSite, query.ErrUnknownPage} {
		if errors.Is(err, e) {
			return usagef("query: %w", err)
		}
	}
	return fmt.Errorf("query: %w", err)
}

// dimNames lists the dimensions -by takes.
func dimNames() string {
	names := make([]string, dims.N)
	for d := range dims.N {
		names[d] = d.String()
	}
	return strings.Join(names, ", ")
}
