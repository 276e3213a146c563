package query

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestStepBounds(t *testing.T) {
	at := utc("2026-02-28T23:59:30Z")
	for _, tc := range []struct {
		step              Step
		trunc, next, ceil string
	}{
		{Minute, "2026-02-28T23:59:00Z", "2026-03-01T00:00:00Z", "2026-03-01T00:00:00Z"},
		{Hour, "2026-02-28T23:00:00Z", "2026-03-01T00:00:00Z", "2026-03-01T00:00:00Z"},
		{Day, "2026-02-28T00:00:00Z", "2026-03-01T00:00:00Z", "2026-03-01T00:00:00Z"},
		{Month, "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z", "2026-03-01T00:00:00Z"},
	} {
		tr := tc.step.Truncate(at)
		if got := tr.Format(time.RFC3339); got != tc.trunc {
			t.Errorf("%s: Truncate = %s, want %s", tc.step, got, tc.trunc)
		}
		if got := tc.step.Next(tr).Format(time.RFC3339); got != tc.next {
			t.Errorf("%s: Next = %s, want %s", tc.step, got, tc.next)
		}
		if got := tc.step.Ceil(at).Format(time.RFC3339); got != tc.ceil {
			t.Errorf("%s: Ceil = %s, want %s", tc.step, got, tc.ceil)
		}
		if got := tc.step.Ceil(tr); !got.Equal(tr) {
			t.Errorf("%s: Ceil of a step start moved it to %s", tc.step, got)
		}
		if got := tc.step.Steps(tr, tc.step.Next(tc.step.Next(tr))); got != 2 {
			t.Errorf("%s: Steps two steps on = %d", tc.step, got)
		}
	}
	if _, err := ParseStep("week"); !errors.Is(err, ErrBadRequest) {
		t.Errorf("ParseStep(week) = %v, want ErrBadRequest", err)
	}
}

func TestParseTime(t *testing.T) {
	now := utc("2026-11-23T15:04:05Z")
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no tz database:", err)
	}
	for _, tc := range []struct {
		in   string
		loc  *time.Location
		want string
	}{
		{"now", nil, "2026-11-23T15:04:05Z"},
		{"-2h", nil, "2026-11-23T13:04:05Z"},
		{"-90m", nil, "2026-11-23T13:34:05Z"},
		{"-7d", nil, "2026-11-16T15:04:05Z"},
		{"2026-11-23T10:00:00Z", paris, "2026-11-23T10:00:00Z"},
		{"2026-11-23T11:00:00+01:00", nil, "2026-11-23T10:00:00Z"},
		{"2026-11-23", nil, "2026-11-23T00:00:00Z"},
		{"2026-11-23", paris, "2026-11-22T23:00:00Z"},
		{"2026-11-23 10:30", nil, "2026-11-23T10:30:00Z"},
		{"2026-11-23T10:30", paris, "2026-11-23T09:30:00Z"},
		{"2026-11", nil, "2026-11-01T00:00:00Z"},
	} {
		got, err := ParseTime(tc.in, now, tc.loc)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if s := got.UTC().Format(time.RFC3339); s != tc.want {
			t.Errorf("%q: %s, want %s", tc.in, s, tc.want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-2x", "23/11/2026", "2026-13-01"} {
		if _, err := ParseTime(bad, now, nil); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%q: err %v, want ErrBadRequest", bad, err)
		}
	}
}

func TestCheck(t *testing.T) {
	now := utc("2026-11-23T15:04:05Z")
	r := &Reader{Retention: bucket.Retention{Minute: 48 * time.Hour}, Clock: clock.NewFake(now)}
	ok := Request{Site: "s", From: utc("2026-11-23T10:00:30Z"), To: utc("2026-11-23T10:05:10Z"), Step: Minute}
	got, err := r.Check(ok)
	if err != nil {
		t.Fatal(err)
	}
	if got.From != utc("2026-11-23T10:00:00Z") || got.To != utc("2026-11-23T10:06:00Z") {
		t.Errorf("aligned range %s to %s", got.From, got.To)
	}
	bad := func(mod func(*Request)) Request { q := ok; mod(&q); return q }
	for name, q := range map[string]Request{
		"no site":      bad(func(q *Request) { q.Site = "" }),
		"from == to":   bad(func(q *Request) { q.To = q.From }),
		"from > to":    bad(func(q *Request) { q.From, q.To = q.To, q.From }),
		"no from":      bad(func(q *Request) { q.From = time.Time{} }),
		"top and page": bad(func(q *Request) { q.Top, q.Page = 3, "/" }),
		"no step":      bad(func(q *Request) { q.Step = 0 }),
		"too many":     bad(func(q *Request) { q.From = utc("2000-01-01T00:00:00Z"); r.Retention.Minute = 0 }),
	} {
		if _, err := r.Check(q); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%s: err %v, want ErrBadRequest", name, err)
		}
		r.Retention.Minute = 48 * time.Hour
	}

	// Minute steps reaching back before now-48h name the part that is gone.
	q := bad(func(q *Request) { q.From, q.To = utc("2026-11-21T12:00:00Z"), utc("2026-11-21T18:00:00Z") })
	_, err = r.Check(q)
	var re *RetentionError
	if !errors.As(err, &re) || !errors.Is(err, ErrRetention) {
		t.Fatalf("err %v, want a RetentionError", err)
	}
	want := "minute buckets are kept for 48h0m0s (buckets.minute_retention): 2026-11-21T12:00:00Z to 2026-11-21T15:05:00Z cannot be answered at -step minute; use -step hour, or -from 2026-11-21T15:05:00Z or later"
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	// Entirely gone: no -from hint.
	q.To = utc("2026-11-21T13:00:00Z")
	if _, err := r.Check(q); err == nil || strings.Contains(err.Error(), "or later") || !strings.Contains(err.Error(), "to 2026-11-21T13:00:00Z") {
		t.Errorf("range entirely before retention: %v", err)
	}
	// The same range at an hour step is answered from daily buckets.
	q.Step = Hour
	if _, err := r.Check(q); err != nil {
		t.Errorf("hour step: %v", err)
	}
	// Retention 0 keeps everything.
	r.Retention.Minute = 0
	q.Step = Minute
	if _, err := r.Check(q); err != nil {
		t.Errorf("retention 0: %v", err)
	}
}

