package flusher

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/dims"
)

// commitDims commits counts by dimension of site's day holding at.
func (e *env) commitDims(t *testing.T, site, at string, counts map[dims.Dim]map[string]uint64) {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, at)
	if err != nil {
		t.Fatal(err)
	}
	day, _ := bucket.Daily.Bounds(tm.Unix())
	var dc []buffer.DimCount
	for d, m := range counts {
		for v, n := range m {
			dc = append(dc, buffer.DimCount{Key: buffer.AppendDimKey(nil, []byte(site), d, v, day), N: n})
		}
	}
	buffer.SortDimCounts(dc)
	if err := e.buf.Commit(buffer.Commit{Dims: dc}); err != nil {
		t.Fatal(err)
	}
}

// siteSources reads site's day of at from the sites collection.
func (e *env) siteSources(t *testing.T, site, at string) ([dims.N]map[string]int64, int64) {
	t.Helper()
	tm, _ := time.Parse(time.RFC3339, at)
	raw, err := e.db.Collection("sites").FindOne(context.Background(), bson.D{{Key: "_id", Value: bucket.SiteID(tm.Unix(), site)}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	src, err := bucket.SiteSources(raw)
	if err != nil {
		t.Fatal(err)
	}
	size, _ := raw.Lookup(bucket.FieldSize).AsInt64OK()
	return src, size
}

// TestSiteSourcesExactOnce: counts by dimension reach their site's day
// with its totals, once per batch though a reply is lost; a second batch
// of the same values adds little to the day's size (the flusher knows the
// day holds them); past the bound, a batch's values go under (other),
// still once, and the sums stay exact.
func TestSiteSourcesExactOnce(t *testing.T) {
	e := newEnv(t, 4)
	const at = "2024-03-10T12:00:00Z"
	want := map[dims.Dim]map[string]int64{}
	add := func(counts map[dims.Dim]map[string]uint64) {
		e.commitDims(t, "a.example", at, counts)
		for d, m := range counts {
			if want[d] == nil {
				want[d] = map[string]int64{}
			}
			for v, n := range m {
				want[d][v] += int64(n)
			}
		}
	}
	e.commit(t, hit{"a.example", "/", at, 5})
	add(map[dims.Dim]map[string]uint64{dims.Referrer: {"google.com": 3, "(direct)": 2}, dims.Channel: {"search": 3, "direct": 2}, dims.Country: {"DE": 5}})
	e.srv.DropNextReply()
	if _, err := e.f.Flush(context.Background()); err == nil {
		t.Fatal("the reply was not lost")
	}
	e.flush(t)
	got, size1 := e.siteSources(t, "a.example", at)
	for d := range dims.N {
		if !maps.Equal(got[d], want[d]) && !(len(got[d]) == 0 && len(want[d]) == 0) {
			t.Errorf("%s: %v, want %v", d, got[d], want[d])
		}
	}
	// The same values again: the day's size grows by the guard and size
	// entries, not the values.
	e.commit(t, hit{"a.example", "/", at, 5})
	add(map[dims.Dim]map[string]uint64{dims.Referrer: {"google.com": 3, "(direct)": 2}, dims.Channel: {"search": 3, "direct": 2}, dims.Country: {"DE": 5}})
	e.flush(t)
	_, size2 := e.siteSources(t, "a.example", at)
	if grew := size2 - size1; grew <= 0 || grew > 100 {
		t.Errorf("the day's size grew by %d for values it holds, want a few dozen bytes", grew)
	}
	// Past the bound: under (other), every hit still counted once.
	testHooks(e.f).sourcesLimit = size2 + 50
	e.commit(t, hit{"a.example", "/", at, 4})
	add(map[dims.Dim]map[string]uint64{dims.Referrer: {"new-1.example": 2, "new-2.example": 2}, dims.Channel: {"referral": 4}, dims.Country: {"FR": 4}})
	e.flush(t)
	got, _ = e.siteSources(t, "a.example", at)
	for d, m := range want {
		var sum, gsum int64
		for _, n := range m {
			sum += n
		}
		for _, n := range got[d] {
			gsum += n
		}
		if gsum != sum {
			t.Errorf("%s: %d hits, want %d", d, gsum, sum)
		}
	}
	if got[dims.Referrer][dims.Other] != 4 || got[dims.Referrer]["new-1.example"] != 0 || got[dims.Country]["FR"] != 0 {
		t.Errorf("past the bound: %v %v, want the batch's 4 under (other)", got[dims.Referrer], got[dims.Country])
	}
	if st := e.f.Stats(); st.SourcesFolded != 1 {
		t.Errorf("SourcesFolded %d, want 1", st.SourcesFolded)
	}
	e.check(t)
}

// TestSiteSourcesNewDayBounded: a batch whose values alone pass the
// bound, the first of its day, goes under (other) as a later batch's
// would: the day's size stays within the bound, the sums exact.
func TestSiteSourcesNewDayBounded(t *testing.T) {
	e := newEnv(t, 4)
	const at = "2024-03-10T12:00:00Z"
	testHooks(e.f).sourcesLimit = 300
	e.commit(t, hit{"a.example", "/", at, 6})
	counts := map[dims.Dim]map[string]uint64{dims.Referrer: {}, dims.Country: {"DE": 6}}
	for i := range 6 {
		counts[dims.Referrer][strings.Repeat("r", 40)+strconv.Itoa(i)+".example"] = 1
	}
	e.commitDims(t, "a.example", at, counts)
	e.flush(t)
	got, size := e.siteSources(t, "a.example", at)
	var sum int64
	for _, n := range got[dims.Referrer] {
		sum += n
	}
	if sum != 6 || got[dims.Country]["DE"]+got[dims.Country][dims.Other] != 6 {
		t.Errorf("referrers %v, countries %v: want 6 hits each", got[dims.Referrer], got[dims.Country])
	}
	if size > 300 {
		t.Errorf("the new day's size is %d, past the bound 300: referrers %v", size, got[dims.Referrer])
	}
	e.check(t)
}
