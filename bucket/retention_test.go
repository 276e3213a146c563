package bucket

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/period"
	"github.com/logtally/logtally/visitor"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// retention returns a Retention of r for level l.
func retention(l Level, r time.Duration) Retention {
	var ret Retention
	switch l {
	case Minute:
		ret.Minute = r
	case Daily:
		ret.Daily = r
	default:
		ret.Monthly = r
	}
	return ret
}

// A bucket expires when its period's end is the retention ago, whatever
// the period's length; the deleteMany's cutoff agrees.
func TestExpiryCountsFromThePeriodsEnd(t *testing.T) {
	for _, tc := range []struct {
		p           Level
		r           time.Duration
		now, cutoff string
	}{
		{Minute, time.Hour, "2024-03-05T12:00:30Z", "2024-03-05T11:00:00Z"},
		{Minute, 48 * time.Hour, "2024-03-05T12:00:00Z", "2024-03-03T12:00:00Z"},
		{Daily, 24 * time.Hour, "2024-03-03T00:00:00Z", "2024-03-02T00:00:00Z"},
		{Daily, 24 * time.Hour, "2024-03-02T23:59:59Z", "2024-03-01T00:00:00Z"},
		// February's bucket ends on March 1st: kept until March 2nd.
		{Monthly, 24 * time.Hour, "2024-03-01T23:59:59Z", "2024-02-01T00:00:00Z"},
		{Monthly, 24 * time.Hour, "2024-03-02T00:00:00Z", "2024-03-01T00:00:00Z"},
	} {
		if got := retention(tc.p, tc.r).Cutoff(tc.p, mustTime(t, tc.now)); !got.Equal(mustTime(t, tc.cutoff)) {
			t.Errorf("%s retention %v at %s: cutoff %s, want %s", tc.p, tc.r, tc.now, got.Format(time.RFC3339), tc.cutoff)
		}
	}
	// The cutoff and expired agree, and the TTL index never deletes a
	// bucket before expired says so.
	rng := rand.New(rand.NewPCG(1, 2))
	base := mustTime(t, "2024-01-01T00:00:00Z").Unix()
	for range 20000 {
		p := Level(rng.IntN(3))
		r := time.Duration(rng.Int64N(90*86400)+1) * time.Second
		start, end := p.Bounds(base + rng.Int64N(400*86400))
		now := time.Unix(start, 0).Add(r + time.Duration(rng.Int64N(70*86400))*time.Second)
		ret := retention(p, r)
		byCutoff := start < ret.Cutoff(p, now).Unix()
		if byCutoff != ret.Expired(p, start, now) {
			t.Fatalf("%s [%d, %d) retention %v at %v: cutoff says %v, expired %v", p, start, end, r, now, byCutoff, !byCutoff)
		}
		if ttlDue := now.Unix() > start+int64(ret.TTLSeconds(p)); ttlDue && !ret.Expired(p, start, now) {
			t.Fatalf("%s [%d, %d) retention %v at %v: TTL index deletes it before it expires", p, start, end, r, now)
		}
	}
}

// The site totals and the visitors documents have the retention of the
// level cut by the same period: the site days the daily level's, a salt
// period's documents the level of that period's.
func TestSiteAndVisitorLevels(t *testing.T) {
	if SiteLevel.Unit() != period.Day {
		t.Errorf("site totals count %s, their level %s", period.Day, SiteLevel.Unit())
	}
	for p, want := range map[visitor.Period]Level{visitor.Day: Daily, visitor.Month: Monthly} {
		if got := VisitorLevel(p); got != want || got.Unit() != p.Unit() {
			t.Errorf("salt period %s: level %s, want %s", p, got, want)
		}
	}
}

// A site day past its retention takes no hit: its views are counted in
// Dropped, as Grouper's; the days kept take theirs.
func TestSitesSkipExpiredDays(t *testing.T) {
	now := mustTime(t, "2024-03-05T10:21:10Z")
	s := Sites{Keep: 48 * time.Hour, Now: now}
	var v measure.Vector
	v[measure.Views] = 3
	for _, at := range []string{"2024-03-02T23:59:59Z", "2024-03-03T00:00:00Z", "2024-03-05T10:00:00Z"} {
		s.Add([]byte("a.example"), mustTime(t, at).Unix(), &v)
	}
	docs := s.Docs()
	if len(docs) != 2 || docs[0].ID != "20240303/a.example" || docs[1].ID != "20240305/a.example" || s.Dropped != 3 {
		t.Errorf("docs %+v, dropped %d: want 03-03 and 03-05, 3 views dropped", docs, s.Dropped)
	}
	// The deleteMany's cutoff agrees: 03-03 is the oldest day kept.
	if c := (Retention{Daily: s.Keep}).Cutoff(SiteLevel, now); !c.Equal(mustTime(t, "2024-03-03T00:00:00Z")) {
		t.Errorf("cutoff %v", c)
	}
}
