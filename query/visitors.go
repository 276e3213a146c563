package query

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/visitor"
)

// Visitors is the unique visitors of a site: the estimate of its
// HyperLogLog registers (package visitor), read by Reader.Visitors. It is
// counted per site (and, at a lower precision, per page) and salt period,
// and is read alone.
const Visitors Measure = numMeasures

// visitorsName is Visitors' name and column; visitorsSumColumn its column
// when a step adds several daily uniques.
const (
	visitorsName      = "visitors"
	visitorsSumColumn = "visitors_daily_sum"
	visitorsErrColumn = "visitors_error"
)

// VisitorPoint is the visitors of one step.
type VisitorPoint struct {
	// Time is the step's start (UTC).
	Time time.Time
	// Estimate is the sum of the estimates of the visitors documents
	// whose period starts in the step: one document's (the uniques of a
	// day, or of a month with monthly salts), or several daily uniques
	// added (a month step over daily salts). 0 without a document.
	Estimate float64
	// Error is the relative standard error of Estimate (1 s.e.): the
	// estimator's, StdError of the document's precision, or for a sum of
	// independent daily estimates sqrt(Σ(σ·e)²)/Σe. 0 without a
	// document.
	Error float64
	// Docs is the number of documents read into the step; Periods which
	// salt periods they had (a bit per visitor.Period).
	Docs    int
	Periods uint8
}

// PeriodName returns the salt periods of p's documents: "day", "month",
// "day+month" (mixed), or "" without a document.
func (p *VisitorPoint) PeriodName() string { return periodNames(p.Periods) }

func periodNames(bits uint8) string {
	var names []string
	for _, per := range []visitor.Period{visitor.Day, visitor.Month} {
		if bits&(1<<per) != 0 {
			names = append(names, per.String())
		}
	}
	return strings.Join(names, "+")
}

// VisitorsResult is the unique visitors of a site over a range, one point
// per step.
type VisitorsResult struct {
	// Request is the request answered, its range aligned to its step.
	Request Request
	// Points holds one point per step, from Request.From.
	Points []VisitorPoint
	// DailySum: daily-salt documents were read at a month step: the
	// values are sums of daily uniques, not uniques, and are labelled so
	// (visitors_daily_sum), even a month with one day of visitors.
	DailySum bool
	// Periods are the salt periods of every document read (a bit per
	// visitor.Period): both bits when the range mixes them.
	Periods uint8
	// Collection is where the registers were read.
	Collection string
}

// Column returns the name of r's value column: "visitors", or
// "visitors_daily_sum" when a step adds daily uniques.
func (r *VisitorsResult) Column() string {
	if r.DailySum {
		return visitorsSumColumn
	}
	return visitorsName
}

// CheckVisitors validates a visitors request without reading anything,
// as Check does: the site's or one page's (no Top), at a day or month step
// (visitors exist per salt period only), with Measures nil or Visitors
// alone. Visitors documents have the retention of the level of their salt
// period (bucket.VisitorLevel: day daily_retention, month
// monthly_retention): a day step, which reads day-salted documents, is
// checked against the daily retention, a month step against that of the
// documents of Reader.SaltPeriod. Reading checks the documents of the
// other salt period that a month step meets (a salt_period changed) against
// theirs (checkVisitorRetention).
func (r *Reader) CheckVisitors(req Request) (Request, error) {
	switch {
	case req.Top > 0:
		return req, badRequest("visitors are counted per site: -measure visitors takes no top")
	case req.Step == Minute || req.Step == Hour:
		return req, badRequest("visitors exist per salt period (a day, or a month with salt_period = month): step %s: use -step day or -step month", req.Step)
	case len(req.Measures) > 1 || len(req.Measures) == 1 && req.Measures[0] != Visitors:
		return req, badRequest("visitors are counted per site and read alone: -measure visitors with no other measure")
	}
	ms := req.Measures
	req.Measures = nil
	req, err := checkRequest(req)
	req.Measures = ms
	if err != nil {
		return req, err
	}
	per := r.SaltPeriod
	if req.Step == Day {
		per = visitor.Day
	}
	return req, r.checkRetention(req, bucket.VisitorLevel(per), visitorDocs(per))
}

