package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/logtally/logtally/query"
)

// measures are what the page shows of the site, a page and each top
// page: every measure the query package computes, read in one query.
var measures = []query.Measure{
	query.Views, query.People, query.Bots,
	query.BotSearch, query.BotAI, query.BotTool, query.BotOther, query.BotSuspect,
	query.Status2xx, query.Status3xx, query.Status4xx, query.Status5xx, query.ErrorRate,
	query.Bytes, query.RTAvg, query.RTMax, query.RTCount, query.Unmeasured,
}

// num is a query.Value in JSON: an exact integer, or a fraction.
type num query.Value

func (n num) MarshalJSON() ([]byte, error) { return []byte(query.Value(n).String()), nil }

// values are the measures of a series at one step or over the range, by
// name (query.Measure.String: "views", "2xx", "rt_avg").
type values map[string]num

// series are the measures of a series per step, by name.
type series map[string][]num

func valuesOf(res *query.Result, s *query.Series, i int) values {
	v := make(values, len(measures))
	for _, m := range measures {
		v[m.String()] = num(res.Value(s, m, i))
	}
	return v
}

func seriesOf(res *query.Result, s *query.Series) series {
	out := make(series, len(measures))
	for _, m := range measures {
		vs := make([]num, len(res.Times))
		for i := range res.Times {
			vs[i] = num(res.Value(s, m, i))
		}
		out[m.String()] = vs
	}
	return out
}

// visitors is an estimate of unique visitors over whole salt periods.
type visitors struct {
	Value float64 `json:"value"`
	// Error is the relative standard error (1 s.e.).
	Error float64 `json:"error"`
	// Kind is "visitors" (one period's uniques), "visitors_daily_sum" or
	// "visitors_monthly_sum" (uniques of several periods added: one
	// person on two days counts twice).
	Kind string `json:"kind"`
	// Label says it in words, and over which whole periods.
	Label string `json:"label"`
	// From and To are the whole periods counted.
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// page is one row of the top pages.
type page struct {
	Page string `json:"page"`
	values
	Visitors *visitors `json:"visitors"`
	Spark    []int64   `json:"spark"`
}

// MarshalJSON flattens the values beside the page's name, as it is
// (page: for links and requests) and as it is shown (shown: query.Shown).
func (p page) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(p.values)+4)
	for k, v := range p.values {
		m[k] = v
	}
	m["page"], m["shown"], m["visitors"], m["spark"] = p.Page, query.Shown(p.Page), p.Visitors, p.Spark
	return json.Marshal(m)
}

// period is the previous period's numbers.
type period struct {
	From     int64     `json:"from"`
	To       int64     `json:"to"`
	Totals   values    `json:"totals"`
	Series   series    `json:"series"`
	Visitors *visitors `json:"visitors"`
}

// viewReply is the body of GET api/view.
type viewReply struct {
	Site       string    `json:"site"`
	Page       string    `json:"page"`
	PageShown  string    `json:"page_shown"` // query.Shown(Page)
	Step       string    `json:"step"`
	StepMS     int64     `json:"step_ms"`
	From       int64     `json:"from"`
	To         int64     `json:"to"`
	Times      []int64   `json:"times"`
	Totals     values    `json:"totals"`
	Series     series    `json:"series"`
	Visitors   *visitors `json:"visitors"`
	Previous   *period   `json:"previous"`
	PrevNote   string    `json:"previous_note"`
	Pages      []page    `json:"pages"`
	PagesTotal int       `json:"pages_total"`
	Notes      []string  `json:"notes"`
	// Sources are the site's views by where they came from (without a
	// page: they are counted per site).
	Sources *sources `json:"sources"`
}

// stepFor returns the step that suits a range of span: a few hundred
// points at most.
func stepFor(span time.Duration) query.Step {
	switch {
	case span <= 3*time.Hour:
		return query.Minute
	case span <= 8*24*time.Hour:
		return query.Hour
	case span <= 400*24*time.Hour:
		return query.Day
	}
	return query.Month
}

