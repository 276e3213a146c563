package verify

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/bucket"
)

var t0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Unix() // a Sunday, a 31-day month

// judged runs one judge over [from, to) in windows (the passes), each
// window's documents given by docs(window), and returns the report.
func judged(allHosts bool, r span, windows []span, docs func(j *judge)) *Report {
	rep := &Report{}
	j := newJudge(r, allHosts, 10, rep)
	for _, w := range windows {
		j.w = w
		docs(j)
	}
	j.finish()
	return rep
}

func TestJudgeInsideTheRange(t *testing.T) {
	r := span{t0, t0 + 2*86400} // two whole days
	minute := func(j *judge, want, got map[string]int64) {
		j.bucket(Minute, "202603010000/s/p", t0, t0+60, cs(want), cs(got), false)
	}
	exact := judged(false, r, []span{r}, func(j *judge) {
		minute(j, map[string]int64{"totalViews": 2, "seconds.3": 2, "measures.status_2xx": 2}, map[string]int64{"totalViews": 2, "seconds.3": 2, "measures.status_2xx": 2})
	})
	if !exact.Exact() || exact.Counters != 3 || exact.Buckets[Minute] != 1 || exact.Edge != 0 || exact.NOthers != 0 {
		t.Errorf("equal: %+v", exact)
	}
	lost := judged(true, r, []span{r}, func(j *judge) {
		minute(j, map[string]int64{"totalViews": 2, "seconds.3": 2, "measures.status_2xx": 2}, map[string]int64{"totalViews": 2, "seconds.3": 2, "measures.status_2xx": 1})
	})
	if lost.Exact() || lost.NDiffs != 1 || lost.Lost != 1 || lost.Diffs[0] != (Diff{Kind: Minute, ID: "202603010000/s/p", Path: "measures.status_2xx", Files: 2, MongoDB: 1}) {
		t.Errorf("one lost: %+v", lost)
	}
	for _, allHosts := range []bool{false, true} {
		more := judged(allHosts, r, []span{r}, func(j *judge) {
			minute(j, map[string]int64{"totalViews": 2, "seconds.3": 2}, map[string]int64{"totalViews": 3, "seconds.3": 2, "seconds.4": 1})
			j.bucket(Daily, "20260301/s/other", t0, t0+86400, cs(nil), cs(map[string]int64{"daily": 1, "hourly.0": 1, "minute.0.0": 1}), false)
		})
		if allHosts && (more.Exact() || more.NDiffs != 5 || more.More != 5 || more.NOthers != 0) {
			t.Errorf("more, all hosts: %+v", more)
		}
		if !allHosts && (!more.Exact() || more.NOthers != 5 || more.Others[0].Path != "seconds.4" && more.Others[0].Path != "totalViews") {
			t.Errorf("more, not all hosts: %+v", more)
		}
		if more.Buckets[Minute] != 1 || more.Buckets[Daily] != 1 {
			t.Errorf("buckets %v", more.Buckets)
		}
	}
}

// A log from 10:30:15 to 10:32:00 on one day: the counters reaching
// outside it are judged for lost hits only; those outside it not at all.
func TestJudgeEdges(t *testing.T) {
	from := t0 + 10*3600 + 30*60 + 15
	r := span{from, from + 105}
	rep := judged(true, r, []span{r}, func(j *judge) {
		// MongoDB holds more in the first minute (lines before the log)
		// and in the day: not differences.
		j.bucket(Minute, "m1", from-15, from+45, cs(map[string]int64{"totalViews": 1, "seconds.15": 1}), cs(map[string]int64{"totalViews": 4, "seconds.3": 3, "seconds.15": 1}), false)
		j.bucket(Daily, "d", t0, t0+86400, cs(map[string]int64{"daily": 3, "hourly.10": 3, "minute.10.30": 1, "minute.10.31": 2}), cs(map[string]int64{"daily": 50, "hourly.9": 40, "hourly.10": 10, "minute.10.30": 1, "minute.10.31": 2, "minute.9.0": 40, "minute.10.29": 7}), false)
		// The second minute is inside: exact.
		j.bucket(Minute, "m2", from+45, from+105, cs(map[string]int64{"totalViews": 2, "seconds.5": 2}), cs(map[string]int64{"totalViews": 2, "seconds.5": 2}), false)
		// Lost hits in a day total reaching outside: a difference.
		j.bucket(Monthly, "mo", t0, t0+31*86400, cs(map[string]int64{"total": 3, "daily.1": 3}), cs(map[string]int64{"total": 2, "daily.1": 2}), false)
	})
	if rep.NDiffs != 2 || rep.Lost != 2 || rep.NOthers != 0 {
		t.Errorf("edges: %+v", rep)
	}
	// m1: totalViews (edge), seconds.15 (inside); d: daily, hourly.10,
	// minute.10.30 (edges), minute.10.31 (inside); m2: 2 inside; mo: 2
	// edges. seconds.3, hourly.9, minute.9.0 and minute.10.29 are outside.
	if rep.Counters != 10 || rep.Edge != 6 {
		t.Errorf("counters %d, edge %d; want 10, 6", rep.Counters, rep.Edge)
	}
}

