package period

import (
	"math/rand/v2"
	"testing"
	"time"
)

// The functions below are the three copies of this arithmetic as they were
// before this package (bucket.Level.Bounds and its id layouts,
// visitor.Period.Bounds and ID, query.Step.Truncate, Next and index), kept
// as the oracle the one Unit is checked against.

func oldMod(a, b int64) int64 {
	r := a % b
	if r < 0 {
		r += b
	}
	return r
}

// oldLevelBounds is bucket.Level.Bounds: 0 minute, 1 daily, 2 monthly.
func oldLevelBounds(l int, sec int64) (start, end int64) {
	switch l {
	case 0:
		start = sec - oldMod(sec, 60)
		return start, start + 60
	case 1:
		start = sec - oldMod(sec, 86400)
		return start, start + 86400
	default:
		y, m, _ := time.Unix(sec, 0).UTC().Date()
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Unix(),
			time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC).Unix()
	}
}

// oldLevelID is the time part of bucket.Level.ID.
func oldLevelID(l int, start int64) string {
	layout := [...]string{"200601021504", "20060102", "200601"}[l]
	return time.Unix(start, 0).UTC().Format(layout)
}

// oldPeriodBounds is visitor.Period.Bounds: month or day.
func oldPeriodBounds(month bool, sec int64) (start, end int64) {
	if month {
		y, m, _ := time.Unix(sec, 0).UTC().Date()
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC).Unix()
	}
	start = sec - ((sec%86400)+86400)%86400
	return start, start + 86400
}

// oldPeriodID is visitor.Period.ID.
func oldPeriodID(month bool, start int64) string {
	layout, name := "20060102", "day"
	if month {
		layout, name = "200601", "month"
	}
	return name + ":" + time.Unix(start, 0).UTC().Format(layout)
}

// oldTruncate, oldNext, oldCeil and oldIndex are query.Step's.
func oldTruncate(s Unit, t time.Time) time.Time {
	t = t.UTC()
	switch s {
	case Minute:
		return t.Truncate(time.Minute)
	case Hour:
		return t.Truncate(time.Hour)
	case Day:
		y, m, d := t.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	default:
		y, m, _ := t.Date()
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	}
}

func oldNext(s Unit, t time.Time) time.Time {
	switch s {
	case Minute:
		return t.Add(time.Minute)
	case Hour:
		return t.Add(time.Hour)
	case Day:
		return t.AddDate(0, 0, 1)
	default:
		return t.AddDate(0, 1, 0)
	}
}

func oldCeil(s Unit, t time.Time) time.Time {
	start := oldTruncate(s, t)
	if start.Before(t) {
		return oldNext(s, start)
	}
	return start
}

func oldIndex(s Unit, from, t time.Time) int {
	secs := t.Unix() - from.Unix()
	switch s {
	case Minute:
		return int(secs / 60)
	case Hour:
		return int(secs / 3600)
	case Day:
		return int(secs / 86400)
	default:
		fy, fm, _ := from.Date()
		ty, tm, _ := t.Date()
		return (ty-fy)*12 + int(tm-fm)
	}
}

// seconds returns the instants checked: edges (zero, negative, month and
// year ends, leap days, the seconds around each) and random seconds from
// 1900 to 2400.
func seconds(t *testing.T) []int64 {
	t.Helper()
	var out []int64
	for _, s := range []string{
		"1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "1969-12-01T00:00:00Z", "1900-02-28T12:00:00Z",
		"1900-03-01T00:00:00Z", "2000-02-29T00:00:00Z", "2000-03-01T00:00:00Z", "2023-02-28T23:59:59Z",
		"2024-02-29T23:59:59Z", "2024-03-01T00:00:00Z", "2024-12-31T23:59:59Z", "2025-01-01T00:00:00Z",
		"2026-04-30T23:59:59Z", "2026-05-31T23:59:59Z", "2100-02-28T23:59:59Z", "2100-03-01T00:00:00Z",
		"2399-12-31T23:59:59Z",
	} {
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		for d := int64(-61); d <= 61; d++ {
			out = append(out, at.Unix()+d)
		}
	}
	out = append(out, 0, -1, 1, -60, -86400, -86401)
	rng := rand.New(rand.NewPCG(7, 31))
	lo, hi := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for range 50000 {
		out = append(out, lo+rng.Int64N(hi-lo))
	}
	return out
}

