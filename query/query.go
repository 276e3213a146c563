package query

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/visitor"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Errors of a request that cannot be answered as asked. A caller tells
// them apart with errors.Is; each is wrapped with the details.
var (
	// ErrBadRequest is a bad range, step, time or option.
	ErrBadRequest = errors.New("bad request")
	// ErrUnknownSite is a site that has no bucket at all.
	ErrUnknownSite = errors.New("unknown site")
	// ErrUnknownPage is a page of the site that has no bucket at all.
	ErrUnknownPage = errors.New("no buckets for page")
	// ErrRetention is a range reaching back before the buckets of its step
	// are kept; the error is a *RetentionError.
	ErrRetention = errors.New("beyond retention")
)

// requestError is a bad request: its message alone, and ErrBadRequest
// for errors.Is.
type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }
func (e *requestError) Unwrap() error { return ErrBadRequest }

func badRequest(format string, args ...any) error {
	return &requestError{fmt.Sprintf(format, args...)}
}

// MaxSteps bounds the steps of one result.
const MaxSteps = 100000

// MaxCells bounds the counts one result holds: pages × steps × sums
// (the views, and the fields the measures need), every page with views in
// the range while it is read (Top ranks after reading), 8 bytes each. A
// request over it is refused with a *TooLargeError.
const MaxCells = 5_000_000

