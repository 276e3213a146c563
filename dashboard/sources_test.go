package dashboard

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/internal/fill"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/query"
)

// hostile are values a source's own data can hold (an ASN's
// organisation, a crawler named by a pattern): shown as text, never run.
const (
	hostileASN     = "AS666 <script>alert(1)</script>"
	hostileCrawler = `<img src=x onerror="alert(2)">`
)

// sourceValues are the values the test's hits take in each dimension:
// hit i takes one by a hash of i and the dimension, the first values
// more often than the last. The referrer's 14 hosts pass the top 10 and dims.Other
// is one of them (a host's values past its bound).
var sourceValues = [dims.N][]string{
	dims.Referrer: {"google.com", "(self)", "bing.com", "t.co", "chatgpt.com", "news.example", "(direct)",
		"duckduckgo.com", "reddit.com", "perplexity.ai", "blog.example", "mail.google.com", "facebook.com", dims.Other},
	dims.Channel: nil, // the referrer's: hostChannel
	dims.Country: {"FR", "DE", "US", "JP", dims.Unknown},
	dims.ASN:     {"AS3215 Orange", hostileASN, "AS15169 Google"},
	dims.Browser: {"Chrome", "Firefox", "Safari", "Edge"},
	dims.OS:      {"Windows", "Linux", "iOS", "macOS", "Android"},
	dims.Device:  {"desktop", "mobile", "tablet"},
	dims.Crawler: {dims.Unknown, "Googlebot", "GPTBot", hostileCrawler, "GPTBot \u202eevil"},
}

// hostChannel is the channel of each referrer value of sourceValues, as
// the lists say (written here by hand); the hosts stored as dims.Other
// were other sites'.
var hostChannel = map[string]string{
	"google.com": "search", "bing.com": "search", "duckduckgo.com": "search", "t.co": "social", "reddit.com": "social",
	"facebook.com": "social", "chatgpt.com": "ai", "perplexity.ai": "ai", "mail.google.com": "email",
	"news.example": "referral", "blog.example": "referral", "(self)": "internal", "(direct)": "direct", dims.Other: "referral",
}

// crawlerFacts are the operator and purpose of sourceValues' crawlers the
// lists name (botclass.Rules.CrawlerNamed); the others have none.
var crawlerFacts = map[string][2]string{"Googlebot": {"Google", "search"}, "GPTBot": {"OpenAI", "ai-training"}}

// sourceOf returns hit i's value in dimension d.
func sourceOf(d dims.Dim, i int) string {
	if d == dims.Channel {
		return hostChannel[sourceOf(dims.Referrer, i)]
	}
	vs := sourceValues[d]
	n := uint32(len(vs))
	h := uint32(i)*2654435761 + uint32(d)*40503
	h ^= h >> 13
	h *= 2246822519
	h ^= h >> 16
	return vs[(h%n)*(h/n%n)/(n-1)]
}

// fillSources writes hs as site's hits and, for the days from counted
// on, their values by dimension into the site's days (the first day
// holds none: its views are not counted by any dimension). It returns
// each dimension's counts over [from, to).
func fillSources(t *testing.T, db *mongo.Database, site string, hs []fill.Hit, counted, from, to time.Time) [dims.N]map[string]int64 {
	t.Helper()
	fill.Write(t, db, site, hs)
	byDay := map[string]bson.M{}
	var want [dims.N]map[string]int64
	for d := range want {
		want[d] = map[string]int64{}
	}
	for i, h := range hs {
		if h.At.Before(counted) {
			continue
		}
		id := bucket.SiteID(h.At.Unix(), site)
		inc := byDay[id]
		if inc == nil {
			inc = bson.M{}
			byDay[id] = inc
		}
		for d := range dims.N {
			v := sourceOf(d, i)
			key := bucket.FieldSources + "." + d.Code() + "." + bucket.PageKey(v)
			n, _ := inc[key].(int64)
			inc[key] = n + 1
			if !h.At.Before(from) && h.At.Before(to) {
				want[d][v]++
			}
		}
	}
	coll := db.Collection(bucket.Collections{}.SiteName())
	for id, inc := range byDay {
		res, err := coll.UpdateOne(context.Background(), bson.M{"_id": id}, bson.M{"$inc": inc})
		if err != nil || res.MatchedCount != 1 {
			t.Fatalf("sources of %s: %v (%d matched)", id, err, res.MatchedCount)
		}
	}
	return want
}