// Unit is the three old copies: bucket levels, visitor periods and query
// steps give the same bounds and ids over every instant checked.
func TestUnitIsTheOldArithmetic(t *testing.T) {
	levels := [...]Unit{Minute, Day, Month}
	for _, sec := range seconds(t) {
		for l, u := range levels {
			s, e := u.Bounds(sec)
			os, oe := oldLevelBounds(l, sec)
			if s != os || e != oe {
				t.Fatalf("%s Bounds(%d) = [%d, %d), level %d's = [%d, %d)", u, sec, s, e, l, os, oe)
			}
			if id, old := u.ID(s), oldLevelID(l, s); id != old || string(u.AppendID([]byte("x"), s)) != "x"+old {
				t.Fatalf("%s ID(%d) = %q, level %d's %q", u, s, id, l, old)
			}
			if back, ok := u.ParseID(u.ID(s)); !ok || back != s {
				t.Fatalf("%s ParseID(%q) = %d, %v, want %d", u, u.ID(s), back, ok, s)
			}
		}
		for _, month := range []bool{false, true} {
			u := Day
			if month {
				u = Month
			}
			s, e := u.Bounds(sec)
			if os, oe := oldPeriodBounds(month, sec); s != os || e != oe {
				t.Fatalf("%s Bounds(%d) = [%d, %d), visitor period's [%d, %d)", u, sec, s, e, os, oe)
			}
			if id, old := u.String()+":"+u.ID(s), oldPeriodID(month, s); id != old {
				t.Fatalf("%s id %q, visitor period's %q", u, id, old)
			}
		}
		at := time.Unix(sec, int64(sec%7)*123456789%1e9).In(time.FixedZone("x", 5*3600+1800))
		for u := Minute; u <= Month; u++ {
			tr, old := u.Truncate(at), oldTruncate(u, at)
			if !tr.Equal(old) || tr.Location() != time.UTC {
				t.Fatalf("%s Truncate(%v) = %v, step's %v", u, at, tr, old)
			}
			if n, old := u.Next(tr), oldNext(u, old); !n.Equal(old) || n.Location() != time.UTC {
				t.Fatalf("%s Next(%v) = %v, step's %v", u, tr, n, old)
			}
			if c, old := u.Ceil(at), oldCeil(u, at); !c.Equal(old) {
				t.Fatalf("%s Ceil(%v) = %v, step's %v", u, at, c, old)
			}
			if s, e := u.Bounds(sec); u.Longest() < time.Duration(e-s)*time.Second {
				t.Fatalf("%s [%d, %d) longer than Longest %v", u, s, e, u.Longest())
			}
			// Steps over a random span of starts.
			k := int(oldMod(sec, 5)) + 1
			to := tr
			for range k {
				to = oldNext(u, to)
			}
			if n, old := u.Steps(tr, to), oldIndex(u, tr, to); n != old || n != k {
				t.Fatalf("%s Steps(%v, %v) = %d, step's %d", u, tr, to, n, old)
			}
			if n, old := u.Steps(to, tr), oldIndex(u, to, tr); n != old {
				t.Fatalf("%s Steps(%v, %v) = %d, step's %d", u, to, tr, n, old)
			}
		}
	}
}

// The ids are stored: pinned.
func TestIDs(t *testing.T) {
	at := time.Date(2026, 11, 25, 13, 7, 0, 0, time.UTC).Unix()
	for u, want := range map[Unit]string{Minute: "202611251307", Hour: "2026112513", Day: "20261125", Month: "202611"} {
		s, _ := u.Bounds(at)
		if got := u.ID(s); got != want {
			t.Errorf("%s ID = %q, want %q", u, got, want)
		}
	}
	if _, ok := Day.ParseID("2026112"); ok {
		t.Error("Day.ParseID took a short id")
	}
}

func TestParse(t *testing.T) {
	for u := Minute; u <= Month; u++ {
		if got, err := Parse(u.String()); err != nil || got != u {
			t.Errorf("Parse(%q) = %v, %v", u.String(), got, err)
		}
	}
	if _, err := Parse("week"); err == nil {
		t.Error("Parse(week) took it")
	}
}

// A period expires keep after its end, whatever its length; Cutoff and
// Expired agree.
func TestExpires(t *testing.T) {
	mustTime := func(s string) time.Time {
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	for _, tc := range []struct {
		u                 Unit
		keep              time.Duration
		at, expires, then string
	}{
		{Day, 2 * time.Hour, "2026-11-25T13:00:00Z", "2026-11-26T02:00:00Z", "2026-11-26T02:00:00Z"},
		{Month, 24 * time.Hour, "2024-02-10T00:00:00Z", "2024-03-02T00:00:00Z", "2024-03-02T00:00:00Z"},
		{Month, 0, "2024-12-31T23:59:59Z", "2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z"},
	} {
		got := tc.u.Expires(mustTime(tc.at).Unix(), tc.keep)
		if !got.Equal(mustTime(tc.expires)) {
			t.Errorf("%s %v: Expires(%s) = %v, want %s", tc.u, tc.keep, tc.at, got, tc.expires)
		}
		now := mustTime(tc.then)
		if !tc.u.Expired(mustTime(tc.at).Unix(), tc.keep, now) || tc.u.Expired(mustTime(tc.at).Unix(), tc.keep, now.Add(-time.Nanosecond)) {
			t.Errorf("%s %v: %s expired by %s, not a nanosecond before", tc.u, tc.keep, tc.at, tc.then)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	base := mustTime("2023-06-01T00:00:00Z").Unix()
	for range 50000 {
		u := Unit(rng.IntN(4) + 1)
		keep := time.Duration(rng.Int64N(90*86400*1e9)) + 1
		start, _ := u.Bounds(base + rng.Int64N(900*86400))
		now := time.Unix(start, rng.Int64N(1e9)).Add(time.Duration(rng.Int64N(200*86400)) * time.Second)
		if byCutoff := start < u.Cutoff(now, keep).Unix(); byCutoff != u.Expired(start, keep, now) {
			t.Fatalf("%s from %d keep %v at %v: cutoff says %v", u, start, keep, now, byCutoff)
		}
	}
}
