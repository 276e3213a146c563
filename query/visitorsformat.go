package query

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// VisitorFormats are the formats WriteVisitors takes.
var VisitorFormats = []string{"table", "csv", "json"}

// value returns p's estimate rounded to a whole number of visitors.
func (p *VisitorPoint) value() string {
	return strconv.FormatFloat(math.Round(p.Estimate), 'f', 0, 64)
}

// errorFraction returns p's relative standard error as a fraction,
// rounded to 6 decimals.
func (p *VisitorPoint) errorFraction() string {
	return strconv.FormatFloat(round(p.Error, 6), 'f', -1, 64)
}

// WriteVisitors writes res to w in format: "table" (time, the visitors,
// their error as ±percent of 1 standard error; then the site and salt
// periods), "csv" (header time,site,visitors,visitors_error,salt_period;
// one line per step) or "json" (an array of {time, site, visitors,
// visitors_error, salt_period}). When a step adds daily uniques
// (DailySum), the value's column or key is visitors_daily_sum and the
// table's header says it is a sum of daily uniques, not uniques. The
// error is a fraction in CSV and JSON (0.01625), 0 for a step without a
// document; salt_period is day, month, day+month or empty.
func WriteVisitors(w io.Writer, res *VisitorsResult, format string, opts Options) error {
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	var err error
	switch format {
	case "table":
		err = writeVisitorTable(w, res, opts)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"time", "site", res.Column(), visitorsErrColumn, "salt_period"})
		for i := range res.Points {
			p := &res.Points[i]
			cw.Write([]string{p.Time.In(opts.Location).Format(time.RFC3339), res.Request.Site, p.value(), p.errorFraction(), p.PeriodName()})
		}
		cw.Flush()
		err = cw.Error()
	case "json":
		err = writeVisitorJSON(w, res, opts)
	default:
		return badRequest("format %q: visitors are written as %s", format, strings.Join(VisitorFormats, ", "))
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", format, err)
	}
	return nil
}

// writeVisitorJSON writes the points as an indented array, the value's
// key named by res.Column().
func writeVisitorJSON(w io.Writer, res *VisitorsResult, opts Options) error {
	bw := bufio.NewWriter(w)
	if len(res.Points) == 0 {
		bw.WriteString("[]\n")
		return bw.Flush()
	}
	site, err := json.Marshal(res.Request.Site)
	if err != nil {
		return err
	}
	bw.WriteString("[\n")
	for i := range res.Points {
		p := &res.Points[i]
		tb, err := json.Marshal(p.Time.In(opts.Location))
		if err != nil {
			return err
		}
		if i > 0 {
			bw.WriteString(",\n")
		}
		per, _ := json.Marshal(p.PeriodName())
		fmt.Fprintf(bw, "  {\n    \"time\": %s,\n    \"site\": %s,\n    %q: %s,\n    %q: %s,\n    \"salt_period\": %s\n  }",
			tb, site, res.Column(), p.value(), visitorsErrColumn, p.errorFraction(), per)
	}
	bw.WriteString("\n]\n")
	return bw.Flush()
}

func writeVisitorTable(w io.Writer, res *VisitorsResult, opts Options) error {
	head := "time (" + zoneName(opts.Location) + ")"
	column := visitorsName
	if res.DailySum {
		column = visitorsSumColumn + " (sum of daily uniques, not uniques)"
	}
	errHead := "error (1 s.e.)"
	timeW, valW := len(head), len(column)
	labels := make([]string, len(res.Points))
	values := make([]string, len(res.Points))
	for i := range res.Points {
		labels[i] = Label(res.Points[i].Time, res.Request.Step, opts.Location)
		values[i] = res.Points[i].value()
		timeW, valW = max(timeW, len(labels[i])), max(valW, len(values[i]))
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%-*s  %*s  %s\n", timeW, head, valW, column, errHead)
	for i := range res.Points {
		p := &res.Points[i]
		e := ""
		if p.Docs > 0 {
			e = "±" + strconv.FormatFloat(100*p.Error, 'f', 1, 64) + "%"
		}
		bw.WriteString(strings.TrimRight(fmt.Sprintf("%-*s  %*s  %s", timeW, labels[i], valW, values[i], e), " ") + "\n")
	}
	fmt.Fprintf(bw, "(site %s, from %s", res.Request.Site, res.Collection)
	switch per := periodNames(res.Periods); per {
	case "":
		bw.WriteString("; no visitors document in this range")
	case "day+month":
		bw.WriteString("; the range mixes daily and monthly salts: each document counted with its own")
	case "day":
		bw.WriteString("; daily salts")
	case "month":
		bw.WriteString("; monthly salts")
	}
	if res.DailySum {
		bw.WriteString("; a visitor on two days counts twice")
	}
	bw.WriteString(")\n")
	return bw.Flush()
}
