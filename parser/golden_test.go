package parser

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/logtally/logtally/botclass"
)

var update = flag.Bool("update", false, "rewrite the golden files in ../testdata")

const (
	realLog    = "../testdata/apache_combined_real.log"
	realGolden = "../testdata/apache_combined_real.golden"
)

// goldenLine renders one parse result: "unixtime page status method
// bytes rt bot", or the outcome of a line that is not a hit.
func goldenLine(o Outcome, h *Hit) string {
	if o != OK {
		return o.String()
	}
	return fmt.Sprintf("%d %s %d %s %d %d %s", h.Time, h.Page, h.Status, h.Method, h.Bytes, h.RT, h.Bot)
}

// matchGolden reports whether a golden line is want, where a want ending
// in " *" matches any bot class: the classes of most user agents follow
// the embedded lists, which change when they are refreshed.
func matchGolden(got, want string) bool {
	if w, ok := strings.CutSuffix(want, " *"); ok {
		i := strings.LastIndexByte(got, ' ')
		return i >= 0 && got[:i] == w
	}
	return got == want
}

// TestGoldenRealLog parses 10,000 real Apache combined lines and compares
// each result with the golden file (regenerate with -update and review
// the diff by hand). A few lines are also checked against expectations
// written out from the raw lines.
func TestGoldenRealLog(t *testing.T) {
	data, err := os.ReadFile(realLog)
	if err != nil {
		t.Fatal(err)
	}
	p := mustNew(t, Config{Format: "combined", Site: "semicomplete.com"})
	var out bytes.Buffer
	var got []string
	var h Hit
	counts := map[Outcome]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		o := p.Parse(sc.Bytes(), &h)
		counts[o]++
		g := goldenLine(o, &h)
		got = append(got, g)
		out.WriteString(g)
		out.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 10000 {
		t.Fatalf("%d lines, want 10000", len(got))
	}
	if counts[OK] != 10000 {
		t.Errorf("outcomes %v, want 10000 hits", counts)
	}

	// Expectations from the raw lines (line numbers are 1-based); the
	// bot class is in the golden file.
	for _, tc := range []struct {
		line int
		want string
	}{
		// 83.149.9.216 - - [17/May/2015:10:05:03 +0000] "GET /presentations/logstash-monitorama-2013/images/kibana-search.png HTTP/1.1" 200 203023 ...
		{1, "1431857103 /presentations/logstash-monitorama-2013/images/kibana-search.png 200 GET 203023 -1 *"},
		// 93.114.45.13 - - [17/May/2015:10:05:14 +0000] "GET /articles/dynamic-dns-with-dhcp/ HTTP/1.1" 200 18848 "http://www.google.ro/url?sa=t&..." ...
		{25, "1431857114 /articles/dynamic-dns-with-dhcp/ 200 GET 18848 -1 *"},
		// 50.16.19.13 - - [17/May/2015:10:05:10 +0000] "GET /blog/tags/puppet?flav=rss20 HTTP/1.1" 200 14872 ...
		{32, "1431857110 /blog/tags/puppet 200 GET 14872 -1 *"},
		// 89.170.74.95 - - [17/May/2015:16:05:27 +0000] "HEAD /projects/xdotool/ HTTP/1.1" 200 - ...
		{688, "1431878727 /projects/xdotool/ 200 HEAD 0 -1 *"},
		// 95.82.59.254 - - [19/May/2015:03:05:14 +0000] "GET /favicon.ico HTTP/1.1" 200 3638 ...
		{5000, "1432004714 /favicon.ico 200 GET 3638 -1 *"},
		// 46.118.127.106 - - [20/May/2015:12:05:17 +0000] "GET /scripts/grok-py-test/configlib.py HTTP/1.1" 200 235 "-" "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html
		// (the user agent is cut short: the request still counts)
		{8899, "1432123517 /scripts/grok-py-test/configlib.py 200 GET 235 -1 *"},
		// 64.131.102.243 - - [20/May/2015:14:05:16 +0000] "OPTIONS /projects/xdotool/ HTTP/1.1" 500 626 ...
		{9158, "1432130716 /projects/xdotool/ 500 OPTIONS 626 -1 *"},
		// 46.105.14.53 - - [20/May/2015:21:05:15 +0000] "GET /blog/tags/puppet?flav=rss20 HTTP/1.1" 200 14872 ...
		{10000, "1432155915 /blog/tags/puppet 200 GET 14872 -1 *"},
	} {
		if tc.line > len(got) {
			t.Errorf("line %d missing", tc.line)
		} else if !matchGolden(got[tc.line-1], tc.want) {
			t.Errorf("line %d = %q, want %q", tc.line, got[tc.line-1], tc.want)
		}
	}
	// Line 8899's cut user agent is Googlebot's: a bot, not a person.
	if strings.HasSuffix(got[8898], " people") {
		t.Errorf("line 8899 = %q: Googlebot counted as a person", got[8898])
	}
	var classes [botclass.NumClasses]int
	for _, g := range got {
		c, err := botclass.ParseClass(g[strings.LastIndexByte(g, ' ')+1:])
		if err != nil {
			t.Fatalf("%q: %v", g, err)
		}
		classes[c]++
	}
	hits, misses := p.BotCacheStats()
	t.Logf("bot classes %v (people, search, ai, tool, bot, suspect); cache %d hits, %d misses (%.1f%% hit rate)",
		classes, hits, misses, 100*float64(hits)/float64(hits+misses))

	// Line 3029 requests a 595-byte page (a spam "search" under
	// /presentations/vim/): it is cut to 495 bytes plus "~" and the FNV-1a
	// hash of all 595, computed independently.
	if long := got[3028]; !strings.HasPrefix(long, "1431947147 /presentations/vim/++++") ||
		!strings.Contains(long, "+it%27lltell+you+what+assertion+failed+but+completely+lac~634c3a4f1ffc95b6 403 GET ") ||
		!strings.HasPrefix(long[len("1431947147 ")+DefaultMaxPageLen:], " 403 GET 676 -1 ") {
		t.Errorf("line 3029 = %q", long)
	}

	if *update {
		if err := os.WriteFile(realGolden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(realGolden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGoldenRealLog -update to create it)", err)
	}
	wantLines := bytes.Split(bytes.TrimSuffix(want, []byte("\n")), []byte("\n"))
	if len(wantLines) != len(got) {
		t.Fatalf("golden file has %d lines, parsed %d", len(wantLines), len(got))
	}
	bad := 0
	for i, w := range wantLines {
		if string(w) != got[i] && bad < 10 {
			bad++
			t.Errorf("line %d = %q, golden %q", i+1, got[i], w)
		}
	}
}
