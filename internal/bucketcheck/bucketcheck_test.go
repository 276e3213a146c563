package bucketcheck

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/internal/loggen"
)

// handmade is a small log whose every counter is written out by hand in
// TestCountFilesByHand.
const handmade = `1.1.1.1 - - [31/Jan/2026:23:59:58 +0000] "GET /a?x=1 HTTP/1.1" 200 1000 "-" "curl/8.5.0" rt=0.120 urt="0.100"
1.1.1.1 - - [31/Jan/2026:23:59:59 +0000] "HEAD /a HTTP/1.1" 304 - "-" "-" rt=- urt="0.002, 0.003 : 0.004"
1.1.1.1 - - [31/Jan/2026:18:59:59 -0500] "GET /a HTTP/1.1" 404 50 "https://x/" "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" rt=0.5 urt="-"
1.1.1.1 - - [01/Feb/2026:00:00:01 +0000] "GET /a HTTP/1.1" 500 7 "-" "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0" rt=- urt="-"
this is not an access log line
www.s.test:443 1.1.1.1 - - [01/Feb/2026:00:00:02 +0000] "POST /b HTTP/1.1" 101 0
1.1.1.1 - - [31/Jan/2026:23:59:58 +0000] "GET /a HTTP/1.1" 200 3 "-" "curl/8.5.0
1.1.1.1 - - [31/Jan/2026:23:58:10 +0000] "GET /a HTTP/1.1" 502 0 "-" "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)" rt=0.000 urt="0.000"
`

// TestCountFilesByHand counts handmade and compares every counter with
// values computed by hand from its lines:
//
//	1  23:59:58 /a 200 1000 curl (tool)        rt 0.120         → 120000 µs
//	2  23:59:59 /a 304 -    "-" (suspect)      rt - urt 0.002+0.003+0.004 → 9000 µs
//	3  23:59:59 /a 404 50   Googlebot (search) rt 0.5           → 500000 µs
//	4  00:00:01 /a 500 7    Firefox (person)   rt - urt -       → none
//	5  not a line
//	6  00:00:02 /b 101 0    common: person, no timing
//	7  23:59:58 /a 200 3    curl, its closing quote cut (tool), no timing
//	8  23:58:10 /a 502 0    GPTBot (ai)        rt 0.000          → 0 µs, counted
func TestCountFilesByHand(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "access.log"), []byte(handmade), 0o644); err != nil {
		t.Fatal(err)
	}
	got := CountFiles(t, filepath.Join(dir, "access.log*"), "s.test")
	want := Counts{
		Minute: Buckets{
			"202601312359/s.test/a": {
				"seconds.58": 2, "seconds.59": 2, "totalViews": 4,
				"measures.status_2xx": 2, "measures.status_3xx": 1, "measures.status_4xx": 1,
				"measures.bot_tool": 2, "measures.bot_suspect": 1, "measures.bot_search": 1,
				"measures.bytes": 1053,
				"measures.rt_us": 629000, "measures.rt_n": 3, "measures.rt_max_us": 500000,
			},
			"202601312358/s.test/a": {
				"seconds.10": 1, "totalViews": 1,
				"measures.status_5xx": 1, "measures.bot_ai": 1, "measures.rt_n": 1,
			},
			"202602010000/s.test/a": {
				"seconds.1": 1, "totalViews": 1,
				"measures.status_5xx": 1, "measures.bytes": 7,
			},
			"202602010000/s.test/b": {
				"seconds.2": 1, "totalViews": 1,
				"measures.status_other": 1,
			},
		},
		Daily: Buckets{
			"20260131/s.test/a": {
				"minute.23.59": 4, "minute.23.58": 1, "hourly.23": 5, "daily": 5,
				"measures.status_2xx.23": 2, "measures.status_3xx.23": 1, "measures.status_4xx.23": 1, "measures.status_5xx.23": 1,
				"measures.bot_tool.23": 2, "measures.bot_suspect.23": 1, "measures.bot_search.23": 1, "measures.bot_ai.23": 1,
				"measures.bytes.23": 1053,
				"measures.rt_us.23": 629000, "measures.rt_n.23": 4, "measures.rt_max_us.23": 500000,
			},
			"20260201/s.test/a": {
				"minute.0.0": 1, "hourly.0": 1, "daily": 1,
				"measures.status_5xx.0": 1, "measures.bytes.0": 7,
			},
			"20260201/s.test/b": {
				"minute.0.0": 1, "hourly.0": 1, "daily": 1,
				"measures.status_other.0": 1,
			},
		},
		Monthly: Buckets{
			"202601/s.test/a": {
				"daily.31": 5, "total": 5,
				"measures.status_2xx.31": 2, "measures.status_3xx.31": 1, "measures.status_4xx.31": 1, "measures.status_5xx.31": 1,
				"measures.bot_tool.31": 2, "measures.bot_suspect.31": 1, "measures.bot_search.31": 1, "measures.bot_ai.31": 1,
				"measures.bytes.31": 1053,
				"measures.rt_us.31": 629000, "measures.rt_n.31": 4, "measures.rt_max_us.31": 500000,
			},
			"202602/s.test/a": {
				"daily.1": 1, "total": 1,
				"measures.status_5xx.1": 1, "measures.bytes.1": 7,
			},
			"202602/s.test/b": {
				"daily.1": 1, "total": 1,
				"measures.status_other.1": 1,
			},
		},
		Sites: Buckets{
			"20260131/s.test": {
				"views":               5,
				"measures.status_2xx": 2, "measures.status_3xx": 1, "measures.status_4xx": 1, "measures.status_5xx": 1,
				"measures.bot_tool": 2, "measures.bot_suspect": 1, "measures.bot_search": 1, "measures.bot_ai": 1,
				"measures.bytes": 1053,
				"measures.rt_us": 629000, "measures.rt_n": 4, "measures.rt_max_us": 500000,
			},
			"20260201/s.test": {
				"views":               2,
				"measures.status_5xx": 1, "measures.status_other": 1, "measures.bytes": 7,
			},
		},
	}
	if got.Hits != 7 || got.Files != 1 || got.ViewsOnly {
		t.Errorf("hits %d, files %d, views only %v; want 7, 1, false", got.Hits, got.Files, got.ViewsOnly)
	}
	for _, lv := range []struct {
		kind      string
		want, got Buckets
	}{{"minute", want.Minute, got.Minute}, {"daily", want.Daily, got.Daily}, {"monthly", want.Monthly, got.Monthly}, {"sites", want.Sites, got.Sites}} {
		if !maps.EqualFunc(lv.want, lv.got, maps.Equal) {
			t.Errorf("%s:\n got %v\nwant %v", lv.kind, lv.got, lv.want)
		}
	}
}

