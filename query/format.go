package query

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/guptarohit/asciigraph"
)

// Formats are the names Write takes.
var Formats = []string{"table", "csv", "json", "chart"}

// ChartSeries is how many pages a chart draws at most: the first ones of
// the result, which are the most viewed.
const ChartSeries = 5

// Options are Write's settings.
type Options struct {
	// Location is the zone the times are shown in; nil means UTC.
	Location *time.Location
	// Color draws each chart series in its own color (ANSI escapes).
	// Without it, each series after the first is drawn with its own
	// character, named in the legend.
	Color bool
	// Height is a chart's height in lines; 0 means 15.
	Height int
}

// Write writes res to w in format: "table" (aligned columns: time, page,
// count, then each page's total; pages as Shown shows them), "csv" (header time,page,count; one line
// per step and page), "json" (an array of {time, page, count}) or "chart"
// (an asciigraph line chart of at most ChartSeries pages, with a legend
// naming them as Shown does).
// CSV and JSON times are RFC 3339 in the zone; table and chart labels are
// shorter.
//
// With measures other than the views alone (Request.Measures), the count
// column is the measure's (Measure.Column: "bytes", "rt_avg_ms"…) and a
// total is the measure over the whole range (error_rate of the range's
// hits, the greatest rt_max); CSV and JSON have one column or key per
// measure, in the request's order. Table and chart show one measure.
func Write(w io.Writer, res *Result, format string, opts Options) error {
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	if ms := res.Request.measures(); len(ms) > 1 && (format == "table" || format == "chart") {
		return badRequest("%d measures: a %s shows one; use -format csv or json for more", len(ms), format)
	}
	var err error
	switch format {
	case "table":
		err = writeTable(w, res, opts)
	case "csv":
		err = writeCSV(w, res, opts)
	case "json":
		err = writeJSON(w, res, opts)
	case "chart":
		err = writeChart(w, res, opts)
	default:
		return badRequest("format %q: must be one of %s", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", format, err)
	}
	return nil
}

// Label formats t, a step start, for a table or chart in loc: the minute
// ("2026-11-23 10:05"), or for day and month steps that start at midnight
// in loc the date ("2026-11-23") or the month ("2026-11").
func Label(t time.Time, step Step, loc *time.Location) string {
	t = t.In(loc)
	midnight := t.Hour() == 0 && t.Minute() == 0
	switch {
	case step == Month && midnight && t.Day() == 1:
		return t.Format("2006-01")
	case step >= Day && midnight:
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02 15:04")
}

func zoneName(loc *time.Location) string {
	if loc == nil || loc == time.UTC {
		return "UTC"
	}
	return loc.String()
}

func writeTable(w io.Writer, res *Result, opts Options) error {
	m := res.Request.measures()[0]
	column := "count"
	if m != Views {
		column = m.Column()
	}
	head := "time (" + zoneName(opts.Location) + ")"
	timeW, pageW, countW := len(head), len("page"), len(column)
	labels := make([]string, len(res.Times))
	for i, t := range res.Times {
		labels[i] = Label(t, res.Request.Step, opts.Location)
		timeW = max(timeW, len(labels[i]))
	}
	values := make([][]string, len(res.Series)) // per series: the steps, then the total
	names := make([]string, len(res.Series))
	for k := range res.Series {
		s := &res.Series[k]
		names[k] = Shown(s.Page)
		pageW = max(pageW, utf8.RuneCountInString(names[k]))
		values[k] = make([]string, len(res.Times)+1)
		for i := range len(res.Times) + 1 {
			values[k][i] = res.Value(s, m, i-1).String()
			countW = max(countW, len(values[k][i]))
		}
	}
	bw := bufio.NewWriter(w)
	row := func(t, page, count string) {
		pad := pageW - utf8.RuneCountInString(page)
		fmt.Fprintf(bw, "%-*s  %s%s  %*s\n", timeW, t, page, strings.Repeat(" ", pad), countW, count)
	}
	row(head, "page", column)
	for i := range res.Times {
		for k := range res.Series {
			row(labels[i], names[k], values[k][i+1])
		}
	}
	for k := range res.Series {
		row("total", names[k], values[k][0])
	}
	switch {
	case len(res.Series) == 0:
		fmt.Fprintf(bw, "no views of site %s in this range\n", res.Request.Site)
	case res.Pages > len(res.Series):
		fmt.Fprintf(bw, "(top %d of %d pages)\n", len(res.Series), res.Pages)
	}
	return bw.Flush()
}

// writeCSV streams the points, step by step: nothing is held but the
// result.
func writeCSV(w io.Writer, res *Result, opts Options) error {
	cw := csv.NewWriter(w)
	ms := res.Request.measures()
	head := []string{"time", "page", "count"}
	if !res.Request.viewsOnly() {
		head = head[:2]
		for _, m := range ms {
			head = append(head, m.Column())
		}
	}
	cw.Write(head)
	row := make([]string, len(head))
	for i, t := range res.Times {
		row[0] = t.In(opts.Location).Format(time.RFC3339)
		for k := range res.Series {
			s := &res.Series[k]
			row[1] = s.Page
			for j, m := range ms {
				row[2+j] = res.Value(s, m, i).String()
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeJSON streams the points as one indented array, as an encoder
// writing res.Points() would, without making them. With measures, each
// point is {time, page, <measure>…} (measurePoint).
func writeJSON(w io.Writer, res *Result, opts Options) error {
	if len(res.Times) == 0 || len(res.Series) == 0 {
		_, err := io.WriteString(w, "[]\n")
		return err
	}
	viewsOnly := res.Request.viewsOnly()
	bw := bufio.NewWriter(w)
	bw.WriteString("[\n")
	first := true
	for i, t := range res.Times {
		t = t.In(opts.Location)
		for k := range res.Series {
			s := &res.Series[k]
			var b []byte
			var err error
			if viewsOnly {
				b, err = json.MarshalIndent(Point{Time: t, Page: s.Page, Count: s.Counts[i]}, "  ", "  ")
			} else {
				b, err = measurePoint(res, t, s, i)
			}
			if err != nil {
				return err
			}
			if !first {
				bw.WriteString(",\n")
			}
			first = false
			bw.WriteString("  ")
			if _, err := bw.Write(b); err != nil {
				return err
			}
		}
	}
	bw.WriteString("\n]\n")
	return bw.Flush()
}

// measurePoint returns the JSON object of s's measures in step i, indented
// as writeJSON's points: {"time": …, "page": …, "views": 3, "bytes": 812,
// "rt_avg_ms": 12.5}, the keys in the request's order.
func measurePoint(res *Result, t time.Time, s *Series, i int) ([]byte, error) {
	tb, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	pb, err := json.Marshal(s.Page)
	if err != nil {
		return nil, err
	}
	b := []byte("{\n    \"time\": ")
	b = append(b, tb...)
	b = append(b, ",\n    \"page\": "...)
	b = append(b, pb...)
	for _, m := range res.Request.measures() {
		b = append(b, ",\n    \""...)
		b = append(b, m.Column()...)
		b = append(b, "\": "...)
		b = append(b, res.Value(s, m, i).String()...)
	}
	return append(b, "\n  }"...), nil
}

// axisLayout returns the layout of a chart's x labels for steps from
// first to last: what changes between them and no more (the caption has the
// full range).
func axisLayout(first, last time.Time, step Step, loc *time.Location) string {
	first, last = first.In(loc), last.In(loc)
	sameDay := first.YearDay() == last.YearDay() && first.Year() == last.Year()
	sameYear := first.Year() == last.Year()
	midnight := first.Hour() == 0 && first.Minute() == 0
	switch {
	case step == Month && midnight && first.Day() == 1:
		return "2006-01"
	case step >= Day && midnight && sameYear:
		return "01-02"
	case step >= Day && midnight:
		return "2006-01-02"
	case sameDay:
		return "15:04"
	case sameYear:
		return "01-02 15:04"
	}
	return "2006-01-02 15:04"
}

// chartChars are the characters of the series after the first when the
// chart has no colors; the first is drawn with asciigraph's lines.
var chartChars = []string{"•", "+", "x", "o"}

// chartWidth is the width a short chart is widened to.
const chartWidth = 60

var chartColors = []asciigraph.AnsiColor{asciigraph.Blue, asciigraph.Red, asciigraph.Green, asciigraph.Goldenrod, asciigraph.Magenta}

func writeChart(w io.Writer, res *Result, opts Options) error {
	series := res.Series
	if len(series) > ChartSeries {
		series = series[:ChartSeries]
	}
	req := res.Request
	m := req.measures()[0]
	caption := fmt.Sprintf("%s of %s per %s, %s to %s (%s)", m.Column(), req.Site, req.Step,
		Label(req.From, req.Step, opts.Location), Label(req.Step.Truncate(req.To.Add(-time.Nanosecond)), req.Step, opts.Location), zoneName(opts.Location))
	if res.Pages > len(series) {
		caption += fmt.Sprintf(", top %d of %d pages", len(series), res.Pages)
	}
	if len(series) == 0 {
		_, err := fmt.Fprintf(w, "%s: no views\n", caption)
		return err
	}
	// Short series are widened by repeating each step's count, so that
	// the chart is a staircase of exact values, not an interpolation.
	n := len(res.Times)
	repeat := max(1, chartWidth/max(n, 1))
	data := make([][]float64, len(series))
	legends := make([]string, len(series))
	var chars []asciigraph.CharSet
	var top float64
	for i := range series {
		s := &series[i]
		data[i] = make([]float64, 0, n*repeat)
		for j := range s.Counts {
			c := res.Value(s, m, j).Float64()
			for range repeat {
				data[i] = append(data[i], c)
			}
			top = max(top, c)
		}
		legends[i] = fmt.Sprintf("%s (%s)", Shown(s.Page), res.Value(s, m, -1))
		if !opts.Color && len(series) > 1 {
			if i == 0 {
				chars = append(chars, asciigraph.DefaultCharSet)
				legends[i] = "─ " + legends[i]
			} else {
				c := chartChars[(i-1)%len(chartChars)]
				chars = append(chars, asciigraph.CreateCharSet(c))
				legends[i] = c + " " + legends[i]
			}
		}
	}
	height := opts.Height
	if height <= 0 {
		height = 15
	}
	precision := uint(0)
	if m.fractional() {
		precision = 3
	} else {
		// No more lines than views: the y labels are whole numbers.
		height = int(min(float64(height), max(top, 1)))
	}
	aopts := []asciigraph.Option{
		asciigraph.Height(height),
		asciigraph.LowerBound(0),
		asciigraph.Precision(precision),
		asciigraph.Caption(caption),
	}
	if n > 1 { // one step: its time is in the caption
		axisLayout := axisLayout(res.Times[0], res.Times[n-1], req.Step, opts.Location)
		aopts = append(aopts,
			asciigraph.XAxisRange(0, float64(n*repeat-1)),
			asciigraph.XAxisTickCount(max(2, min(n, 8, n*repeat/(len(axisLayout)+4)))),
			asciigraph.XAxisValueFormatter(func(v float64) string {
				i := min(max(int(v+0.5)/repeat, 0), n-1)
				return res.Times[i].In(opts.Location).Format(axisLayout)
			}))
	}
	if opts.Color {
		// asciigraph's legend: a box in each series' color.
		aopts = append(aopts, asciigraph.SeriesColors(chartColors[:len(series)]...), asciigraph.SeriesLegends(legends...))
	} else if chars != nil {
		aopts = append(aopts, asciigraph.SeriesChars(chars...))
	}
	chart := asciigraph.PlotMany(data, aopts...)
	if !opts.Color {
		// asciigraph's legend writes color escapes even without colors.
		chart += "\n\n    " + strings.Join(legends, "   ")
	}
	_, err := fmt.Fprintln(w, chart)
	return err
}