// visitorDocs names the visitors documents of salt period p in a
// RetentionError.
func visitorDocs(p visitor.Period) string { return p.String() + "-salted visitors documents" }

// checkVisitorRetention returns a *RetentionError when a document of salt
// period p, of the step starting at start, is older than the documents of
// p kept whole: the step's other documents of p have expired, its answer
// would be short. Only a month step meets documents whose retention
// CheckVisitors did not check (the other salt period's).
func (r *Reader) checkVisitorRetention(req Request, p visitor.Period, start time.Time) error {
	l := bucket.VisitorLevel(p)
	if cutoff, ok := r.keptFrom(l, req.Step); ok && start.Before(cutoff) {
		return &RetentionError{Step: req.Step, Level: l.String(), Key: r.Retention.Key(l), Retention: r.Retention.Of(l),
			From: req.From, To: req.To, Cutoff: cutoff, Docs: visitorDocs(p)}
	}
	return nil
}

// Visitors answers req with the site's unique visitors per step, read
// from the visitors collection (one document per site and salt period).
// At a day step each day is its daily-salt document's estimate; a
// monthly-salt document cannot be split into days and is refused (use a
// month step). At a month step a month is its monthly-salt document's
// estimate, or the sum of its days' daily uniques (DailySum). A step
// without a document is 0. A site without any visitors document is
// ErrUnknownSite.
func (r *Reader) Visitors(ctx context.Context, req Request) (*VisitorsResult, error) {
	req, err := r.CheckVisitors(req)
	if err != nil {
		return nil, err
	}
	page := any(bson.D{{Key: "$exists", Value: false}}) // a site's documents have no page
	if req.Page != "" {
		page = req.Page
	}
	byPage, err := r.readVisitors(ctx, req, page)
	if err != nil {
		return nil, err
	}
	res := byPage[req.Page]
	if res == nil {
		if err := r.visitorsExist(ctx, req.Site); err != nil {
			return nil, err
		}
		res = newVisitorsResult(req, r.Collections.VisitorName())
	}
	return res, nil
}

// MaxVisitorPages bounds the pages of one PageVisitors request.
const MaxVisitorPages = 1000

// PageVisitors answers req (a site's, without Page) for each of pages at
// once, as Visitors answers one page, in one find: the result of a page
// without any visitors document in the range is left out (pages are
// counted with [visitors] pages; a page seen by bots alone has none).
func (r *Reader) PageVisitors(ctx context.Context, req Request, pages []string) (map[string]*VisitorsResult, error) {
	req, err := r.CheckVisitors(req)
	switch {
	case err != nil:
		return nil, err
	case req.Page != "":
		return nil, badRequest("page visitors: the pages are listed, not one page")
	case len(pages) > MaxVisitorPages:
		return nil, badRequest("page visitors: %d pages, at most %d", len(pages), MaxVisitorPages)
	case len(pages) == 0:
		return map[string]*VisitorsResult{}, nil
	}
	return r.readVisitors(ctx, req, bson.D{{Key: "$in", Value: pages}})
}

func newVisitorsResult(req Request, coll string) *VisitorsResult {
	res := &VisitorsResult{Request: req, Collection: coll}
	for t := req.From; t.Before(req.To); t = req.Step.Next(t) {
		res.Points = append(res.Points, VisitorPoint{Time: t})
	}
	return res
}

