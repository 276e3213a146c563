package dashboard

import (
	"context"
	"errors"

	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/query"
)

// SourcesTop is the values of each table of where traffic comes from, at
// most (fewer when Config.Top is lower); the rest are one "(other)" row.
const SourcesTop = 10

// sources are a site's views by where they came from, over whole UTC
// days: a table per dimension, in package dims' order.
type sources struct {
	// From and To are the whole UTC days read.
	From int64 `json:"from"`
	To   int64 `json:"to"`
	// Views are the views of those days.
	Views int64 `json:"views"`
	// Counted is false when no view of those days was counted by any
	// dimension (the counts by dimension were off).
	Counted bool `json:"counted"`
	// Note says why nothing is shown (the site totals' retention).
	Note string `json:"note"`
	// Dims are the tables, in dims order.
	Dims []sourceTable `json:"dims"`
	// Attribution are the lines the geo databases' licences ask.
	Attribution []string `json:"attribution"`
}

// sourceTable is one dimension's values by views, most first, then
// (other) and (not counted) (query.Breakdown): they sum to the views.
//
// The referrer's table also has, for each channel of the channel table,
// the referrers of that channel (ByChannel: the first of its hosts by
// views, each host's channel as the lists give it now, then (other) with
// the rest of the channel's views): what clicking a channel shows.
type sourceTable struct {
	Dim       string                 `json:"dimension"`
	Values    []sourceRow            `json:"values"`
	ByChannel map[string][]sourceRow `json:"by_channel,omitempty"`
}

// sourceRow is one value: as it is (value: it came from the logs) and as
// it is shown (shown: query.Shown), its views and share in percent; a
// crawler the lists name its operator and purpose (query.DimValue), as
// shown too (they are the lists', not the logs', but go the same way).
type sourceRow struct {
	Value    string  `json:"value"`
	Shown    string  `json:"shown"`
	Views    int64   `json:"views"`
	Share    float64 `json:"share"`
	Operator string  `json:"operator,omitempty"`
	Purpose  string  `json:"purpose,omitempty"`
	Channel  string  `json:"channel,omitempty"` // a referrer's (query.DimValue)
}

// allDims are the dimensions the page shows, in order.
var allDims = func() []dims.Dim {
	out := make([]dims.Dim, dims.N)
	for i := range out {
		out[i] = dims.Dim(i)
	}
	return out
}()

// sources returns the site's views of req's range, widened to whole UTC
// days, by every dimension: read through query.Reader.Breakdowns.
func (d *Dashboard) sources(ctx context.Context, req query.Request) (*sources, error) {
	top := min(SourcesTop, d.cfg.Top)
	breq := query.Request{Site: req.Site, Step: query.Day, From: req.From, To: req.To} // every value: see byChannel
	s := &sources{Dims: []sourceTable{}, Attribution: d.cfg.Attribution}
	if s.Attribution == nil {
		s.Attribution = []string{}
	}
	checked, err := d.reader.CheckBreakdown(breq)
	if errors.Is(err, query.ErrRetention) || errors.Is(err, query.ErrBadRequest) {
		s.Note = "Where traffic comes from cannot be shown: " + err.Error()
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	s.From, s.To = checked.From.UnixMilli(), checked.To.UnixMilli()
	bs, err := d.reader.Breakdowns(ctx, breq, allDims...)
	if errors.Is(err, query.ErrUnknownSite) {
		return s, nil // no site total at all: no views
	}
	if err != nil {
		return nil, err
	}
	for _, b := range bs {
		s.Views = b.Views
		t := sourceTable{Dim: b.Dim.String(), Values: rowsOf(b, b.Top(top).Values)}
		for _, r := range t.Values {
			s.Counted = s.Counted || r.Value != query.NotCounted
		}
		if b.Dim == dims.Referrer {
			t.ByChannel = byChannel(b, bs[dims.Channel], top)
		}
		s.Dims = append(s.Dims, t)
	}
	return s, nil
}

// rowsOf returns vs, values of b, as rows.
func rowsOf(b *query.Breakdown, vs []query.DimValue) []sourceRow {
	rows := make([]sourceRow, 0, len(vs))
	for _, v := range vs {
		rows = append(rows, sourceRow{Value: v.Value, Shown: query.Shown(v.Value), Views: v.Views, Share: b.Share(v),
			Operator: query.Shown(v.Operator), Purpose: query.Shown(v.Purpose), Channel: v.Channel})
	}
	return rows
}

// byChannel returns, for each value of the channels' breakdown ch, the
// first top hosts of ref (every value of the referrers' breakdown) of
// that channel and (other) with the rest of the channel's views. Where
// the hosts shown hold more views than the channel (lists that changed
// since the views were counted), no (other) row is added.
func byChannel(ref, ch *query.Breakdown, top int) map[string][]sourceRow {
	out := map[string][]sourceRow{}
	for _, c := range ch.Values {
		if c.Value == dims.Other || c.Value == query.NotCounted || c.Views == 0 {
			continue
		}
		var kept []query.DimValue
		var sum int64
		for _, v := range ref.Values {
			if v.Channel == c.Value && len(kept) < top {
				kept = append(kept, v)
				sum += v.Views
			}
		}
		if rest := c.Views - sum; rest > 0 {
			kept = append(kept, query.DimValue{Value: dims.Other, Views: rest})
		}
		out[c.Value] = rowsOf(ref, kept)
	}
	return out
}
