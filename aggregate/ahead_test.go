package aggregate_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/visitor"
)

// aheadLog returns lines that exercise everything Add does in the order
// of the lines: more hosts than max_sites (some aliased, so never
// folded), more pages a minute than max_pages_per_minute with minutes out
// of order (the limiter's slots reset and come back), malformed and
// filtered lines, bots and people with clients for the visitor sketches.
func aheadLog(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	uas := []string{"Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0", "Googlebot/2.1 (+http://www.google.com/bot.html)", "curl/8.5.0"}
	var ls []string
	for i := range n {
		switch r.IntN(40) {
		case 0:
			ls = append(ls, "")
		case 1:
			ls = append(ls, "not a log line at all")
		case 2:
			ls = append(ls, fmt.Sprintf("host%d.test:80 10.0.0.1 - - [17/May/2015:10:05:03 +0000] \"GET /x HTTP/1.1\" 200 1 \"-\" \"-\"", i)[:30])
		}
		host := fmt.Sprintf("h%02d.test", r.IntN(30))
		if r.IntN(4) == 0 {
			host = "www.example.com" // aliased: always a site
		}
		sec := r.IntN(12*60) - 6*60 // 12 minutes, back and forth
		if r.IntN(10) < 7 {
			sec = i / 4 // mostly in order
		}
		ts := t0.Add(time.Duration(sec) * time.Second).Format("02/Jan/2006:15:04:05 -0700")
		page := fmt.Sprintf("/p%d", r.IntN(12))
		if r.IntN(15) == 0 {
			page += ".png" // filtered
		}
		status := []int{200, 200, 200, 304, 404, 500}[r.IntN(6)]
		ref := []string{"-", "https://www.google.com/search?q=x", "https://" + host + "/", "https://news.example.org/a"}[r.IntN(4)]
		ls = append(ls, fmt.Sprintf(`%s:80 10.0.%d.%d - - [%s] "GET %s HTTP/1.1" %d %d "%s" "%s"`,
			host, r.IntN(3), r.IntN(50), ts, page, status, r.IntN(5000), ref, uas[r.IntN(len(uas))]))
	}
	return ls
}

