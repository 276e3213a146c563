package query

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/referrer"
)

// NotCounted is the value of the views of a range that no value of a
// dimension holds: days counted before the counts by dimension were on
// (or by a host without them).
const NotCounted = "(not counted)"

// Breakdown is a site's views over a range by the values of one
// dimension (package dims), from the sites' daily totals.
type Breakdown struct {
	// Request is the request answered, its range aligned to whole days.
	Request Request
	// Dim is the dimension.
	Dim dims.Dim
	// Views are all the views of the range.
	Views int64
	// Values are the dimension's values by views, most first (ties by
	// value); with Top, the first Top and dims.Other holding the rest;
	// NotCounted the views no value holds. They sum to Views.
	Values []DimValue
}

// DimValue is one value's views. A crawler (dims.Crawler) the lists name
// has their operator and purpose (botclass.Rules.CrawlerNamed, the
// purpose's name: "search", "ai-training"...); any other value, and the
// rows that are not a crawler ("(people)", "(hosting network)", "(other
// suspect)", dims.Other, NotCounted), has none ("").
//
// A referrer host (dims.Referrer) has its channel (Channel: the
// channel's name, "search", "social"...) as the lists built in classify
// it now (referrer.Classifier.HostChannel): the channel a logtally with
// older lists counted its views under may differ. dims.Unknown (a line
// without a referrer field) has the channel dims.Unknown, as it was
// counted; dims.Other and NotCounted have none.
type DimValue struct {
	Value    string `json:"value"`
	Views    int64  `json:"views"`
	Operator string `json:"operator,omitempty"`
	Purpose  string `json:"purpose,omitempty"`
	Channel  string `json:"channel,omitempty"`
}

// Share returns v's share of b's views, in percent.
func (b *Breakdown) Share(v DimValue) float64 {
	if b.Views == 0 {
		return 0
	}
	return 100 * float64(v.Views) / float64(b.Views)
}

// CheckBreakdown validates a Breakdown request without reading anything:
// a site's whole days (the counts are kept per site and day), no page, no
// measure.
func (r *Reader) CheckBreakdown(req Request) (Request, error) {
	if req.Page != "" {
		return req, badRequest("where traffic comes from is counted per site, not per page")
	}
	req, err := dailyViews(req, "where traffic comes from is", "it")
	if err != nil {
		return req, err
	}
	return req, r.checkRetention(req, bucket.SiteLevel, "site totals")
}

// Breakdown answers req with the views of each value of d over its range
// (req.Top: the first Top values, the rest as dims.Other). A site without
// any day is ErrUnknownSite.
func (r *Reader) Breakdown(ctx context.Context, req Request, d dims.Dim) (*Breakdown, error) {
	bs, err := r.Breakdowns(ctx, req, d)
	if err != nil {
		return nil, err
	}
	return bs[0], nil
}

// Breakdowns answers req as Breakdown does for each of ds, in that order,
// from one read of the site's days.
func (r *Reader) Breakdowns(ctx context.Context, req Request, ds ...dims.Dim) ([]*Breakdown, error) {
	req, err := r.CheckBreakdown(req)
	if err != nil {
		return nil, err
	}
	coll := r.DB.Collection(r.Collections.SiteName())
	f := siteDays(req)
	proj := bson.D{{Key: bucket.FieldID, Value: 1}, {Key: bucket.FieldViews, Value: 1}}
	for _, d := range ds {
		proj = append(proj, bson.E{Key: bucket.FieldSources + "." + d.Code(), Value: 1})
	}
	cur, err := coll.Find(ctx, f, options.Find().SetProjection(proj))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", coll.Name(), err)
	}
	defer cur.Close(ctx)
	found := false
	var views int64
	vals := make([]map[string]int64, len(ds))
	for i := range vals {
		vals[i] = map[string]int64{}
	}
	for cur.Next(ctx) {
		found = true
		id, _ := cur.Current.Lookup(bucket.FieldID).StringValueOK()
		if v, err := cur.Current.LookupErr(bucket.FieldViews); err == nil {
			n, err := intValue(v)
			if err != nil {
				return nil, fmt.Errorf("read %s: %s: %s: %w", coll.Name(), id, bucket.FieldViews, err)
			}
			views += n
		}
		src, err := bucket.SiteSources(cur.Current)
		if err != nil {
			return nil, fmt.Errorf("read %s: %s: %w", coll.Name(), id, err)
		}
		for i, d := range ds {
			for v, n := range src[d] {
				vals[i][v] += n
			}
		}
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", coll.Name(), err)
	}
	if !found {
		if err := r.exists(ctx, req.Site, ""); err != nil {
			return nil, err
		}
	}
	out := make([]*Breakdown, len(ds))
	for i, d := range ds {
		out[i] = BreakdownOf(req, d, views, vals[i])
	}
	return out, nil
}

