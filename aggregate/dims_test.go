package aggregate_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/parser"
)

// dimsLine is a combined line at sec with a referrer and a user agent.
func dimsLine(page string, sec int, ref, ua string) string {
	ts := t0.Add(time.Duration(sec) * time.Second).Format("02/Jan/2006:15:04:05 -0700")
	return fmt.Sprintf(`1.2.3.4 - - [%s] "GET %s HTTP/1.1" 200 100 "%s" "%s"`, ts, page, ref, ua)
}

// TestDimsCommitted: with parser.Config.Dims, each hit's values are
// counted per site and day and committed with the page counts; a sealed
// full batch carries them, every dimension summing to the hits.
func TestDimsCommitted(t *testing.T) {
	p, err := parser.New(parser.Config{Format: "combined", Site: "s", Dims: &parser.DimsConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	h := startWith(t, buffer.Options{}, 0, func(c *aggregate.Config) { c.Parsers = map[string]*parser.Parser{"src": p} })
	const ff = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
	h.send(chunk("src", 1, 0,
		dimsLine("/a", 0, "https://www.google.com/search?q=x", ff),
		dimsLine("/b", 1, "-", ff),
		dimsLine("/a", 2, "https://www.google.com/", "curl/8.5.0"),
	))
	h.tick()
	b, err := h.buf.Seal(buffer.Seal{})
	if err != nil || b == nil {
		t.Fatal(b, err)
	}
	got := map[string]uint64{}
	sums := map[dims.Dim]uint64{}
	if err := h.buf.View(func(tx *buffer.ReadTx) error {
		return tx.ScanDims(b.ID, func(k []byte, n uint64) bool {
			site, d, v, day, err := buffer.DecodeDimKey(k)
			if err != nil {
				t.Fatal(err)
			}
			start := t0.Unix() - t0.Unix()%86400
			if string(site) != "s" || day != start {
				t.Errorf("key of site %q day %d, want s, %d", site, day, start)
			}
			got[d.String()+"="+string(v)] = n
			sums[d] += n
			return true
		})
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{
		"referrer=google.com": 2, "referrer=(direct)": 1, "channel=search": 2, "channel=direct": 1,
		"country=(unknown)": 3, "asn=(unknown)": 3,
		"browser=Firefox": 2, "browser=(bot)": 1, "os=Linux": 2, "os=(bot)": 1, "device=desktop": 2, "device=(bot)": 1,
		"crawler=(people)": 2, "crawler=curl": 1,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dimension counts\n %v\nwant\n %v", got, want)
	}
	for d := range dims.N {
		if sums[d] != 3 {
			t.Errorf("%s sums to %d, want the 3 hits", d, sums[d])
		}
	}
	// The committed hits by value are the Stats' too (/metrics).
	st := map[string]uint64{}
	for d, m := range h.agg.Stats().ByDim {
		for v, n := range m {
			st[dims.Dim(d).String()+"="+v] = n
		}
	}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("Stats.ByDim\n %v\nwant\n %v", st, want)
	}
}

// TestDimsValuesBound: parser.DimsConfig's Values bounds the open
// dimensions' values a site day keeps by name; the rest count as
// (other), the sums exact.
func TestDimsValuesBound(t *testing.T) {
	p, err := parser.New(parser.Config{Format: "combined", Site: "s", Dims: &parser.DimsConfig{Values: 2}})
	if err != nil {
		t.Fatal(err)
	}
	s := aggregate.NewSummer(map[string]*parser.Parser{"src": p}, nil, nil)
	var lines []string
	for i, host := range []string{"a.example", "b.example", "c.example", "a.example", "d.example"} {
		lines = append(lines, dimsLine("/a", i, "https://"+host+"/", "curl/8.5.0"))
	}
	c := chunk("src", 1, 0, lines...)
	s.Add(&c)
	got := referrers(t, s)
	if want := map[string]uint64{"a.example": 2, "b.example": 1, dims.Other: 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("referrers %v, want %v", got, want)
	}
}

// TestDimsOldDaysForgotten: the Summer forgets the values kept of the
// days before yesterday, each drained, so that a long-running daemon does
// not keep every day it counted: after a hit dated years ahead (a wrong
// date in a line), and when a daemon counting today's hits replays a
// month and more of old days, a day between drains (each old day read is
// forgotten, not all kept until the next day).
func TestDimsOldDaysForgotten(t *testing.T) {
	const days = 40
	for _, tc := range []struct {
		name  string
		first int // the first hit's second; then days 0 to days-1
	}{
		{"a hit ten years ahead", 10 * 365 * 86400},
		{"today, then old days", days * 86400},
	} {
		p, err := parser.New(parser.Config{Format: "combined", Site: "s", Dims: &parser.DimsConfig{}})
		if err != nil {
			t.Fatal(err)
		}
		clk := clock.NewFake(t0.Add(days * 24 * time.Hour))
		s := aggregate.NewSummer(map[string]*parser.Parser{"src": p}, clk, nil)
		var start int64
		add := func(sec int) {
			c := chunk("src", 1, start, dimsLine("/a", sec, "https://a.example/", "curl/8.5.0"))
			start = c.Checkpoint.Offset
			if err := s.Add(&c); err != nil {
				t.Fatal(err)
			}
			s.Drain(nil)
		}
		add(tc.first)
		for d := range days {
			add(d * 86400)
		}
		if n := s.DimDays(); n > 3 {
			t.Errorf("%s: %d site days kept after %d days counted, each drained: want the first and the last two", tc.name, n, days)
		}
	}
}

// TestDimsOnlyOfParsersWithDims: the hits of a source whose parser does
// not count by dimension (an archive re-read with the settings recorded
// before [dimensions] was on) are counted by no value, not under the
// values of the line another source's parser gave before them.
func TestDimsOnlyOfParsersWithDims(t *testing.T) {
	with, err := parser.New(parser.Config{Format: "combined", Site: "s", Dims: &parser.DimsConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	without, err := parser.New(parser.Config{Format: "combined", Site: "s"})
	if err != nil {
		t.Fatal(err)
	}
	s := aggregate.NewSummer(map[string]*parser.Parser{"with": with, "without": without}, nil, nil)
	c := chunk("with", 1, 0, dimsLine("/a", 0, "https://a.example/", "curl/8.5.0"))
	if err := s.Add(&c); err != nil {
		t.Fatal(err)
	}
	c = chunk("without", 2, 0, dimsLine("/a", 1, "https://b.example/", "curl/8.5.0"), dimsLine("/a", 2, "-", "curl/8.5.0"))
	if err := s.Add(&c); err != nil {
		t.Fatal(err)
	}
	got := referrers(t, s)
	if want := map[string]uint64{"a.example": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("referrers %v, want %v: the one hit of the parser with dimensions", got, want)
	}
}

// referrers returns s's hits by referrer value (DimCounts, across sites
// and days).
func referrers(t *testing.T, s *aggregate.Summer) map[string]uint64 {
	t.Helper()
	got := map[string]uint64{}
	for _, dc := range s.DimCounts() {
		_, d, v, _, err := buffer.DecodeDimKey(dc.Key)
		if err != nil {
			t.Fatal(err)
		}
		if d == dims.Referrer {
			got[string(v)] += dc.N
		}
	}
	return got
}