// The range a request may ask: buckets are dated from 1970 to 9999.
var (
	minTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// TooLargeError is a result that would hold more than MaxCells counts.
type TooLargeError struct {
	// Pages is the number of pages with views found so far, Steps the
	// steps of the range.
	Pages, Steps int
	Step         Step
	// Fields is the number of sums held per page and step beside the
	// views (the measures' fields); 0 for the views alone.
	Fields int
	// Max is the bound passed (Reader.MaxCells; 0 means MaxCells).
	Max int
}

func (e *TooLargeError) Error() string {
	msg := fmt.Sprintf("too large a result: %d or more pages × %d steps of a %s", e.Pages, e.Steps, e.Step)
	if e.Fields > 0 {
		msg += fmt.Sprintf(" × %d sums (the views and %d for the measures)", e.Fields+1, e.Fields)
	}
	limit := cmp.Or(e.Max, MaxCells)
	msg += fmt.Sprintf(" is over %d counts", limit)
	var hints []string
	if top := limit/max(e.Steps*(e.Fields+1), 1) - 1; top >= 1 { // one series is the site's sum
		hints = append(hints, fmt.Sprintf("-top N (N up to %d at this step)", top))
	}
	if e.Step < Month {
		coarser := e.Step + 1
		hints = append(hints, "a coarser -step ("+coarser.String()+")")
	}
	hints = append(hints, "a shorter range", "one -page")
	return msg + "; use " + strings.Join(hints, ", or ")
}

// Unwrap returns ErrBadRequest.
func (e *TooLargeError) Unwrap() error { return ErrBadRequest }

// Reader answers requests from the buckets in DB.
type Reader struct {
	// DB holds the bucket collections.
	DB *mongo.Database
	// Collections are their names; empty names get their defaults.
	Collections bucket.Collections
	// Retention is how long each level is kept: its buckets, and the
	// site totals (bucket.SiteLevel) and visitors documents
	// (bucket.VisitorLevel) that have its retention.
	Retention bucket.Retention
	// SaltPeriod is the configured salt period ([visitors] salt_period):
	// a month step of visitors without a document is judged by its
	// documents' retention (CheckVisitors). The zero value is
	// visitor.Day, the default.
	SaltPeriod visitor.Period
	// Clock is the process's clock; nil means clock.Real. The retention
	// check reads it, and so does a dashboard serving this Reader.
	Clock clock.Clock
	// MaxCells bounds the counts of one result (see the MaxCells
	// constant, the default when 0 or more).
	MaxCells int
}

// maxCells returns the bound of the counts of one result.
func (r *Reader) maxCells() int {
	if r.MaxCells > 0 && r.MaxCells < MaxCells {
		return r.MaxCells
	}
	return MaxCells
}

// Request is one query: the page views of one site, one page or all of its
// pages, in [From, To) at one step.
type Request struct {
	// Site is the site, as configured.
	Site string
	// Page is the page, as counted ("/a/b"); empty for every page.
	Page string
	// From and To bound the range. From is rounded down to its step's
	// start and To up to a step's end: steps are whole, in UTC.
	From, To time.Time
	// Step is the width of a point.
	Step Step
	// Top, when positive, keeps the Top pages with the most views over
	// the range. Not with Page.
	Top int
	// Measures are what each point reports, in order; empty means Views
	// alone. Pages are ranked by their views whatever the measures.
	Measures []Measure
	// SiteOnly keeps the site's sum alone (Result.Site): no page's
	// series is held, and Result.Series is empty. Not with Page or Top.
	SiteOnly bool
}

// Series is one page's counts, one per step of its Result.
type Series struct {
	// Page is the page.
	Page string
	// Total is the sum of Counts.
	Total int64
	// Counts holds one count per step, 0 where no bucket has views.
	Counts []int64
	// fields holds the request's fields (Result.fields), one value per
	// step each; totals their sums (or maxima) over the range.
	fields [][]int64
	totals []int64
}

// Result is the answer to a Request.
type Result struct {
	// Request is the request answered, with From and To aligned to its
	// step (UTC).
	Request Request
	// Times are the steps' starts (UTC), from Request.From to before
	// Request.To.
	Times []time.Time
	// Series are the pages' counts, the most viewed first (equal totals
	// by page). Without Request.Page, pages with no views in the range
	// are left out; with it, Series is that page alone.
	Series []Series
	// Pages is the number of pages with views in the range, before Top
	// kept the first ones (0 with SiteOnly).
	Pages int
	// Site is the sum of every page read (Page "", maxima the greatest):
	// the site's counts and measures, or with Request.Page that page's,
	// whatever Top kept. Result.Value reads it like a Series.
	Site Series
	// fields are what the series hold beside the views (Value).
	fields fieldSet
}

// Point is one count of a Result: the views of Page in the step starting at
// Time.
type Point struct {
	Time  time.Time `json:"time"`
	Page  string    `json:"page"`
	Count int64     `json:"count"`
}

// Points returns every count of r, step by step, and within a step in the
// order of r.Series.
func (r *Result) Points() []Point {
	pts := make([]Point, 0, len(r.Times)*len(r.Series))
	for i, t := range r.Times {
		for _, s := range r.Series {
			pts = append(pts, Point{Time: t, Page: s.Page, Count: s.Counts[i]})
		}
	}
	return pts
}

// RetentionError is a request reaching back before the buckets of its step
// are kept. It names the part that cannot be answered.
type RetentionError struct {
	// Step is the request's step, Level the level whose retention
	// applies ("minute", "daily", "monthly") and Key the config key of
	// its retention.
	Step         Step
	Level, Key   string
	Retention    time.Duration
	From, Cutoff time.Time // the part [From, min(To, Cutoff)) is gone
	To           time.Time
	// Docs names the documents read when they are not the level's
	// buckets: "site totals", "day-salted visitors documents", ...
	// Empty for the buckets. A coarser step reads the same ones, so it
	// is not suggested.
	Docs string
}

func (e *RetentionError) Error() string {
	end := e.Cutoff
	if e.To.Before(end) {
		end = e.To
	}
	docs := cmp.Or(e.Docs, e.Level+" buckets")
	msg := fmt.Sprintf("%s are kept for %s (buckets.%s): %s to %s cannot be answered at -step %s",
		docs, e.Retention, e.Key, e.From.Format(time.RFC3339), end.Format(time.RFC3339), e.Step)
	var hints []string
	if e.Step < Month && e.Level != bucket.Monthly.String() && e.Docs == "" {
		coarser := map[Step]string{Minute: "hour", Hour: "month", Day: "month"}[e.Step]
		hints = append(hints, "use -step "+coarser)
	}
	if e.Cutoff.Before(e.To) {
		hints = append(hints, "-from "+e.Cutoff.Format(time.RFC3339)+" or later")
	}
	for i, h := range hints {
		if i == 0 {
			msg += "; " + h
		} else {
			msg += ", or " + h
		}
	}
	return msg
}

// Unwrap returns ErrRetention.
func (e *RetentionError) Unwrap() error { return ErrRetention }

func (r *Reader) now() time.Time {
	if r.Clock != nil {
		return r.Clock.Now()
	}
	return clock.Real{}.Now()
}

// Check validates req without reading anything and returns it with From
// and To aligned to its step: a bad request wraps ErrBadRequest, a range
// reaching back before its level's retention is a *RetentionError.
func (r *Reader) Check(req Request) (Request, error) {
	req, err := checkRequest(req)
	if err != nil {
		return req, err
	}
	return req, r.checkRetention(req, req.level())
}

// checkRequest validates req and aligns its range to its step.
func checkRequest(req Request) (Request, error) {
	switch {
	case req.Site == "":
		return req, badRequest("a site is required")
	case req.Step < Minute || req.Step > Month:
		return req, badRequest("no step")
	case req.Top < 0:
		return req, badRequest("top %d: must be positive", req.Top)
	case req.Top > 0 && req.Page != "":
		return req, badRequest("top ranks the pages of a site; it cannot be used with a page")
	case req.SiteOnly && (req.Top > 0 || req.Page != ""):
		return req, badRequest("site only sums every page: it cannot be used with a page or top")
	case slices.Contains(req.Measures, Visitors):
		return req, badRequest("visitors are counted per site and read alone (Reader.Visitors): -measure visitors with no other measure")
	case !validMeasures(req.Measures):
		return req, badRequest("measures %v: each must be one of %s, once", req.Measures, MeasureNames)
	case req.From.Before(minTime) || !req.From.Before(maxTime):
		return req, badRequest("from %s: out of range; times from 1970-01-01 to 9999-12-31 are accepted",
			req.From.UTC().Format(time.RFC3339))
	case req.To.Before(minTime) || req.To.After(maxTime):
		return req, badRequest("to %s: out of range; times from 1970-01-01 to 9999-12-31 are accepted",
			req.To.UTC().Format(time.RFC3339))
	case !req.From.Before(req.To):
		return req, badRequest("from %s is not before to %s",
			req.From.UTC().Format(time.RFC3339), req.To.UTC().Format(time.RFC3339))
	}
	req.From, req.To = req.Step.Truncate(req.From), req.Step.Ceil(req.To)
	if n := req.Step.Steps(req.From, req.To); n > MaxSteps || n < 0 {
		return req, badRequest("%d steps of a %s: at most %d; use a longer step or a shorter range", n, req.Step, MaxSteps)
	}
	return req, nil
}

// checkRetention returns a *RetentionError when req reaches back before
// the first document of level l's retention kept whole (keptFrom): l's
// buckets, or with docs (RetentionError.Docs) the site totals or
// visitors documents that have l's retention.
func (r *Reader) checkRetention(req Request, l bucket.Level, docs ...string) error {
	cutoff, ok := r.keptFrom(l, req.Step)
	if !ok || !req.From.Before(cutoff) {
		return nil
	}
	keep := r.Retention.Of(l)
	return &RetentionError{Step: req.Step, Level: l.String(), Key: r.Retention.Key(l), Retention: keep, From: req.From, To: req.To, Cutoff: cutoff,
		Docs: strings.Join(docs, "")}
}

// keptFrom returns the start of the first step (of step) whose documents
// of level l's retention are all kept whole: the oldest l period still
// kept (bucket.Retention.Cutoff), or the one after it when part of its
// period lies before now minus the retention (it expires within its
// period), rounded up to a step's start. ok is false when l's retention
// is 0: everything is kept.
func (r *Reader) keptFrom(l bucket.Level, step Step) (cutoff time.Time, ok bool) {
	keep := r.Retention.Of(l)
	if keep <= 0 {
		return time.Time{}, false
	}
	now := r.now()
	cutoff = r.Retention.Cutoff(l, now)
	if cutoff.Before(now.Add(-keep)) {
		_, end := l.Bounds(cutoff.Unix())
		cutoff = time.Unix(end, 0).UTC()
	}
	return step.Ceil(cutoff), true
}

// Query answers req: it checks it (see Check), reads the cheapest level
// that answers its step and measures (minute buckets for minutes, daily
// buckets for hours and for days of views alone, monthly buckets for
// months and for days with measures), fills the steps without views with
// 0, and ranks the pages by their views. A site without any bucket is
// ErrUnknownSite, a page without any bucket ErrUnknownPage.
func (r *Reader) Query(ctx context.Context, req Request) (*Result, error) {
	req, err := r.Check(req)
	if err != nil {
		return nil, err
	}
	res := &Result{Request: req, fields: fieldsOf(req.Measures)}
	for t := req.From; t.Before(req.To); t = req.Step.Next(t) {
		res.Times = append(res.Times, t)
	}
	limit := r.maxCells()
	acc := newAccumulator(res, limit)
	if err := r.read(ctx, req, acc); err != nil {
		return nil, err
	}
	pages := -1 // pages with views, when the top passes counted them
	if acc.tooLarge != nil {
		if req.Top == 0 || req.Top > limit/(len(res.Times)*(len(res.fields.list)+1)) {
			return nil, acc.tooLarge
		}
		// Too many pages to hold them all: rank them by their totals
		// alone, then read the top ones' counts.
		totals := accumulator{res: res, totals: map[string]int64{}, viewsOnly: true}
		if err := r.read(ctx, req, &totals); err != nil {
			return nil, err
		}
		ranked := make([]Series, 0, len(totals.totals))
		for p, n := range totals.totals {
			if n > 0 {
				ranked = append(ranked, Series{Page: p, Total: n})
			}
		}
		rank(ranked)
		pages = len(ranked)
		acc = newAccumulator(res, limit)
		acc.only = map[string]bool{}
		for _, s := range ranked[:min(req.Top, len(ranked))] {
			acc.only[s.Page] = true
		}
		if err := r.read(ctx, req, acc); err != nil {
			return nil, err
		}
		if acc.tooLarge != nil {
			return nil, acc.tooLarge
		}
	}
	if req.Page != "" && acc.pages[req.Page] == nil {
		if err := r.exists(ctx, req.Site, req.Page); err != nil {
			return nil, err
		}
		acc.series(req.Page)
	}
	res.Site = *acc.site
	res.Site.Page = req.Page
	if len(acc.pages) == 0 && res.Site.Total == 0 {
		if err := r.exists(ctx, req.Site, ""); err != nil {
			return nil, err
		}
	}
	for _, s := range acc.pages {
		if s.Total > 0 || req.Page != "" {
			res.Series = append(res.Series, *s)
		}
	}
	rank(res.Series)
	res.Pages = len(res.Series)
	if pages >= 0 {
		res.Pages = pages
	}
	if req.Top > 0 && len(res.Series) > req.Top {
		res.Series = res.Series[:req.Top]
	}
	return res, nil
}

// validMeasures reports whether ms are known measures, each once.
func validMeasures(ms []Measure) bool {
	var seen [numMeasures]bool
	for _, m := range ms {
		if m >= numMeasures || seen[m] {
			return false
		}
		seen[m] = true
	}
	return true
}

// rank sorts series the most viewed first, equal totals by page.
func rank(series []Series) {
	slices.SortFunc(series, func(a, b Series) int {
		if c := cmp.Compare(b.Total, a.Total); c != 0 {
			return c
		}
		return cmp.Compare(a.Page, b.Page)
	})
}