// recorder records Errorf calls instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestCompareAll checks that every kind of difference is reported: a
// measure of each level and of a site document, a hit lost, one
// duplicated; and that a Counts built with Add is compared on views only.
func TestCompareAll(t *testing.T) {
	at := time.Date(2026, 2, 1, 10, 30, 5, 0, time.UTC)
	var want Counts
	want.AddHit(at, "s", "/a", Hit{Status: 200, Bytes: 10, Bot: botclass.AI, RT: 1500})
	want.AddHit(at, "s", "/a", Hit{Status: 200, Bytes: 10, RT: 700})
	got := clone(want)
	if r := CompareAll(t, want, got); !r.Exact() {
		t.Fatalf("identical counts: %v", r)
	}
	if want.Monthly["202602/s/a"]["measures.rt_max_us.1"] != 1500 || want.Sites["20260201/s"]["measures.rt_us"] != 2200 {
		t.Errorf("rt_max_us is not the maximum or rt_us not the sum: %v", want.Sites)
	}

	got.Daily["20260201/s/a"]["measures.bot_ai.10"] = 2
	got.Sites["20260201/s"]["measures.rt_max_us"] = 2200
	got.Minute["202602011030/s/a"]["totalViews"] = 3
	delete(got.Monthly, "202602/s/a")
	rec := &recorder{TB: t}
	r := CompareAll(rec, want, got)
	if r.Lost != [4]int64{0, 0, 2, 0} || r.Dup != [4]int64{1, 0, 0, 0} {
		t.Errorf("lost %v, duplicated %v", r.Lost, r.Dup)
	}
	all := strings.Join(rec.errs, "\n")
	for _, s := range []string{
		"daily bucket 20260201/s/a: measures.bot_ai.10 = 2, want 1",
		"site document 20260201/s: measures.rt_max_us = 2200, want 1500",
		"minute bucket 202602011030/s/a: totalViews = 3, want 2",
		"monthly bucket 202602/s/a: measures.bytes.1 = 0, want 20",
	} {
		if !strings.Contains(all, s) {
			t.Errorf("missing %q in:\n%s", s, all)
		}
	}

	var views Counts
	views.Add(at, "s", "/a")
	views.Add(at, "s", "/a")
	if r := CompareAll(t, views, clone(want)); !r.Exact() || !views.ViewsOnly {
		t.Errorf("views only: %v", r)
	}
	views.Merge(want)
	if views.Sites["20260201/s"]["measures.rt_max_us"] != 1500 || views.Sites["20260201/s"]["views"] != 4 {
		t.Errorf("merge: %v", views.Sites)
	}
}

func clone(c Counts) Counts {
	var o Counts
	o.Merge(c)
	return o
}

func TestMicrosAndClass(t *testing.T) {
	for s, want := range map[string]int64{"0.123": 123000, "1.5": 1500000, "12": 12000000, "0.000": 0, "0.000001": 1, "-": -1} {
		if got, err := micros(s); got != want || err != nil {
			t.Errorf("micros(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", ".5", "1.2345678", "1e3", "-1", "0,5"} {
		if _, err := micros(s); err == nil {
			t.Errorf("micros(%q): no error", s)
		}
	}
	rules, _ := botclass.New(nil)
	for _, ua := range []string{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "GPTBot/1.0", "", "x"} {
		if _, inTable := loggen.Class(ua); !inTable && Class(ua) != rules.Classify([]byte(ua)) {
			t.Errorf("Class(%q) = %v, not the classifier's", ua, Class(ua))
		}
	}
	if Class("curl/8.5.0") != botclass.Tool || Class("-") != botclass.Suspect {
		t.Errorf("Class does not take loggen.Agents' classes")
	}
}
