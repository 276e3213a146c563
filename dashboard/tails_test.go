package dashboard

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/fill"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/query"
)

// The API answers the same of hits split between page buckets and tails
// (a hot page, a page in both, cold pages in two shards, one named with
// characters a field name escapes, "(other)") as of the same hits in page
// buckets alone: at every step, for the site and its top pages and for
// each page.
func TestViewTails(t *testing.T) {
	srv := mongotest.Start(t)
	now := utc("2026-11-25T12:00:00Z")
	day := utc("2026-11-25T00:00:00Z")
	pages := []string{"/", "/both", "/a.b$c%", "(other)", "/cold"}
	hs := hits(7, 120, day.AddDate(0, 0, -1), 34*time.Hour, pages...)
	layout := fill.Layout{
		Tail: func(l bucket.Level, i int, h fill.Hit) int {
			switch {
			case h.Page == "/", h.Page == "/both" && i%2 == 0:
				return -1
			case l == bucket.Minute, h.Page == "(other)", h.Page == "/both":
				return 0
			}
			return 1
		},
		Hot:    []string{"/"},
		Shards: 2,
	}
	var handlers [2]*Dashboard
	for i, lay := range []fill.Layout{{}, layout} {
		db := srv.Database(t)
		fill.Docs(t, db, "a.test", hs, lay)
		r := &query.Reader{DB: db, Retention: bucket.Retention{Minute: 48 * time.Hour}, Clock: clock.NewFake(now)}
		d, err := New(Config{Reader: r, Refresh: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		handlers[i] = d
	}
	for _, tc := range []struct {
		from, to time.Time
		step     string
	}{
		{utc("2026-11-25T07:00:00Z"), utc("2026-11-25T10:00:00Z"), "minute"},
		{day.AddDate(0, 0, -1), day.AddDate(0, 0, 1), "hour"},
		{day.AddDate(0, 0, -20), day.AddDate(0, 0, 1), "day"},
		{utc("2025-01-01T00:00:00Z"), utc("2026-12-01T00:00:00Z"), "month"},
	} {
		for _, page := range append([]string{""}, pages...) {
			var got [2]map[string]any
			for i, d := range handlers {
				resp, body := get(t, d.Handler(), viewURL("a.test", page, tc.from, tc.to))
				if resp.StatusCode != 200 || json.Unmarshal(body, &got[i]) != nil {
					t.Fatalf("%s %q: %d %s", tc.step, page, resp.StatusCode, body)
				}
			}
			if got[0]["step"] != tc.step {
				t.Errorf("%s %q: step %v", tc.step, page, got[0]["step"])
			}
			if views := got[0]["totals"].(map[string]any)["views"].(float64); views == 0 && page == "" {
				t.Errorf("%s: no views", tc.step)
			}
			if !reflect.DeepEqual(got[0], got[1]) {
				t.Errorf("%s %q: page buckets alone:\n%v\nwith tails:\n%v", tc.step, page, got[0], got[1])
			}
		}
	}
}
