package aggregate

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/parser"
)

// refLimiter is pageLimiter as it was before its caches (the last site's
// state, the pages known seen): the reference its answers are compared
// with.
type refLimiter struct {
	max      int
	sites    map[string]*refSiteLimit
	overflow uint64
}

type refSiteLimit struct {
	slots [limiterSlots]struct {
		minute int64
		seen   map[uint64]struct{}
	}
}

func (l *refLimiter) Apply(site, page []byte, minute int64) []byte {
	s := l.sites[string(site)]
	if s == nil {
		s = &refSiteLimit{}
		l.sites[string(site)] = s
	}
	slot := &s.slots[uint64(minute)%limiterSlots]
	if slot.seen == nil {
		slot.seen = make(map[uint64]struct{}, min(l.max, 1024))
		slot.minute = minute
	} else if slot.minute != minute {
		clear(slot.seen)
		slot.minute = minute
	}
	h := fnv1a.Extend(fnv1a.Offset, page)
	if _, ok := slot.seen[h]; ok {
		return page
	}
	if len(slot.seen) >= l.max {
		l.overflow++
		return parser.Other
	}
	slot.seen[h] = struct{}{}
	return page
}

// The cached pageLimiter answers every line as the reference (the
// limiter before its caches) does, and counts the same overflow: random
// lines of a few sites (runs of one site, and alternating ones), pages
// from a few to many (so that max is reached and Other happens, and pages
// of the same length share cache entries; some too long for the cache,
// some empty), and minutes wandering back and forth over more
// than limiterSlots minutes (slots reset while the cache has entries for
// them), for small and larger max.
func TestPageLimiterMatchesReference(t *testing.T) {
	for _, max := range []int{1, 2, 3, 5, 20} {
		for seed := range uint64(20) {
			t.Run(fmt.Sprintf("max%d-seed%d", max, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, uint64(max)))
				lim, ref := newPageLimiter(max), &refLimiter{max: max, sites: map[string]*refSiteLimit{}}
				sites := [][]byte{[]byte("a.test"), []byte("b.test"), []byte(""), []byte("c")}
				nPages := max + 1 + r.IntN(2*max+4) // more than max: Other happens
				if seed%2 == 1 {
					nPages = 3000 // pages of one length share cache entries
				}
				minute, site := int64(28_000_000), sites[0]
				for i := range 20_000 {
					if r.IntN(8) == 0 {
						site = sites[r.IntN(len(sites))]
					}
					switch r.IntN(16) {
					case 0:
						minute += int64(r.IntN(2*limiterSlots + 3)) // forward, past the slots at times
					case 1:
						minute -= int64(r.IntN(2*limiterSlots + 3)) // back as far
					case 2:
						minute++
					}
					page := fmt.Appendf(nil, "/p%d", r.IntN(nPages))
					switch r.IntN(20) {
					case 0: // longer than the cache holds
						page = fmt.Appendf(nil, "/a/page/longer/than/known/holds/%040d", r.IntN(nPages))
					case 1:
						page = nil
					}
					got, want := lim.Apply(site, page, minute), ref.Apply(site, page, minute)
					if !bytes.Equal(got, want) {
						t.Fatalf("line %d (site %q, page %s, minute %d): %q, want %q", i, site, page, minute, got, want)
					}
					if lim.Overflow() != ref.overflow {
						t.Fatalf("line %d: overflow %d, want %d", i, lim.Overflow(), ref.overflow)
					}
				}
				if ref.overflow == 0 && max < 20 {
					t.Errorf("no page counted under Other: the test does not reach the bound")
				}
			})
		}
	}
}