// readVisitors reads the visitors documents of req's site and range whose
// page matches page (a filter value), into one result per page ("" for
// the site's).
func (r *Reader) readVisitors(ctx context.Context, req Request, page any) (map[string]*VisitorsResult, error) {
	name := r.Collections.VisitorName()
	out := map[string]*VisitorsResult{}
	// Per result and step: Σ(σe)², and the largest σ (an empty sum's
	// error).
	type errs struct{ sq, sigma []float64 }
	acc := map[string]*errs{}
	coll := r.DB.Collection(name)
	f := bson.D{
		{Key: bucket.FieldMetadata + "." + bucket.FieldSite, Value: req.Site},
		{Key: bucket.FieldMetadata + "." + bucket.FieldPage, Value: page},
		{Key: bucket.FieldMetadata + "." + bucket.FieldDate, Value: bson.D{
			{Key: "$gte", Value: bson.NewDateTimeFromTime(req.From)},
			{Key: "$lt", Value: bson.NewDateTimeFromTime(req.To)},
		}},
	}
	proj := bson.D{
		{Key: bucket.FieldID, Value: 1}, {Key: bucket.FieldMetadata, Value: 1},
		{Key: bucket.FieldPrecision, Value: 1}, {Key: bucket.FieldRegisters, Value: 1},
	}
	cur, err := coll.Find(ctx, f, options.Find().SetProjection(proj))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		id, _ := cur.Current.Lookup(bucket.FieldID).StringValueOK()
		d, err := decodeVisitors(cur.Current)
		if err != nil {
			return nil, fmt.Errorf("read %s: %s: %w", name, id, err)
		}
		pg, _ := cur.Current.Lookup(bucket.FieldMetadata, bucket.FieldPage).StringValueOK()
		if req.Step == Day && d.period == visitor.Month {
			return nil, badRequest("site %q's visitors of %s are kept per month (salt_period = month, document %s): a month's uniques cannot be split into days; use -step month",
				req.Site, d.start.Format("2006-01"), id)
		}
		if err := r.checkVisitorRetention(req, d.period, req.Step.Truncate(d.start)); err != nil {
			return nil, err
		}
		i := req.Step.Steps(req.From, req.Step.Truncate(d.start))
		res := out[pg]
		if res == nil {
			res = newVisitorsResult(req, name)
			out[pg] = res
			acc[pg] = &errs{make([]float64, len(res.Points)), make([]float64, len(res.Points))}
		}
		if i < 0 || i >= len(res.Points) {
			continue
		}
		p, e := &res.Points[i], acc[pg]
		est, s := d.sketch.Estimate(), visitor.StdError(d.sketch.P)
		p.Estimate += est
		e.sq[i] += (s * est) * (s * est)
		e.sigma[i] = max(e.sigma[i], s)
		p.Docs++
		p.Periods |= 1 << d.period
		res.Periods |= 1 << d.period
		if req.Step == Month && d.period == visitor.Day {
			res.DailySum = true // whatever the days found: the label follows the salts
		}
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	for pg, res := range out {
		e := acc[pg]
		for i := range res.Points {
			p := &res.Points[i]
			switch {
			case p.Docs == 0:
				continue
			case p.Estimate > 0:
				p.Error = math.Sqrt(e.sq[i]) / p.Estimate
			default:
				p.Error = e.sigma[i]
			}
		}
	}
	return out, nil
}

// Total returns the sum of r's points: the estimates added (a sum of
// uniques when r has more than one point with a document, not uniques:
// one person in two steps counts twice), with the error of independent
// estimates, sqrt(Σ(σe)²)/Σe.
func (r *VisitorsResult) Total() VisitorPoint {
	var t VisitorPoint
	var sq, sigma float64
	for _, p := range r.Points {
		if p.Docs == 0 {
			continue
		}
		t.Estimate += p.Estimate
		sq += (p.Error * p.Estimate) * (p.Error * p.Estimate)
		sigma = max(sigma, p.Error)
		t.Docs += p.Docs
		t.Periods |= p.Periods
	}
	switch {
	case t.Docs == 0:
	case t.Estimate > 0:
		t.Error = math.Sqrt(sq) / t.Estimate
	default:
		t.Error = sigma
	}
	if len(r.Points) > 0 {
		t.Time = r.Points[0].Time
	}
	return t
}

