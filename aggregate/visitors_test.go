package aggregate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/visitor"
)

// periodSalts gives each salt period its own salt, but none for the
// periods in missing (a period whose salt the host never held).
type periodSalts struct {
	period  visitor.Period
	missing map[int64]bool // period starts
}

func (p *periodSalts) For(sec int64) (*visitor.Salt, bool) {
	start, _ := p.period.Bounds(sec)
	if p.missing[start] {
		return nil, false
	}
	var s visitor.Salt
	copy(s[:], fmt.Sprintf("salt%012d", start))
	return &s, true
}

// TestVisitorsFollowTheirPeriod adds people's lines that cross salt
// periods back and forth, some at the very first and last second of a
// period, and some of a period without a salt: every line's key lands in
// the sketches (the site's and its page's) of its own period under that
// period's salt, register for register the sketches computed here line by
// line, and the unsalted hits are all counted once committed.
func TestVisitorsFollowTheirPeriod(t *testing.T) {
	const site, ua = "example.com", "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0"
	for _, tc := range []struct {
		period visitor.Period
		end    time.Time // the end of a period (the start of the next)
	}{
		{visitor.Day, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)},
		{visitor.Month, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.period.String(), func(t *testing.T) {
			end := tc.end.Unix()
			next, _ := tc.period.Bounds(end)
			_, nextEnd := tc.period.Bounds(next)
			unsaltedStart, _ := tc.period.Bounds(nextEnd) // the period after next has no salt
			salts := &periodSalts{period: tc.period, missing: map[int64]bool{unsaltedStart: true}}
			// Seconds relative to end, back and forth across it; the
			// same client twice in a row across it (the cached
			// visitor must not carry over) and the last and first
			// second of each period.
			secs := []int64{end - 1, end, end - 1, end, end + 1, end - 2, end, end - 1, nextEnd, nextEnd - 1, nextEnd, nextEnd + 5, end + 3, nextEnd - 1}
			clients := []int{1, 1, 2, 3, 3, 4, 5, 5, 6, 6, 7, 7, 8, 9}
			var lines []string
			want := map[string]*visitor.Sketch{}
			add := func(start int64, page string, prec uint8, key uint64) {
				var pg []byte
				if page != "" {
					pg = []byte(page)
				}
				k := buffer.VisitorKey(start, []byte(site), pg)
				if want[k] == nil {
					want[k] = visitor.NewSketch(prec)
				}
				want[k].Add(key)
			}
			var unsalted uint64
			for i, sec := range secs {
				client, page := fmt.Sprintf("10.0.0.%d", clients[i]), fmt.Sprintf("/p%d", i%3)
				ts := time.Unix(sec, 0).UTC().Format("02/Jan/2006:15:04:05 -0700")
				lines = append(lines, fmt.Sprintf(`%s - - [%s] "GET %s HTTP/1.1" 200 10 "-" "%s"`, client, ts, page, ua))
				start, _ := tc.period.Bounds(sec)
				salt, ok := salts.For(sec)
				if !ok {
					unsalted++
					continue
				}
				key := visitor.KeyOf(salt, []byte(site), []byte(client), visitor.UADigest([]byte(ua)))
				add(start, "", visitor.SitePrecision, key)
				add(start, page, visitor.PagePrecision, key)
			}
			if unsalted == 0 || len(want) < 4 {
				t.Fatalf("test data: %d unsalted lines, %d sketches", unsalted, len(want))
			}

			p, err := parser.New(parser.Config{Format: "combined", Site: site})
			if err != nil {
				t.Fatal(err)
			}
			sum := aggregate.NewSummer(map[string]*parser.Parser{"src": p}, nil, nil)
			sum.SetVisitors(&aggregate.Visitors{Salts: salts, Period: tc.period, Pages: true})
			// One line per chunk, then all in one: the state kept
			// between chunks and within one alike.
			for i, l := range lines {
				c := chunk("src", 1, int64(i), l)
				if err := sum.Add(&c); err != nil {
					t.Fatal(err)
				}
			}
			checkSketches(t, sum.Sketches(), want)
			sum.Drain(nil)
			if got := sum.Stats().VisitorsUnsalted; got != unsalted {
				t.Errorf("VisitorsUnsalted after a drain: %d, want %d", got, unsalted)
			}

			sum2 := aggregate.NewSummer(map[string]*parser.Parser{"src": p}, nil, nil)
			sum2.SetVisitors(&aggregate.Visitors{Salts: salts, Period: tc.period, Pages: true})
			c := stream.Chunk{Checkpoint: stream.Checkpoint{Source: "src", Path: "/logs/1.log", File: stream.FileID{Dev: 1, Ino: 1}},
				Data: []byte(strings.Join(lines, "\n") + "\n")}
			if err := sum2.Add(&c); err != nil {
				t.Fatal(err)
			}
			checkSketches(t, sum2.Sketches(), want)
			sum2.CommittedWithoutBuffer()
			if got := sum2.Stats().VisitorsUnsalted; got != unsalted {
				t.Errorf("VisitorsUnsalted after a commit: %d, want %d", got, unsalted)
			}
		})
	}
}

// checkSketches compares the sketches held with those wanted, by key and
// register.
func checkSketches(t *testing.T, got, want map[string]*visitor.Sketch) {
	t.Helper()
	for k, w := range want {
		g := got[k]
		if g == nil {
			start, site, page, _ := buffer.DecodeVisitorKey([]byte(k))
			t.Errorf("no sketch of %s%s for the period starting %s", site, page, time.Unix(start, 0).UTC())
			continue
		}
		if !g.Equal(w) {
			start, site, page, _ := buffer.DecodeVisitorKey([]byte(k))
			t.Errorf("sketch of %s%s for the period starting %s: estimate %.1f, want %.1f (registers differ)",
				site, page, time.Unix(start, 0).UTC(), g.Estimate(), w.Estimate())
		}
	}
	for k := range got {
		if want[k] == nil {
			start, site, page, _ := buffer.DecodeVisitorKey([]byte(k))
			t.Errorf("unexpected sketch of %s%s for the period starting %s", site, page, time.Unix(start, 0).UTC())
		}
	}
}