func sample() *Result {
	req := Request{Site: "s.test", From: utc("2026-10-31T23:00:00Z"), To: utc("2026-11-01T02:00:00Z"), Step: Hour}
	return &Result{
		Request: req,
		Times:   []time.Time{utc("2026-10-31T23:00:00Z"), utc("2026-11-01T00:00:00Z"), utc("2026-11-01T01:00:00Z")},
		Series: []Series{
			{Page: "/a", Total: 7, Counts: []int64{5, 2, 0}},
			{Page: "/b,c", Total: 1, Counts: []int64{0, 1, 0}},
		},
		Pages: 3,
	}
}

func TestWriteFormats(t *testing.T) {
	res := sample()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no tz database:", err)
	}
	var b bytes.Buffer
	if err := Write(&b, res, "csv", Options{}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	wantCSV := [][]string{{"time", "page", "count"},
		{"2026-10-31T23:00:00Z", "/a", "5"}, {"2026-10-31T23:00:00Z", "/b,c", "0"},
		{"2026-11-01T00:00:00Z", "/a", "2"}, {"2026-11-01T00:00:00Z", "/b,c", "1"},
		{"2026-11-01T01:00:00Z", "/a", "0"}, {"2026-11-01T01:00:00Z", "/b,c", "0"}}
	if len(rows) != len(wantCSV) {
		t.Fatalf("csv rows %q", rows)
	}
	for i := range rows {
		if strings.Join(rows[i], "|") != strings.Join(wantCSV[i], "|") {
			t.Errorf("csv row %d: %q, want %q", i, rows[i], wantCSV[i])
		}
	}

	b.Reset()
	if err := Write(&b, res, "json", Options{Location: paris}); err != nil {
		t.Fatal(err)
	}
	var pts []struct {
		Time  string
		Page  string
		Count int64
	}
	if err := json.Unmarshal(b.Bytes(), &pts); err != nil {
		t.Fatal(err)
	}
	if len(pts) != 6 || pts[0].Time != "2026-11-01T00:00:00+01:00" || pts[0].Page != "/a" || pts[0].Count != 5 || pts[3].Count != 1 {
		t.Errorf("json %+v", pts)
	}

	b.Reset()
	if err := Write(&b, res, "table", Options{}); err != nil {
		t.Fatal(err)
	}
	table := b.String()
	for _, want := range []string{"time (UTC)", "2026-10-31 23:00  /a        5", "total             /b,c      1", "(top 2 of 3 pages)"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}

	b.Reset()
	if err := Write(&b, res, "chart", Options{}); err != nil {
		t.Fatal(err)
	}
	chart := b.String()
	for _, want := range []string{"─ /a (7)", "• /b,c (1)", "views of s.test per hour, 2026-10-31 23:00 to 2026-11-01 01:00 (UTC), top 2 of 3 pages", "2026-11-01 01:00"} {
		if !strings.Contains(chart, want) {
			t.Errorf("chart lacks %q:\n%s", want, chart)
		}
	}
	t.Logf("chart:\n%s", chart)

	// One step, one page: no x axis (the caption has the time), no markers.
	one := &Result{Request: Request{Site: "s.test", From: utc("2026-11-01T00:00:00Z"), To: utc("2026-11-02T00:00:00Z"), Step: Day},
		Times: []time.Time{utc("2026-11-01T00:00:00Z")}, Series: []Series{{Page: "/", Total: 3, Counts: []int64{3}}}, Pages: 1}
	b.Reset()
	if err := Write(&b, one, "chart", Options{}); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "per day, 2026-11-01 to 2026-11-01 (UTC)") || !strings.Contains(s, "    / (3)") || strings.Contains(s, "┬") {
		t.Errorf("one-step chart:\n%s", s)
	}

	b.Reset()
	if err := Write(&b, res, "chart", Options{Color: true}); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "\x1b[") || !strings.Contains(s, " /a (7)") || strings.Contains(s, "• /b") {
		t.Errorf("colored chart:\n%q", s)
	}

	if err := Write(&b, res, "xml", Options{}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("format xml: %v", err)
	}
}

func TestLabel(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no tz database:", err)
	}
	day := utc("2026-11-01T00:00:00Z")
	for _, tc := range []struct {
		step Step
		loc  *time.Location
		want string
	}{
		{Minute, time.UTC, "2026-11-01 00:00"},
		{Day, time.UTC, "2026-11-01"},
		{Month, time.UTC, "2026-11"},
		{Day, paris, "2026-11-01 01:00"}, // a UTC day seen from Paris
		{Month, paris, "2026-11-01 01:00"},
	} {
		if got := Label(day, tc.step, tc.loc); got != tc.want {
			t.Errorf("%s in %s: %q, want %q", tc.step, tc.loc, got, tc.want)
		}
	}
}