// BreakdownOf returns the Breakdown of d's values vals (their views)
// among views, as Reader.Breakdowns gives the site days' (req's Top
// applied; the views no value holds as NotCounted): for counts read
// elsewhere too (a dry run's).
func BreakdownOf(req Request, d dims.Dim, views int64, vals map[string]int64) *Breakdown {
	b := &Breakdown{Request: req, Dim: d, Views: views}
	var counted int64
	for v, n := range vals {
		b.Values = append(b.Values, DimValue{Value: v, Views: n})
		counted += n
	}
	slices.SortFunc(b.Values, func(x, y DimValue) int { return cmp.Or(cmp.Compare(y.Views, x.Views), cmp.Compare(x.Value, y.Value)) })
	b.Values = topValues(b.Values, req.Top)
	if missing := b.Views - counted; missing > 0 {
		b.Values = append(b.Values, DimValue{Value: NotCounted, Views: missing})
	}
	switch d {
	case dims.Crawler:
		lists := botclass.Default()
		for i, v := range b.Values {
			if c, ok := lists.CrawlerNamed(v.Value); ok {
				b.Values[i].Operator, b.Values[i].Purpose = c.Operator, c.Purpose.String()
			}
		}
	case dims.Referrer:
		c := referrer.New(nil)
		for i, v := range b.Values {
			if ch, ok := c.HostChannel(v.Value); ok {
				b.Values[i].Channel = ch.String()
			} else if v.Value == dims.Unknown { // no referrer logged: no channel either
				b.Values[i].Channel = dims.Unknown
			}
		}
	}
	return b
}

// topValues returns vs (sorted by views, most first; NotCounted, if
// there, last) with its first top values and dims.Other holding the rest
// (and the values stored as dims.Other), when it has more than top
// besides NotCounted; vs itself otherwise (top <= 0: all).
func topValues(vs []DimValue, top int) []DimValue {
	n := len(vs)
	if n > 0 && vs[n-1].Value == NotCounted {
		n--
	}
	if top <= 0 || n <= top {
		return vs
	}
	var rest int64
	kept := make([]DimValue, 0, top+2)
	for _, v := range vs[:n] {
		if v.Value == dims.Other || len(kept) >= top {
			rest += v.Views
			continue
		}
		kept = append(kept, v)
	}
	return append(append(kept, DimValue{Value: dims.Other, Views: rest}), vs[n:]...)
}

// Top returns b with its first n values and dims.Other holding the rest,
// as a Request's Top gives them (NotCounted stays last); b itself when
// it has no more than n.
func (b *Breakdown) Top(n int) *Breakdown {
	vs := topValues(b.Values, n)
	if len(vs) == len(b.Values) {
		return b
	}
	out := *b
	out.Values = vs
	return &out
}

