package query

import (
	"slices"
	"testing"

	"github.com/logtally/logtally/dims"
)

// A breakdown's values: by views with ties by value; with Top the first
// Top values and (other) holding the rest and the values stored as
// (other), (not counted) last with the views no value holds; Top of a
// whole breakdown gives the same; a referrer host has the channel the
// lists give it, and the rows that are not a host none.
func TestBreakdownOf(t *testing.T) {
	vals := map[string]int64{"google.com": 40, "t.co": 30, "chatgpt.com": 30, "(self)": 20, "news.example": 5, dims.Other: 7, "(direct)": 3}
	all := breakdownOf(Request{}, dims.Referrer, 150, vals)
	want := []DimValue{
		{Value: "google.com", Views: 40, Channel: "search"},
		{Value: "chatgpt.com", Views: 30, Channel: "ai"},
		{Value: "t.co", Views: 30, Channel: "social"},
		{Value: "(self)", Views: 20, Channel: "internal"},
		{Value: dims.Other, Views: 7},
		{Value: "news.example", Views: 5, Channel: "referral"},
		{Value: "(direct)", Views: 3, Channel: "direct"},
		{Value: NotCounted, Views: 15},
	}
	if !slices.Equal(all.Values, want) {
		t.Errorf("all values:\n got %v\nwant %v", all.Values, want)
	}
	top := breakdownOf(Request{Top: 3}, dims.Referrer, 150, vals)
	wantTop := append(slices.Clone(want[:3]), DimValue{Value: dims.Other, Views: 35}, want[7])
	if !slices.Equal(top.Values, wantTop) {
		t.Errorf("top 3:\n got %v\nwant %v", top.Values, wantTop)
	}
	if got := all.Top(3); !slices.Equal(got.Values, wantTop) || !slices.Equal(all.Values, want) {
		t.Errorf("Top(3) of all: %v (all now %v), want %v", got.Values, all.Values, wantTop)
	}
	if got := all.Top(7); got != all {
		t.Errorf("Top(7) of 7 values and (not counted): %v, want them as they are", got.Values)
	}
	if c := breakdownOf(Request{}, dims.Channel, 10, map[string]int64{"search": 10}); c.Values[0].Channel != "" {
		t.Errorf("a channel value has a channel: %v", c.Values[0])
	}
}