// viewRequest reads api/view's parameters: site, from and to (Unix
// milliseconds), page and top (optional).
func (d *Dashboard) viewRequest(r *http.Request) (query.Request, error) {
	q := r.URL.Query()
	req := query.Request{Site: q.Get("site"), Page: q.Get("page"), Measures: measures}
	ms := func(key string) (time.Time, error) {
		n, err := strconv.ParseInt(q.Get(key), 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("%w: %s: a time in Unix milliseconds is required", query.ErrBadRequest, key)
		}
		return time.UnixMilli(n).UTC(), nil
	}
	var err error
	if req.From, err = ms("from"); err != nil {
		return req, err
	}
	if req.To, err = ms("to"); err != nil {
		return req, err
	}
	switch {
	case req.Site == "":
		return req, fmt.Errorf("%w: site is required", query.ErrBadRequest)
	case len(req.Site) > MaxPage || len(req.Page) > MaxPage:
		return req, fmt.Errorf("%w: site or page longer than %d bytes", query.ErrBadRequest, MaxPage)
	case !req.From.Before(req.To):
		return req, fmt.Errorf("%w: from must be before to", query.ErrBadRequest)
	case req.To.Sub(req.From) > MaxRange:
		return req, fmt.Errorf("%w: a range of at most %d days", query.ErrBadRequest, MaxRange/(24*time.Hour))
	}
	if req.Page == "" {
		req.Top = d.cfg.Top
		if s := q.Get("top"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return req, fmt.Errorf("%w: top: a positive number", query.ErrBadRequest)
			}
			req.Top = min(n, d.cfg.Top)
		}
	}
	return req, nil
}