// WriteBreakdown writes b as format: "table" (value, views, share in
// percent, a total line, the range), "csv" (header
// <dimension>,views,share_percent; a line per value) or "json"
// ({dimension, views, values: [{value, views, share_percent}]}). Two
// dimensions have columns of facts from the lists after the value (see
// DimValue), "" for none: the crawler its operator and purpose, the
// referrer its channel; in the table and csv as columns of those names,
// in json as fields of those names on every value.
func WriteBreakdown(w io.Writer, b *Breakdown, format string, opts Options) error {
	type row struct {
		Value        string  `json:"value"`
		Operator     *string `json:"operator,omitempty"`
		Purpose      *string `json:"purpose,omitempty"`
		Channel      *string `json:"channel,omitempty"`
		Views        int64   `json:"views"`
		SharePercent float64 `json:"share_percent"`
	}
	names, facts := factColumns(b.Dim)
	rows := make([]row, len(b.Values))
	head := slices.Concat([]string{b.Dim.String()}, names, []string{"views", "share_percent"})
	records := [][]string{head}
	for i, v := range b.Values {
		rows[i] = row{Value: v.Value, Views: v.Views, SharePercent: b.Share(v)}
		switch b.Dim {
		case dims.Crawler:
			rows[i].Operator, rows[i].Purpose = &b.Values[i].Operator, &b.Values[i].Purpose
		case dims.Referrer:
			rows[i].Channel = &b.Values[i].Channel
		}
		records = append(records, slices.Concat([]string{v.Value}, facts(v), []string{strconv.FormatInt(v.Views, 10), strconv.FormatFloat(b.Share(v), 'f', -1, 64)}))
	}
	return writeShares(w, format, func(w io.Writer) error { return writeBreakdownTable(w, b, withUTC(opts)) }, records,
		map[string]any{"dimension": b.Dim.String(), "views": b.Views, "values": rows})
}

// factColumns returns the names of d's columns of facts from the lists
// (WriteBreakdown) and a value's facts in them.
func factColumns(d dims.Dim) (names []string, facts func(DimValue) []string) {
	switch d {
	case dims.Crawler:
		return []string{"operator", "purpose"}, func(v DimValue) []string { return []string{v.Operator, v.Purpose} }
	case dims.Referrer:
		return []string{"channel"}, func(v DimValue) []string { return []string{v.Channel} }
	}
	return nil, func(DimValue) []string { return nil }
}

func writeBreakdownTable(w io.Writer, b *Breakdown, opts Options) error {
	names, facts := factColumns(b.Dim)
	widths := make([]int, 1+len(names)+1) // the value, the facts, the views
	widths[0] = len(b.Dim.String())
	for i, n := range names {
		widths[1+i] = len(n)
	}
	widths[len(widths)-1] = max(len("views"), len(strconv.FormatInt(b.Views, 10)))
	for _, v := range b.Values {
		widths[0] = max(widths[0], len(Shown(v.Value)))
		for i, f := range facts(v) {
			widths[1+i] = max(widths[1+i], len(Shown(f)))
		}
	}
	bw := bufio.NewWriter(w)
	row := func(cells []string, share string) {
		for i, c := range cells {
			if i == len(cells)-1 {
				fmt.Fprintf(bw, "%*s", widths[i], c)
			} else {
				fmt.Fprintf(bw, "%-*s  ", widths[i], c)
			}
		}
		fmt.Fprintf(bw, "  %7s\n", share)
	}
	row(slices.Concat([]string{b.Dim.String()}, names, []string{"views"}), "share")
	for _, v := range b.Values {
		fs := facts(v)
		for i := range fs {
			fs[i] = Shown(fs[i])
		}
		row(slices.Concat([]string{Shown(v.Value)}, fs, []string{strconv.FormatInt(v.Views, 10)}), strconv.FormatFloat(b.Share(v), 'f', 2, 64)+"%")
	}
	total := "100.00%"
	if b.Views == 0 {
		total = "0.00%"
	}
	row(slices.Concat([]string{"total"}, make([]string, len(names)), []string{strconv.FormatInt(b.Views, 10)}), total)
	req := b.Request
	last := req.Step.Truncate(req.To.Add(-time.Nanosecond))
	fmt.Fprintf(bw, "(site %s, %s to %s (%s), from the site totals)\n", req.Site,
		Label(req.From, req.Step, opts.Location), Label(last, req.Step, opts.Location), zoneName(opts.Location))
	return bw.Flush()
}
