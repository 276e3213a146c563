package query

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/clock"
)

// A range outside 1970..9999 is named as such (0001-01-01 is not "missing"),
// and the steps of a long range are counted without overflowing.
func TestCheckRangeMessages(t *testing.T) {
	r := &Reader{Clock: clock.NewFake(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))}
	for _, tc := range []struct {
		from, to time.Time
		step     Step
		want     string
	}{
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Day,
			"from 0001-01-01T00:00:00Z: out of range; times from 1970-01-01 to 9999-12-31 are accepted"},
		{time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Day,
			"from 1969-12-31T00:00:00Z: out of range"},
		{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 2, 0, 0, 0, 0, time.UTC), Day,
			"to 10000-01-02T00:00:00Z: out of range"},
		{time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), Day,
			"2932896 steps of a day: at most 100000"},
		{time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), Minute,
			"4223370240 steps of a minute: at most 100000"},
	} {
		_, err := r.Check(Request{Site: "s", From: tc.from, To: tc.to, Step: tc.step})
		if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s to %s at %s: %v, want %q", tc.from, tc.to, tc.step, err, tc.want)
		}
	}
}

// Pages × steps past MaxCells stop the reading with an error that names
// the numbers and suggests -top and a coarser step. The site's sum is one
// series of the bound.
func TestTooLarge(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := &Result{Request: Request{Site: "s", From: from, To: from.Add(MaxSteps * time.Minute), Step: Minute}}
	for tm := from; tm.Before(res.Request.To); tm = tm.Add(time.Minute) {
		res.Times = append(res.Times, tm)
	}
	acc := newAccumulator(res, MaxCells)
	limit := MaxCells/MaxSteps - 1
	for i := 0; ; i++ {
		if !acc.add("/p"+strings.Repeat("x", i), from, 1) {
			if i != limit {
				t.Fatalf("stopped at page %d, want %d", i+1, limit+1)
			}
			break
		}
		if i > limit {
			t.Fatal("no bound")
		}
	}
	var tl *TooLargeError
	err := error(acc.tooLarge)
	if !errors.As(err, &tl) || !errors.Is(err, ErrBadRequest) {
		t.Fatalf("%v", err)
	}
	for _, want := range []string{"50 or more pages × 100000 steps of a minute is over 5000000 counts", "-top N (N up to 49 at this step)", "a coarser -step (hour)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in %q", want, err)
		}
	}
	if len(acc.pages) != limit {
		t.Errorf("%d pages held, want %d", len(acc.pages), limit)
	}
}

// The streamed JSON is byte for byte what encoding the points would give.
func TestJSONStreamed(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := &Result{
		Request: Request{Site: "s", From: from, To: from.Add(2 * time.Hour), Step: Hour},
		Times:   []time.Time{from, from.Add(time.Hour)},
		Series:  []Series{{Page: "/a&<b>\"é", Total: 3, Counts: []int64{1, 2}}, {Page: "/c", Total: 1, Counts: []int64{0, 1}}},
	}
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip(err)
	}
	for _, r := range []*Result{res, {Request: res.Request, Times: res.Times}} {
		var got bytes.Buffer
		if err := Write(&got, r, "json", Options{Location: paris}); err != nil {
			t.Fatal(err)
		}
		pts := r.Points()
		for i := range pts {
			pts[i].Time = pts[i].Time.In(paris)
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.Encode(pts)
		if got.String() != want.String() {
			t.Errorf("got\n%s\nwant\n%s", got.String(), want.String())
		}
	}
}