// view answers api/view: the range at the step that suits it (coarser
// where the finer buckets are past their retention), with the previous
// period of the same length, the visitors, and without a page the top
// pages.
func (d *Dashboard) view(ctx context.Context, r *http.Request) (any, error) {
	req, err := d.viewRequest(r)
	if err != nil {
		return nil, err
	}
	rep := &viewReply{Site: req.Site, Page: req.Page, PageShown: query.Shown(req.Page), Notes: []string{}, Pages: []page{}}
	span := req.To.Sub(req.From)
	req.Step = stepFor(span)
	for {
		_, err := d.reader.Check(req)
		var re *query.RetentionError
		if errors.As(err, &re) && req.Step < query.Month {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s buckets are kept for %s (buckets.%s): this range is shown per %s.",
				re.Level, re.Retention, re.Key, req.Step+1))
			req.Step++
			continue
		}
		if err != nil {
			return nil, err
		}
		break
	}
	res, err := d.reader.Query(ctx, req)
	if err != nil {
		return nil, err
	}
	rep.Step, rep.From, rep.To = res.Request.Step.String(), res.Request.From.UnixMilli(), res.Request.To.UnixMilli()
	if res.Request.Step < query.Month {
		rep.StepMS = res.Request.Step.Next(res.Request.From).Sub(res.Request.From).Milliseconds()
	}
	rep.Times = make([]int64, len(res.Times))
	for i, t := range res.Times {
		rep.Times[i] = t.UnixMilli()
	}
	rep.Totals, rep.Series = valuesOf(res, &res.Site, -1), seriesOf(res, &res.Site)
	rep.PagesTotal = res.Pages
	if req.Page != "" {
		rep.PagesTotal = 0
	}

	var names []string
	for k := range res.Series {
		if req.Page != "" {
			break
		}
		s := &res.Series[k]
		rep.Pages = append(rep.Pages, page{Page: s.Page, values: valuesOf(res, s, -1), Spark: s.Counts})
		names = append(names, s.Page)
	}
	v, pv, note, err := d.visitors(ctx, res.Request, names)
	if err != nil {
		return nil, err
	}
	if note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	rep.Visitors = v
	for i := range rep.Pages {
		rep.Pages[i].Visitors = pv[rep.Pages[i].Page]
	}

	rep.Previous, rep.PrevNote, err = d.previous(ctx, res.Request)
	if err != nil {
		return nil, err
	}
	if req.Page == "" {
		if rep.Sources, err = d.sources(ctx, res.Request); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// previous returns the period of the same length just before req (the
// same number of steps), or why there is none.
func (d *Dashboard) previous(ctx context.Context, req query.Request) (*period, string, error) {
	steps := 0
	for t := req.From; t.Before(req.To); t = req.Step.Next(t) {
		steps++
	}
	prev := req
	prev.To = req.From
	if req.Step == query.Month {
		prev.From = req.From.AddDate(0, -steps, 0)
	} else {
		prev.From = req.From.Add(-req.To.Sub(req.From))
	}
	if req.Page == "" {
		prev.Top, prev.SiteOnly = 0, true
	}
	if _, err := d.reader.Check(prev); err != nil {
		if errors.Is(err, query.ErrRetention) || errors.Is(err, query.ErrBadRequest) {
			return nil, "The previous period cannot be shown: " + err.Error(), nil
		}
		return nil, "", err
	}
	res, err := d.reader.Query(ctx, prev)
	if err != nil {
		return nil, "", err
	}
	p := &period{From: res.Request.From.UnixMilli(), To: res.Request.To.UnixMilli(),
		Totals: valuesOf(res, &res.Site, -1), Series: seriesOf(res, &res.Site)}
	if p.Visitors, _, _, err = d.visitors(ctx, res.Request, nil); err != nil {
		return nil, "", err
	}
	return p, "", nil
}

// visitors returns the unique visitors of req's site (or page) over the
// whole salt periods its range touches, and of each of pages: per day,
// or per month where the salts are monthly. nil where none is recorded,
// and with a note saying why where the range reaches back past the
// visitors documents' retention.
func (d *Dashboard) visitors(ctx context.Context, req query.Request, pages []string) (*visitors, map[string]*visitors, string, error) {
	vreq := query.Request{Site: req.Site, Page: req.Page, Measures: []query.Measure{query.Visitors}}
	var site *query.VisitorsResult
	var byPage map[string]*query.VisitorsResult
	for _, step := range []query.Step{query.Day, query.Month} {
		vreq.Step, vreq.From, vreq.To = step, step.Truncate(req.From), step.Ceil(req.To)
		var err error
		site, err = d.reader.Visitors(ctx, vreq)
		if errors.Is(err, query.ErrUnknownSite) {
			return nil, nil, "", nil // no visitors document at all
		}
		if err == nil && len(pages) > 0 {
			byPage, err = d.reader.PageVisitors(ctx, vreq, pages)
		}
		if (errors.Is(err, query.ErrBadRequest) || errors.Is(err, query.ErrRetention)) && step == query.Day {
			continue // monthly salts: a month cannot be split into days (and its documents have the monthly retention)
		}
		if errors.Is(err, query.ErrRetention) {
			return nil, nil, "Visitors cannot be shown: " + err.Error(), nil
		}
		if err != nil {
			return nil, nil, "", err
		}
		break
	}
	whole := !vreq.From.Equal(req.From) || !vreq.To.Equal(req.To)
	out := map[string]*visitors{}
	for p, res := range byPage {
		out[p] = visitorsOf(res, whole)
	}
	return visitorsOf(site, whole), out, "", nil
}

// visitorsOf sums res's points (nil without any document); whole says
// the range was widened to whole periods.
func visitorsOf(res *query.VisitorsResult, whole bool) *visitors {
	t := res.Total()
	if t.Docs == 0 {
		return nil
	}
	periods := 0
	for _, p := range res.Points {
		if p.Docs > 0 {
			periods++
		}
	}
	v := &visitors{Value: t.Estimate, Error: t.Error, Kind: "visitors", Label: "unique visitors",
		From: res.Request.From.UnixMilli(), To: res.Request.To.UnixMilli()}
	unit, per := "day", "daily"
	if res.Request.Step == query.Month && !res.DailySum {
		unit, per = "month", "monthly"
	}
	if periods > 1 || res.DailySum {
		v.Kind, v.Label = "visitors_"+per+"_sum", "sum of "+per+" unique visitors"
	}
	if whole {
		v.Label += " (whole UTC " + unit + "s)"
	}
	return v
}