// wantRows are the rows a dimension's table should show of counts
// among views: the top values by views (ties by value), (other) with the
// rest and the values stored as (other), (not counted) with the views no
// value holds.
func wantRows(counts map[string]int64, views int64, top int) []query.DimValue {
	var all []query.DimValue
	var counted int64
	for v, n := range counts {
		all = append(all, query.DimValue{Value: v, Views: n})
		counted += n
	}
	slices.SortFunc(all, func(x, y query.DimValue) int {
		return cmp.Or(cmp.Compare(y.Views, x.Views), cmp.Compare(x.Value, y.Value))
	})
	if len(all) > top {
		var kept []query.DimValue
		var rest int64
		for _, v := range all {
			if v.Value == dims.Other || len(kept) == top {
				rest += v.Views
				continue
			}
			kept = append(kept, v)
		}
		all = append(kept, query.DimValue{Value: dims.Other, Views: rest})
	}
	if views > counted {
		all = append(all, query.DimValue{Value: query.NotCounted, Views: views - counted})
	}
	return all
}

// sourcesReply is api/view's sources.
type sourcesReply struct {
	From, To    int64
	Views       int64
	Counted     bool
	Note        string
	Attribution []string
	Dims        []struct {
		Dimension string
		Values    []sourceReplyRow
		ByChannel map[string][]sourceReplyRow `json:"by_channel"`
	}
}

type sourceReplyRow struct {
	Value, Shown               string
	Views                      int64
	Share                      float64
	Operator, Purpose, Channel string
}

// wantByChannel are the rows the referrers of channel ch should show:
// its hosts among refs by views (ties by value), the first top, then
// (other) with the rest of the channel's views, chViews.
func wantByChannel(refs map[string]int64, ch string, chViews int64, top int) []query.DimValue {
	var out []query.DimValue
	var sum int64
	for v, n := range refs {
		if v != dims.Other && hostChannel[v] == ch {
			out = append(out, query.DimValue{Value: v, Views: n, Channel: ch})
		}
	}
	slices.SortFunc(out, func(x, y query.DimValue) int {
		return cmp.Or(cmp.Compare(y.Views, x.Views), cmp.Compare(x.Value, y.Value))
	})
	out = out[:min(len(out), top)]
	for _, v := range out {
		sum += v.Views
	}
	if chViews > sum {
		out = append(out, query.DimValue{Value: dims.Other, Views: chViews - sum})
	}
	return out
}

