package verify

import (
	"testing"

	"github.com/logtally/logtally/dims"
)

// sd returns a site day's counts of the browser dimension.
func sd(m map[string]int64) *siteDims {
	var d siteDims
	d[dims.Browser] = m
	return &d
}

// The rule of judge.dims: a named value MongoDB holds more of is other
// hosts' (a difference with AllHosts); the named values' shortfalls must
// be in MongoDB's (other) (a host's bound folded them), else each is lost
// when MongoDB folded none, or the rest is lost under (other); at the
// range's edges only losses count.
func TestJudgeDims(t *testing.T) {
	inside := span{t0, t0 + 86400}
	edge := span{t0 + 3600, t0 + 7200}
	files := map[string]int64{"Firefox": 10, "Chrome": 5, "Safari": 3}
	for _, c := range []struct {
		name                  string
		r                     span
		allHosts              bool
		mongo                 map[string]int64
		lost, more, others    uint64
		firstPath, firstValue string
	}{
		{"equal", inside, true, map[string]int64{"Firefox": 10, "Chrome": 5, "Safari": 3}, 0, 0, 0, "", ""},
		{"folded", inside, true, map[string]int64{"Firefox": 10, "Chrome": 2, dims.Other: 6}, 0, 0, 0, "", ""},
		{"one lost, none folded", inside, true, map[string]int64{"Firefox": 9, "Chrome": 5, "Safari": 3}, 1, 0, 0, "sources.br", "Firefox"},
		{"two lost, none folded", inside, false, map[string]int64{"Firefox": 9, "Chrome": 4, "Safari": 3}, 2, 0, 0, "sources.br", "Chrome"},
		{"folded, some lost", inside, false, map[string]int64{"Firefox": 10, dims.Other: 5}, 1, 0, 0, "sources.br", dims.Other},
		{"more, all hosts", inside, true, map[string]int64{"Firefox": 12, "Chrome": 5, "Safari": 3, "Edge": 1}, 0, 2, 0, "sources.br", "Edge"},
		{"more, other hosts", inside, false, map[string]int64{"Firefox": 12, "Chrome": 5, "Safari": 3, "Edge": 1}, 0, 0, 2, "", ""},
		{"other hosts' (other)", inside, false, map[string]int64{"Firefox": 10, "Chrome": 5, "Safari": 3, dims.Other: 4}, 0, 0, 1, "", ""},
		{"(other) more, all hosts", inside, true, map[string]int64{"Firefox": 10, "Chrome": 5, dims.Other: 4}, 0, 1, 0, "sources.br", dims.Other},
		{"edge: more is not judged", edge, true, map[string]int64{"Firefox": 12, "Chrome": 5, "Safari": 3, dims.Other: 7}, 0, 0, 0, "", ""},
		{"edge: lost is", edge, true, map[string]int64{"Firefox": 12, "Chrome": 5, "Safari": 2}, 1, 0, 0, "sources.br", "Safari"},
	} {
		rep := &Report{}
		j := newJudge(c.r, c.allHosts, 10, rep)
		j.w = c.r
		j.dims("20260301/s", t0, sd(files), sd(c.mongo))
		if rep.Lost != c.lost || rep.More != c.more || rep.NOthers != c.others || rep.Dims.Days != 1 {
			t.Errorf("%s: lost %d, more %d, others %d, days %d; want %d, %d, %d, 1", c.name, rep.Lost, rep.More, rep.NOthers, rep.Dims.Days, c.lost, c.more, c.others)
		}
		if c.firstPath != "" && (len(rep.Diffs) == 0 || rep.Diffs[0].Path != c.firstPath || rep.Diffs[0].Value != c.firstValue) {
			t.Errorf("%s: diffs %+v, want the first %s %s", c.name, rep.Diffs, c.firstPath, c.firstValue)
		}
		if c.lost+c.more != rep.NDiffs {
			t.Errorf("%s: %d differences", c.name, rep.NDiffs)
		}
	}
	// "folded, some lost": 8 short of Chrome and Safari, 5 in (other):
	// 3 lost under (other).
	rep := &Report{}
	j := newJudge(inside, false, 10, rep)
	j.w = inside
	j.dims("20260301/s", t0, sd(files), sd(map[string]int64{"Firefox": 10, dims.Other: 5}))
	if len(rep.Diffs) != 1 || rep.Diffs[0].Files != 8 || rep.Diffs[0].MongoDB != 5 {
		t.Errorf("folded, some lost: %+v", rep.Diffs)
	}
}
