package observe

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/dims"
)

// logtally_traffic_views_total shows each dimension's 20 values with the
// most hits and the rest under (other), summing to every hit; its values
// come from the lines: escaped by the exposition format, cut to 64 bytes
// (valid UTF-8; values cut alike merge), never markup-breaking.
func TestMetricsByDimension(t *testing.T) {
	f := sampleFake()
	a := &f.stats.Aggregator
	var total uint64
	a.ByDim[dims.Referrer] = map[string]uint64{dims.Other: 7}
	for i := range 30 {
		a.ByDim[dims.Referrer][fmt.Sprintf("r%02d.example", i)] = uint64(100 - i)
	}
	for _, n := range a.ByDim[dims.Referrer] {
		total += n
	}
	long := strings.Repeat("é", 40) // 80 bytes
	a.ByDim[dims.ASN] = map[string]uint64{
		`AS666 "evil"` + "\n" + `} 1e9`: 3,
		long + "a":                      2,
		long + "b":                      1,
		"AS1 bad \xff utf-8":            4,
	}
	a.ByDim[dims.Country] = map[string]uint64{"FR": 5}
	_, body, _ := get(t, newServer(t, f, Config{}).Handler(), "/metrics")

	var shown, other uint64
	series := 0
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, `logtally_traffic_views_total{dimension="referrer"`) {
			continue
		}
		series++
		var n uint64
		fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &n)
		shown += n
		if strings.Contains(line, `value="(other)"`) {
			other = n
		}
	}
	if series != MaxDimValuesShown+1 || shown != total || other != 7+sumRange(71, 80) {
		t.Errorf("referrer: %d series summing to %d ((other) %d), want %d summing to %d", series, shown, other, MaxDimValuesShown+1, total)
	}
	cut := strings.Repeat("é", 30) + "…" // 60 + 3 bytes: within 64
	for _, want := range []string{
		`logtally_traffic_views_total{dimension="referrer",value="r00.example"} 100`,
		`logtally_traffic_views_total{dimension="referrer",value="r19.example"} 81`,
		`logtally_traffic_views_total{dimension="asn",value="AS666 \"evil\"\n} 1e9"} 3`,
		`logtally_traffic_views_total{dimension="asn",value="` + cut + `"} 3`,
		`logtally_traffic_views_total{dimension="asn",value="AS1 bad ` + "\uFFFD" + ` utf-8"} 4`,
		`logtally_traffic_views_total{dimension="country",value="FR"} 5`,
		"# TYPE logtally_traffic_views_total counter",
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("no %q in /metrics", want)
		}
	}
	if strings.Contains(body, "r20.example") || strings.Contains(body, `dimension="browser"`) {
		t.Errorf("a value past the top 20, or a dimension without hits, shown")
	}
	problems, err := testutil.CollectAndLint(newCollector(f, "v", nil, clock.NewFake(t0), slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func sumRange(lo, hi uint64) (s uint64) {
	for i := lo; i <= hi; i++ {
		s += i
	}
	return s
}