// The API's sources are the site's views over the range's whole UTC days
// by every dimension: each value's views as written, the top 10 then
// (other) and (not counted), summing to the views; a page has none; a
// site whose days hold no counts by dimension says so (counted false).
func TestViewSources(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	now := utc("2026-11-25T12:00:00Z")
	first := utc("2026-11-23T00:00:00Z")
	a := hits(7, 240, first, 60*time.Hour, "/", "/a")
	from, to := first, utc("2026-11-26T00:00:00Z")
	want := fillSources(t, db, "a.test", a, first.AddDate(0, 0, 1), from, to)
	fill.Write(t, db, "off.test", hits(8, 30, first, 24*time.Hour, "/"))
	attr := []string{"Country data: a test's line."}
	d, err := New(Config{Reader: &query.Reader{DB: db, Clock: clock.NewFake(now)}, Attribution: attr})
	if err != nil {
		t.Fatal(err)
	}
	views := count(a, from, to, "").views

	// The last 2 hours: the sources are of the whole day.
	resp, body := get(t, d.Handler(), viewURL("a.test", "", now.Add(-2*time.Hour), now))
	var one struct{ Sources sourcesReply }
	if resp.StatusCode != 200 || json.Unmarshal(body, &one) != nil {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if s := one.Sources; s.From != utc("2026-11-25T00:00:00Z").UnixMilli() || s.To != to.UnixMilli() ||
		s.Views != count(a, utc("2026-11-25T00:00:00Z"), to, "").views || !s.Counted {
		t.Errorf("last 2 hours: sources of %d to %d, %d views, counted %v", s.From, s.To, s.Views, s.Counted)
	}

	// The three days: the first day's views are not counted.
	resp, body = get(t, d.Handler(), viewURL("a.test", "", from.Add(time.Hour), to.Add(-time.Hour)))
	var got struct{ Sources sourcesReply }
	if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	s := got.Sources
	if s.From != from.UnixMilli() || s.To != to.UnixMilli() || s.Views != views || !s.Counted || !slices.Equal(s.Attribution, attr) {
		t.Errorf("sources of %d to %d, %d views (want %d), counted %v, attribution %q", s.From, s.To, s.Views, views, s.Counted, s.Attribution)
	}
	if len(s.Dims) != int(dims.N) {
		t.Fatalf("%d dimensions, want %d", len(s.Dims), dims.N)
	}
	for i, tab := range s.Dims {
		d := dims.Dim(i)
		if tab.Dimension != d.String() {
			t.Errorf("table %d is %q, want %q", i, tab.Dimension, d)
		}
		rows := wantRows(want[d], views, SourcesTop)
		if len(tab.Values) != len(rows) {
			t.Errorf("%s: %d rows, want %d: %+v", d, len(tab.Values), len(rows), tab.Values)
			continue
		}
		var sum int64
		for j, v := range tab.Values {
			sum += v.Views
			if v.Value != rows[j].Value || v.Views != rows[j].Views || v.Shown != query.Shown(v.Value) ||
				v.Share != 100*float64(v.Views)/float64(views) {
				t.Errorf("%s row %d: %q (shown %q) %d views %.3f%%, want %q %d", d, j, v.Value, v.Shown, v.Views, v.Share, rows[j].Value, rows[j].Views)
			}
			var facts [2]string
			if d == dims.Crawler {
				facts = crawlerFacts[v.Value]
			}
			if wantCh := map[bool]string{true: hostChannel[v.Value]}[d == dims.Referrer && v.Value != dims.Other && v.Value != query.NotCounted]; v.Channel != wantCh {
				t.Errorf("%s row %d: %q: channel %q, want %q", d, j, v.Value, v.Channel, wantCh)
			}
			if v.Operator != facts[0] || v.Purpose != facts[1] {
				t.Errorf("%s row %d: %q: operator %q, purpose %q; want %q", d, j, v.Value, v.Operator, v.Purpose, facts)
			}
		}
		if sum != views {
			t.Errorf("%s: the rows sum to %d, want the %d views", d, sum, views)
		}
	}
	// Each channel's referrers, as clicking the channel shows them.
	byCh := s.Dims[dims.Referrer].ByChannel
	if len(byCh) != len(want[dims.Channel]) {
		t.Errorf("referrers of %d channels, want %d: %v", len(byCh), len(want[dims.Channel]), byCh)
	}
	for ch, n := range want[dims.Channel] {
		rows, got := wantByChannel(want[dims.Referrer], ch, n, SourcesTop), byCh[ch]
		if len(got) != len(rows) {
			t.Errorf("referrers of %s: %d rows, want %d: %+v", ch, len(got), len(rows), got)
			continue
		}
		var sum int64
		for j, v := range got {
			sum += v.Views
			if v.Value != rows[j].Value || v.Views != rows[j].Views || v.Channel != rows[j].Channel || v.Shown != query.Shown(v.Value) ||
				v.Share != 100*float64(v.Views)/float64(views) {
				t.Errorf("referrers of %s, row %d: %+v, want %+v", ch, j, v, rows[j])
			}
		}
		if sum != n {
			t.Errorf("referrers of %s sum to %d, want the channel's %d views", ch, sum, n)
		}
	}
	if rows := byCh["referral"]; len(rows) != 3 || rows[2].Value != dims.Other {
		t.Errorf("referrers of referral: want two hosts and (other), the hosts stored as (other): %+v", rows)
	}
	if r := s.Dims[dims.Referrer].Values; len(r) != SourcesTop+2 || r[SourcesTop].Value != dims.Other || r[SourcesTop+1].Value != query.NotCounted {
		t.Errorf("referrers: want the top %d, (other) and (not counted): %+v", SourcesTop, r)
	}

	// A page: no sources (they are per site).
	resp, body = get(t, d.Handler(), viewURL("a.test", "/a", from, to))
	var page struct{ Sources *sourcesReply }
	if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil || page.Sources != nil {
		t.Errorf("a page: %d %s", resp.StatusCode, body)
	}

	// Days without any count by dimension: not counted.
	resp, body = get(t, d.Handler(), viewURL("off.test", "", from, to))
	var off struct{ Sources sourcesReply }
	if resp.StatusCode != 200 || json.Unmarshal(body, &off) != nil {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if s := off.Sources; s.Counted || s.Views != 30 || len(s.Dims) != int(dims.N) ||
		len(s.Dims[0].Values) != 1 || s.Dims[0].Values[0].Value != query.NotCounted || s.Dims[0].Values[0].Views != 30 {
		t.Errorf("dimensions off: %+v", s)
	}
}