// TestPreparedChunksCountAsParsed adds the same chunks to three summers,
// one parsing them, one given them as a Preparser parsed them on another
// goroutine, one given every other chunk so (as a replay's Sender
// prepares a chunk only while others wait): sums, figures, site hits,
// visitor sketches and the malformed lines passed on are the same,
// max_sites and max_pages_per_minute applied in the order of the lines by
// each, and the counts by dimension the same.
func TestPreparedChunksCountAsParsed(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2)) // a Preparser needs two
	cfg := parser.Config{
		Format: "vhost_combined", Site: parser.SiteFromLine, MaxSites: 7,
		SiteAliases: map[string]string{"www.example.com": "example.com"},
		Filter:      parser.FilterConfig{ExcludeExtensions: []string{"png"}},
		Dims:        &parser.DimsConfig{},
	}
	cfg.Page.MaxPagesPerMinute = 5
	salts := &periodSalts{period: visitor.Day}
	type run struct {
		sum       *aggregate.Summer
		malformed []string
		logs      bytes.Buffer
	}
	newRun := func() *run {
		p, err := parser.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := &run{}
		log := slog.New(slog.NewTextHandler(&r.logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
		r.sum = aggregate.NewSummer(map[string]*parser.Parser{"src": p}, nil, log)
		r.sum.SetVisitors(&aggregate.Visitors{Salts: salts, Period: visitor.Day, Pages: true})
		r.sum.OnMalformed(func(n uint64, out parser.Outcome, length int) {
			r.malformed = append(r.malformed, fmt.Sprint(n, out, length))
		})
		return r
	}
	parsed, prepared, mixed := newRun(), newRun(), newRun()
	pre, preMixed := prepared.sum.Preparser("src"), mixed.sum.Preparser("src")
	if pre == nil || preMixed == nil {
		t.Fatal("no Preparser on two cores")
	}
	ls := aheadLog(4000)
	var start int64
	for i := 0; i < len(ls); i += 500 {
		c := chunk("src", 1, start, ls[i:min(i+500, len(ls))]...)
		start = c.Checkpoint.Offset
		c2, c3 := c, c
		c2.Data, c3.Data = bytes.Clone(c.Data), bytes.Clone(c.Data)
		done := make(chan struct{})
		go func() {
			pre.Prepare(&c2)
			if i/500%2 == 1 {
				preMixed.Prepare(&c3)
			}
			close(done)
		}()
		<-done
		if c2.Ahead == nil {
			t.Fatal("Prepare attached nothing")
		}
		if err := mixed.sum.Add(&c3); err != nil {
			t.Fatal(err)
		}
		if err := parsed.sum.Add(&c); err != nil {
			t.Fatal(err)
		}
		if err := prepared.sum.Add(&c2); err != nil {
			t.Fatal(err)
		}
	}
	a, b := parsed.sum.Stats(), prepared.sum.Stats()
	if a.SitesFolded == 0 || a.Other == 0 || a.Malformed == 0 || a.Filtered == 0 || a.Hits == 0 {
		t.Fatalf("test data: %d hits, %d folded, %d over the page bound, %d malformed, %d filtered: each must happen",
			a.Hits, a.SitesFolded, a.Other, a.Malformed, a.Filtered)
	}
	if a.ParsedAhead != 0 || b.ParsedAhead != b.Lines {
		t.Errorf("lines parsed ahead: %d of %d parsed, %d of %d prepared", a.ParsedAhead, a.Lines, b.ParsedAhead, b.Lines)
	}
	b.ParsedAhead = 0
	if !reflect.DeepEqual(a, b) {
		t.Errorf("figures:\nparsed   %+v\nprepared %+v", a, b)
	}
	sa, _ := parsed.sum.Sums()
	sb, _ := prepared.sum.Sums()
	if !reflect.DeepEqual(sa, sb) {
		t.Errorf("sums differ: %d keys parsed, %d prepared", len(sa), len(sb))
	}
	checkSketches(t, prepared.sum.Sketches(), parsed.sum.Sketches())
	if len(parsed.sum.Sketches()) != len(prepared.sum.Sketches()) {
		t.Errorf("%d sketches parsed, %d prepared", len(parsed.sum.Sketches()), len(prepared.sum.Sketches()))
	}
	if !reflect.DeepEqual(parsed.malformed, prepared.malformed) || len(parsed.malformed) == 0 {
		t.Errorf("malformed lines passed on:\nparsed   %v\nprepared %v", parsed.malformed, prepared.malformed)
	}
	if parsed.logs.String() != prepared.logs.String() {
		t.Errorf("logs differ:\nparsed:\n%s\nprepared:\n%s", parsed.logs.String(), prepared.logs.String())
	}
	m := mixed.sum.Stats()
	if m.ParsedAhead == 0 || m.ParsedAhead == m.Lines {
		t.Errorf("mixed: %d of %d lines parsed ahead: want some", m.ParsedAhead, m.Lines)
	}
	m.ParsedAhead = 0
	if !reflect.DeepEqual(a, m) {
		t.Errorf("figures:\nparsed %+v\nmixed  %+v", a, m)
	}
	if sm, _ := mixed.sum.Sums(); !reflect.DeepEqual(sa, sm) {
		t.Errorf("sums differ: %d keys parsed, %d mixed", len(sa), len(sm))
	}
	checkSketches(t, mixed.sum.Sketches(), parsed.sum.Sketches())
	if !reflect.DeepEqual(parsed.malformed, mixed.malformed) || parsed.logs.String() != mixed.logs.String() {
		t.Errorf("malformed lines passed on or logs differ, mixed:\n%v\n%s", mixed.malformed, mixed.logs.String())
	}
	da, db, dm := parsed.sum.DimCounts(), prepared.sum.DimCounts(), mixed.sum.DimCounts()
	if len(da) == 0 || !reflect.DeepEqual(da, db) || !reflect.DeepEqual(da, dm) {
		t.Errorf("counts by dimension: %d keys parsed, %d prepared, %d mixed, or their counts differ", len(da), len(db), len(dm))
	}
	var views uint64
	for _, v := range sa {
		views += v[measure.Views]
	}
	if views != a.Hits {
		t.Errorf("%d views in the sums, %d hits", views, a.Hits)
	}
}

// TestPreparedForAnotherParserIsParsedAgain: a chunk prepared for a
// source's parser that was replaced before the aggregator read it (a
// reload) is parsed with the parser of the aggregator's source.
func TestPreparedForAnotherParserIsParsedAgain(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	mk := func(site string) *aggregate.Summer {
		p, err := parser.New(parser.Config{Format: "combined", Site: site})
		if err != nil {
			t.Fatal(err)
		}
		return aggregate.NewSummer(map[string]*parser.Parser{"src": p}, nil, nil)
	}
	old, now := mk("old.test"), mk("new.test")
	c := chunk("src", 1, 0, line("/a", 1), line("/b", 2))
	old.Preparser("src").Prepare(&c)
	if c.Ahead == nil {
		t.Fatal("Prepare attached nothing")
	}
	if err := now.Add(&c); err != nil {
		t.Fatal(err)
	}
	sums, _ := now.Sums()
	var keys []string
	for k := range sums {
		keys = append(keys, k)
	}
	if len(keys) != 2 || !strings.Contains(strings.Join(keys, " "), "new.test") || strings.Contains(strings.Join(keys, " "), "old.test") {
		t.Errorf("keys %q, want two of new.test", keys)
	}
}

// TestNoPreparserOnOneCore: on one core the reader would parse on the
// aggregator's core, and copy each hit once more.
func TestNoPreparserOnOneCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p, err := parser.New(parser.Config{Format: "combined", Site: "s"})
	if err != nil {
		t.Fatal(err)
	}
	sum := aggregate.NewSummer(map[string]*parser.Parser{"src": p}, nil, nil)
	if pre := sum.Preparser("src"); pre != nil {
		t.Error("a Preparser on one core")
	}
	c := chunk("src", 1, 0, line("/a", 1))
	(*aggregate.Preparser)(nil).Prepare(&c)
	if c.Ahead != nil {
		t.Error("a nil Preparser prepared a chunk")
	}
	var _ stream.Chunk = c
}