// visitorsExist returns nil if site has a visitors document, else
// ErrUnknownSite.
func (r *Reader) visitorsExist(ctx context.Context, site string) error {
	name := r.Collections.VisitorName()
	err := r.DB.Collection(name).FindOne(ctx, bson.D{{Key: bucket.FieldMetadata + "." + bucket.FieldSite, Value: site}},
		options.FindOne().SetProjection(bson.D{{Key: bucket.FieldID, Value: 1}})).Err()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, mongo.ErrNoDocuments):
		return fmt.Errorf("%w %q: no visitors document in %s (visitors are counted with [visitors] enabled, from hits of people with a client address)",
			ErrUnknownSite, site, name)
	}
	return fmt.Errorf("read %s: %w", name, err)
}

// visitorsDoc is one visitors document as read.
type visitorsDoc struct {
	start  time.Time
	period visitor.Period
	sketch *visitor.Sketch
}

// DecodeVisitors reads a visitors document as the query does: its
// period's start, its salt period and its registers as a sketch (tests
// compare them with sketches of their own).
func DecodeVisitors(raw bson.Raw) (start time.Time, period visitor.Period, s *visitor.Sketch, err error) {
	d, err := decodeVisitors(raw)
	if err != nil {
		return time.Time{}, 0, nil, err
	}
	return d.start, d.period, d.sketch, nil
}

// decodeVisitors reads a visitors document: its date, its salt period
// (metadata.period, else its _id's prefix), its precision and its
// registers ({"<index>": int32 or int64}), checked.
func decodeVisitors(raw bson.Raw) (*visitorsDoc, error) {
	var d visitorsDoc
	dv, err := raw.LookupErr(bucket.FieldMetadata, bucket.FieldDate)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: missing", bucket.FieldMetadata, bucket.FieldDate)
	}
	dt, ok := dv.DateTimeOK()
	if !ok {
		return nil, fmt.Errorf("%s.%s: a %s, not a date", bucket.FieldMetadata, bucket.FieldDate, dv.Type)
	}
	d.start = time.UnixMilli(dt).UTC()
	per := ""
	if v, err := raw.LookupErr(bucket.FieldMetadata, bucket.FieldPeriod); err == nil {
		per, _ = v.StringValueOK()
	} else if id, ok := raw.Lookup(bucket.FieldID).StringValueOK(); ok {
		per, _, _ = strings.Cut(id, ":")
	}
	if d.period, err = visitor.ParsePeriod(per); err != nil {
		return nil, fmt.Errorf("%s.%s: %w", bucket.FieldMetadata, bucket.FieldPeriod, err)
	}
	pv, err := raw.LookupErr(bucket.FieldPrecision)
	if err != nil {
		return nil, fmt.Errorf("%s: missing", bucket.FieldPrecision)
	}
	p, err := intValue(pv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bucket.FieldPrecision, err)
	}
	if p < int64(visitor.MinPrecision) || p > int64(visitor.MaxPrecision) {
		return nil, fmt.Errorf("%s: %d outside %d..%d", bucket.FieldPrecision, p, visitor.MinPrecision, visitor.MaxPrecision)
	}
	d.sketch = visitor.NewSketch(uint8(p))
	rv, err := raw.LookupErr(bucket.FieldRegisters)
	if err != nil {
		return &d, nil // no register: nobody yet
	}
	regs, ok := rv.DocumentOK()
	if !ok {
		return nil, fmt.Errorf("%s: a %s, not a document", bucket.FieldRegisters, rv.Type)
	}
	elems, err := regs.Elements()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bucket.FieldRegisters, err)
	}
	m := d.sketch.M()
	for _, e := range elems {
		i, err := strconv.Atoi(e.Key())
		if err != nil || i < 0 || i >= m {
			return nil, fmt.Errorf("%s.%s: not a register of precision %d (0..%d)", bucket.FieldRegisters, e.Key(), p, m-1)
		}
		n, err := intValue(e.Value())
		if err == nil && (n < 0 || n > int64(visitor.MaxRank(uint8(p)))) {
			err = fmt.Errorf("%d outside 0..%d", n, visitor.MaxRank(uint8(p)))
		}
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", bucket.FieldRegisters, e.Key(), err)
		}
		if _, err := d.sketch.SetMax(i, uint8(n)); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", bucket.FieldRegisters, e.Key(), err)
		}
	}
	return &d, nil
}
