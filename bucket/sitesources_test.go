package bucket

import (
	"maps"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/measure"
)

// A site day's counts by dimension go in with its update (and whole
// insert), read back by SiteSources value for value, odd values (dots,
// dollars, the markers) included; Growth bounds what an update adds;
// Folded keeps the sums under dims.Other.
func TestSiteSources(t *testing.T) {
	var s Sites
	const sec = 1764331200 // 2025-11-28T12:00:00Z
	var v measure.Vector
	v.Add(&measure.Hit{Status: 200, Bytes: 10, RT: -1})
	s.Add([]byte("www.example.com"), sec, &v)
	want := [dims.N]map[string]int64{}
	for dm := range dims.N {
		want[dm] = map[string]int64{}
	}
	for _, c := range []struct {
		d dims.Dim
		v string
		n uint64
	}{
		{dims.Referrer, "news.ycombinator.com", 3}, {dims.Referrer, "(direct)", 5}, {dims.Referrer, "a.b$c%d", 1},
		{dims.Channel, "search", 8}, {dims.Country, "DE", 8}, {dims.ASN, "AS3320 Deutsche Telekom AG", 8},
		{dims.Browser, "Samsung Internet", 8}, {dims.OS, "iOS", 8}, {dims.Device, "mobile", 8}, {dims.Crawler, dims.Other, 8},
	} {
		s.AddDim([]byte("www.example.com"), sec, c.d, []byte(c.v), c.n)
		want[c.d][c.v] += int64(c.n)
	}
	docs := s.Docs()
	if len(docs) != 1 {
		t.Fatalf("%d documents", len(docs))
	}
	d := docs[0]
	g := NumberedGuard(7, 42)
	raw, err := d.Whole(g)
	if err != nil {
		t.Fatal(err)
	}
	got, err := SiteSources(raw)
	if err != nil {
		t.Fatal(err)
	}
	for dm := range dims.N {
		if !maps.Equal(got[dm], want[dm]) {
			t.Errorf("%s: read %v, want %v", dm, got[dm], want[dm])
		}
	}
	// Growth bounds what the update adds to the zero document (and a
	// whole insert's size field holds it).
	zero, _ := bson.Marshal(d.Zero())
	if added := int64(len(raw) - len(zero)); added > d.Growth(g) {
		t.Errorf("the update added %d bytes, Growth says at most %d", added, d.Growth(g))
	}
	if n, ok := raw.Lookup(FieldSize).AsInt64OK(); !ok || n != d.Growth(g) {
		t.Errorf("size %v, want the Growth %d", raw.Lookup(FieldSize), d.Growth(g))
	}
	// Fits: a day without a size (written before counts by dimension)
	// has room; one at the limit has none, for good.
	d.Limit = SiteSourcesLimit
	if !d.Fits(mustMarshal(bson.D{{Key: FieldViews, Value: int64(1)}}), g) {
		t.Error("a day without a size does not fit")
	}
	if d.Fits(mustMarshal(bson.D{{Key: FieldSize, Value: int64(SiteSourcesLimit - d.Growth(g) + 1)}}), g) {
		t.Error("a day one byte short of room fits")
	}
	if !d.Fits(mustMarshal(bson.D{{Key: FieldSize, Value: int64(SiteSourcesLimit - d.Growth(g))}}), g) {
		t.Error("a day with exactly the room does not fit")
	}
	filter, _ := d.Update(g)
	if filter[len(filter)-1].Key != "$or" {
		t.Errorf("a bounded update's filter has no size term: %v", filter)
	}
	f := d.Folded()
	raw, err = f.Whole(g)
	if err != nil {
		t.Fatal(err)
	}
	if got, err = SiteSources(raw); err != nil {
		t.Fatal(err)
	}
	for dm := range dims.N {
		var sum int64
		for _, n := range want[dm] {
			sum += n
		}
		if len(got[dm]) != 1 || got[dm][dims.Other] != sum {
			t.Errorf("%s folded: %v, want (other): %d", dm, got[dm], sum)
		}
	}
	if f.Limit != 0 || d.Dims[dims.Referrer]["(direct)"] != 5 {
		t.Error("Folded changed the day it was made from, or kept a Limit")
	}
	// A day without counts by dimension: no sources, no size, no size
	// term in the filter (as before).
	plain := SiteDoc{ID: "x", Site: "s", Start: sec, Limit: SiteSourcesLimit}
	plain.V.Add(&measure.Hit{Status: 200, RT: -1})
	filter, update := plain.Update(g)
	if s := bson.D(filter).String() + update[0].Value.(bson.D).String(); containsAny(s, FieldSources, FieldSize) {
		t.Errorf("a day without counts by dimension: %s", s)
	}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		for i := 0; i+len(sub) <= len(s); i++ {
			if s[i:i+len(sub)] == sub {
				return true
			}
		}
	}
	return false
}