// A month read in two passes: its total is carried and judged once, with
// the files' values of both; each day's slot in its pass.
func TestJudgeCarriesAcrossPasses(t *testing.T) {
	r := span{t0, t0 + 31*86400}
	w1, w2 := span{t0, t0 + 86400}, span{t0 + 86400, r.to}
	for _, tc := range []struct {
		mongo int64
		lost  uint64
	}{{7, 0}, {6, 1}} {
		rep := judged(true, r, []span{w1, w2}, func(j *judge) {
			got := map[string]int64{"total": tc.mongo, "daily.1": 3, "daily.2": 4}
			want := map[string]int64{"total": 3, "daily.1": 3}
			if j.w == w2 {
				want = map[string]int64{"total": 4, "daily.2": 4}
			}
			j.bucket(Monthly, "202603/s/p", t0, r.to, cs(want), cs(got), false)
		})
		if rep.Lost != tc.lost || rep.Counters != 3 || rep.Buckets[Monthly] != 1 {
			t.Errorf("MongoDB total %d: %+v", tc.mongo, rep)
		}
	}
}

func TestJudgeUnknownAndSites(t *testing.T) {
	r := span{t0, t0 + 86400}
	rep := judged(false, r, []span{r}, func(j *judge) {
		j.bucket(Sites, "20260301/s", t0, t0+86400, cs(map[string]int64{"views": 5, "measures.bytes": 10}), cs(map[string]int64{"views": 5, "measures.bytes": 9, "measures.future": 1}), false)
		j.bucket(Minute, "x", t0, t0+60, cs(nil), cs(map[string]int64{"visits": 1}), false)
	})
	if rep.Unknown != 2 || rep.Lost != 1 || rep.Diffs[0].Kind != Sites || rep.Buckets[Sites] != 1 {
		t.Errorf("%+v", rep)
	}
}

func TestReportWrite(t *testing.T) {
	rep := &Report{Files: 2, Lines: 1204320, Hits: 1204311, Malformed: 9, From: time.Unix(t0, 0), To: time.Unix(t0+86400, 0), Passes: 1}
	rep.Buckets = [kinds]uint64{4000, 400, 9, 1}
	rep.Expired[bucket.Minute] = 12
	rep.Expired[Sites] = 3
	var b bytes.Buffer
	rep.Write(&b)
	for _, want := range []string{"exact: 1,204,311 hits in 4,410 buckets (visitors not compared)\n", "9 malformed", "12 minute buckets past minute_retention", "3 site days past daily_retention", "visitors"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
	j := newJudge(span{}, false, 1, rep)
	j.add(&rep.Diffs, &rep.NDiffs, Diff{Kind: Minute, ID: "202603010000/s/\x1b[2J\u202e", Path: "seconds.3", Files: 2, MongoDB: 1})
	j.add(&rep.Diffs, &rep.NDiffs, Diff{Kind: Daily, ID: "20260301/s/p", Path: "hourly.3", Files: 2, MongoDB: 1})
	rep.Lost = 2
	b.Reset()
	rep.Write(&b)
	out := b.String()
	for _, want := range []string{"differences (2, the first 1):\n", `minute bucket 202603010000/s/\u001b[2J\u202e: seconds.3: MongoDB 1, files 2 (1 lost)`, "not exact: 2 counters differ"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hourly.3") || strings.ContainsAny(out, "\x1b\u202e") {
		t.Errorf("past the first, or escapes printed:\n%s", out)
	}
}

// cs returns m's counters sorted by path.
func cs(m map[string]int64) []counter {
	var out []counter
	for p, n := range m {
		out = append(out, counter{p, n})
	}
	return sortCounters(out)
}

// A site day past the daily retention is not judged, and counted: the
// daemon expires the site totals with the daily buckets. Retention 0 keeps
// them: judged.
func TestJudgeExpiredSiteDays(t *testing.T) {
	r := span{t0, t0 + 2*86400}
	for _, keep := range []time.Duration{24 * time.Hour, 0} {
		rep := &Report{}
		v := &verifier{opts: Options{Retention: bucket.Retention{Daily: keep}}, now: time.Unix(t0+2*86400+3600, 0), rep: rep}
		j := newJudge(r, false, 10, rep)
		j.w = r
		// The 1st ended 25 hours ago, the 2nd an hour ago.
		v.judge(j, Sites, "20260301/s", t0, t0+86400, cs(map[string]int64{"views": 5}), nil, false)
		v.judge(j, Sites, "20260302/s", t0+86400, t0+2*86400, cs(map[string]int64{"views": 2}), cs(map[string]int64{"views": 2}), false)
		j.finish()
		want := [kinds]uint64{Sites: 1}
		if keep == 0 {
			want = [kinds]uint64{}
		}
		if rep.Expired != want || keep > 0 && (rep.Lost != 0 || rep.Buckets[Sites] != 1) || keep == 0 && (rep.Lost != 1 || rep.Buckets[Sites] != 2) {
			t.Errorf("daily retention %v: expired %v, lost %d, site days %d", keep, rep.Expired, rep.Lost, rep.Buckets[Sites])
		}
	}
}