// BenchmarkPageLimiter applies the limiter (max_pages_per_minute's
// default, 2,000) to the pages of 200,000 lines, and, in the same run,
// the limiter as it was before its caches (the reference of
// TestPageLimiterMatchesReference): realistic lines (internal/loggen: one
// site, 2,000 pages of Zipf popularity, about 12 lines a second), and
// bench/replay's log (one site, 10 short pages, 1,667 lines a second). It
// reports ns per line of each and their ratio.
//
//	go test -run '^$' -bench PageLimiter -count 3 ./aggregate
func BenchmarkPageLimiter(b *testing.B) {
	type line struct {
		page   []byte
		minute int64
	}
	var realistic, short []line
	p, err := parser.New(parser.Config{Format: "combined", Site: "example.com"})
	if err != nil {
		b.Fatal(err)
	}
	g := loggen.New(1)
	var h parser.Hit
	var buf []byte
	for i := range 200_000 {
		buf = g.Append(buf[:0], false)
		if p.Parse(buf, &h) != parser.OK {
			b.Fatal("not a hit")
		}
		realistic = append(realistic, line{append([]byte(nil), h.Page...), h.Time / 60})
		short = append(short, line{fmt.Appendf(nil, "/page/%d", i*7%10), 29_000_000 + int64(i/100_000)})
	}
	for _, c := range []struct {
		name  string
		lines []line
	}{{"realistic", realistic}, {"10pages", short}} {
		b.Run(c.name, func(b *testing.B) {
			const max = 2000
			site := []byte("example.com")
			var tNew, tRef float64
			for i := 0; b.Loop(); i++ {
				lim, ref := newPageLimiter(max), &refLimiter{max: max, sites: map[string]*refSiteLimit{}}
				run := func(apply func(site, page []byte, minute int64) []byte) float64 {
					t0 := time.Now()
					for _, l := range c.lines {
						apply(site, l.page, l.minute)
					}
					return float64(time.Since(t0))
				}
				if i%2 == 0 {
					tNew += run(lim.Apply)
					tRef += run(ref.Apply)
				} else {
					tRef += run(ref.Apply)
					tNew += run(lim.Apply)
				}
			}
			n := float64(b.N) * float64(len(c.lines))
			b.ReportMetric(tNew/n, "ns/line")
			b.ReportMetric(tRef/n, "ns/line_before")
			b.ReportMetric(tNew/tRef, "x_before")
		})
	}
}

func TestPageLimiter(t *testing.T) {
	if l := newPageLimiter(0); l != nil || string(l.Apply([]byte("s"), []byte("/a"), 1)) != "/a" || l.Overflow() != 0 {
		t.Fatal("no limit")
	}
	l := newPageLimiter(2)
	s, s2 := []byte("s"), []byte("s2")
	apply := func(site []byte, page string, minute int64) string {
		return string(l.Apply(site, []byte(page), minute))
	}
	for _, tc := range []struct {
		site   []byte
		page   string
		minute int64
		want   string
	}{
		{s, "/a", 10, "/a"},
		{s, "/b", 10, "/b"},
		{s, "/c", 10, "(other)"},
		{s, "/a", 10, "/a"},
		{s2, "/c", 10, "/c"}, // per site
		{s, "/c", 11, "/c"},  // per minute
		{s, "/d", 11, "/d"},
		{s, "/e", 11, "(other)"},
		{s, "/d", 10, "(other)"}, // an earlier minute still has its bound
		{s, "/b", 10, "/b"},
		{s, "/e", 14, "/e"}, // reuses minute 10's slot
		{s, "/c", 10, "/c"}, // minute 10 again: its state was reset
	} {
		if got := apply(tc.site, tc.page, tc.minute); got != tc.want {
			t.Errorf("Apply(%s, %s, %d) = %s, want %s", tc.site, tc.page, tc.minute, got, tc.want)
		}
	}
	if l.Overflow() != 3 {
		t.Errorf("Overflow() = %d", l.Overflow())
	}
	pages := [][]byte{[]byte("/a"), []byte("/b")}
	if n := testing.AllocsPerRun(100, func() {
		for _, p := range pages {
			l.Apply(s, p, 20)
		}
	}); n != 0 {
		t.Errorf("%v allocs for seen pages", n)
	}
}
