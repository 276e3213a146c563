package query

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/dims"
)

// A breakdown's values: by views with ties by value; with Top the first
// Top values and (other) holding the rest and the values stored as
// (other), (not counted) last with the views no value holds; Top of a
// whole breakdown gives the same; a referrer host has the channel the
// lists give it, (unknown) the channel (unknown), and the rows that are
// not a host none.
func TestBreakdownOf(t *testing.T) {
	vals := map[string]int64{"google.com": 40, "t.co": 30, "chatgpt.com": 30, "(self)": 20, "news.example": 5, dims.Other: 7, "(direct)": 3, dims.Unknown: 2}
	all := BreakdownOf(Request{}, dims.Referrer, 152, vals)
	want := []DimValue{
		{Value: "google.com", Views: 40, Channel: "search"},
		{Value: "chatgpt.com", Views: 30, Channel: "ai"},
		{Value: "t.co", Views: 30, Channel: "social"},
		{Value: "(self)", Views: 20, Channel: "internal"},
		{Value: dims.Other, Views: 7},
		{Value: "news.example", Views: 5, Channel: "referral"},
		{Value: "(direct)", Views: 3, Channel: "direct"},
		{Value: dims.Unknown, Views: 2, Channel: dims.Unknown},
		{Value: NotCounted, Views: 15},
	}
	if !slices.Equal(all.Values, want) {
		t.Errorf("all values:\n got %v\nwant %v", all.Values, want)
	}
	top := BreakdownOf(Request{Top: 3}, dims.Referrer, 152, vals)
	wantTop := append(slices.Clone(want[:3]), DimValue{Value: dims.Other, Views: 37}, want[8])
	if !slices.Equal(top.Values, wantTop) {
		t.Errorf("top 3:\n got %v\nwant %v", top.Values, wantTop)
	}
	if got := all.Top(3); !slices.Equal(got.Values, wantTop) || !slices.Equal(all.Values, want) {
		t.Errorf("Top(3) of all: %v (all now %v), want %v", got.Values, all.Values, wantTop)
	}
	if got := all.Top(8); got != all {
		t.Errorf("Top(8) of 8 values and (not counted): %v, want them as they are", got.Values)
	}
	if c := BreakdownOf(Request{}, dims.Channel, 10, map[string]int64{"search": 10}); c.Values[0].Channel != "" {
		t.Errorf("a channel value has a channel: %v", c.Values[0])
	}
}

// WriteBreakdown of the referrers has each host's channel after it: a
// csv column, a table column, a json field on every value ("" where
// there is none); the other dimensions but the crawler have no such
// column.
func TestWriteBreakdownChannel(t *testing.T) {
	req := Request{Site: "a.test", Step: Day, From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)}
	b := BreakdownOf(req, dims.Referrer, 100, map[string]int64{"google.com": 60, "t.co": 30, dims.Other: 10})
	var out strings.Builder
	if err := WriteBreakdown(&out, b, "csv", Options{}); err != nil {
		t.Fatal(err)
	}
	if want := "referrer,channel,views,share_percent\ngoogle.com,search,60,60\nt.co,social,30,30\n(other),,10,10\n"; out.String() != want {
		t.Errorf("csv:\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	if err := WriteBreakdown(&out, b, "table", Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	for i, want := range [][]string{{"referrer", "channel", "views", "share"}, {"google.com", "search", "60", "60.00%"}, {"t.co", "social", "30", "30.00%"}, {"(other)", "10", "10.00%"}, {"total", "100", "100.00%"}} {
		if got := strings.Fields(lines[i]); !slices.Equal(got, want) {
			t.Errorf("table line %d: %q, want %q", i, got, want)
		}
	}
	if strings.Index(lines[1], "search") != strings.Index(lines[0], "channel") {
		t.Errorf("table: the channel is not under its header:\n%s", out.String())
	}
	out.Reset()
	if err := WriteBreakdown(&out, b, "json", Options{}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Values []map[string]any `json:"values"`
	}
	if err := json.Unmarshal([]byte(out.String()), &got); err != nil || len(got.Values) != 3 {
		t.Fatalf("json: %v\n%s", err, out.String())
	}
	for i, want := range []string{"search", "social", ""} {
		if ch, ok := got.Values[i]["channel"]; !ok || ch != want {
			t.Errorf("json value %d: channel %v (%v), want %q", i, ch, ok, want)
		}
	}
	out.Reset()
	if err := WriteBreakdown(&out, BreakdownOf(req, dims.Country, 1, map[string]int64{"FR": 1}), "csv", Options{}); err != nil || out.String() != "country,views,share_percent\nFR,1,100\n" {
		t.Errorf("country csv: %v\n%s", err, out.String())
	}
}
