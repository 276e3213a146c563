package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/loggeo"
	"github.com/logtally/logtally/internal/testenv/testconfig"
	"github.com/logtally/logtally/measure"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// dimsAgents, dimsReferrers and dimsClients are what the test writes and
// the values each must be counted under: the test's own lists.
var (
	dimsAgents = []struct {
		ua                        string
		browser, os, dev, crawler string
	}{
		{"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "Firefox", "Linux", "desktop", "(people)"},
		{"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36", "Chrome", "Android", "mobile", "(people)"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", "Safari", "iOS", "mobile", "(people)"},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "(bot)", "(bot)", "(bot)", "Googlebot"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", "(bot)", "(bot)", "(bot)", "GPTBot"},
	}
	dimsReferrers = []struct{ ref, host, channel string }{
		{"-", "(direct)", "direct"},
		{"https://www.google.com/search?q=a", "google.com", "search"},
		{"https://www.bing.com/", "bing.com", "search"},
		{"https://chatgpt.com/", "chatgpt.com", "ai"},
		{"https://blog.example.org/post", "blog.example.org", "referral"},
		{"https://dims.test/other", "(self)", "internal"},
	}
	dimsClients = []struct{ addr, country string }{
		{"1.0.0.5", "AU"}, {"1.0.1.9", "CN"}, {"6.1.2.3", "US"}, {"-", dims.Unknown},
	}
)

// dimsLog writes n lines of site dims.test from 2026-03-01 10:00 UTC, each
// with an agent, a referrer and a client of the lists, and returns the
// views each value of each dimension must have.
func dimsLog(t *testing.T, path string, n int) map[dims.Dim]map[string]int64 {
	t.Helper()
	want := map[dims.Dim]map[string]int64{}
	add := func(d dims.Dim, v string) {
		if want[d] == nil {
			want[d] = map[string]int64{}
		}
		want[d][v]++
	}
	var b strings.Builder
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	perSec := max(1, n/600) // ten minutes at most: few buckets
	for i := range n {
		a, r, c := dimsAgents[i%len(dimsAgents)], dimsReferrers[(i/2)%len(dimsReferrers)], dimsClients[(i/3)%len(dimsClients)]
		fmt.Fprintf(&b, "%s - - [%s] \"GET /p%d HTTP/1.1\" 200 10 \"%s\" \"%s\"\n", c.addr,
			t0.Add(time.Duration(i/perSec)*time.Second).Format("02/Jan/2006:15:04:05 -0700"), i%5, r.ref, a.ua)
		add(dims.Referrer, r.host)
		add(dims.Channel, r.channel)
		add(dims.Country, c.country)
		add(dims.ASN, dims.Unknown)
		add(dims.Browser, a.browser)
		add(dims.OS, a.os)
		add(dims.Device, a.dev)
		add(dims.Crawler, a.crawler)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return want
}

// TestDimensionsReplayed: a log replayed with [dimensions] on and a Tor
// country database, large enough that the reader parses lines ahead of
// the aggregator on two cores: logtally query -by gives every value of
// every dimension the views the file's lines have, and a second replay
// (from this state dir or another) adds nothing.
func TestDimensionsReplayed(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	t.Setenv("GOMAXPROCS", "2") // the replay's process: a reader beside the aggregator
	const lines = 300_000
	e := newReplayEnv(t)
	tor := torGeoip(t)
	on := func(c *config.Config) {
		c.Dimensions.Enabled = true
		c.Geo.CountryDB = tor
	}
	conf := writeConfig(t, filepath.Join(e.dir, "dims.toml"), e.srv.URI(), e.db.Name(), "dims.test", e.live,
		stateAt(filepath.Join(e.dir, "dstate")), instance("dims-1"), noPrealloc, on)
	arch := filepath.Join(e.arch, "dims.log")
	want := dimsLog(t, arch, lines)
	out := e.replay(conf, "-site", "dims.test", "-format", "combined", arch)
	if m := regexp.MustCompile(`(?m)^parsed ahead: (\d+) lines`).FindStringSubmatch(out); m == nil || m[1] == "0" {
		t.Fatalf("no line was parsed ahead:\n%s", out)
	}
	check := func(what string) {
		t.Helper()
		for d := range dims.N {
			out, stderr, code := runCmd(t, "query", "-config", conf, "-site", "dims.test", "-from", "2026-03-01", "-to", "2026-03-02", "-by", d.String(), "-format", "json")
			if code != 0 {
				t.Fatalf("%s: query -by %s: exit %d\n%s", what, d, code, stderr)
			}
			var got struct {
				Views  int64 `json:"views"`
				Values []struct {
					Value    string  `json:"value"`
					Views    int64   `json:"views"`
					Operator *string `json:"operator"`
					Purpose  *string `json:"purpose"`
					Channel  *string `json:"channel"`
				} `json:"values"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%s: query -by %s: %v\n%s", what, d, err, out)
			}
			m := map[string]int64{}
			facts := map[string]string{}
			for _, v := range got.Values {
				m[v.Value] = v.Views
				if (v.Operator != nil) != (d == dims.Crawler) || (v.Purpose != nil) != (d == dims.Crawler) {
					t.Errorf("%s: query -by %s: %s: operator %v, purpose %v: want them for crawlers only", what, d, v.Value, v.Operator, v.Purpose)
				} else if d == dims.Crawler {
					facts[v.Value] = *v.Operator + "/" + *v.Purpose
				}
				if (v.Channel != nil) != (d == dims.Referrer) {
					t.Errorf("%s: query -by %s: %s: channel %v: want one for referrers only", what, d, v.Value, v.Channel)
				} else if d == dims.Referrer {
					facts[v.Value] = *v.Channel
				}
			}
			if got.Views != lines || !maps.Equal(m, want[d]) {
				t.Errorf("%s: %s: %d views %v\nwant %d views %v", what, d, got.Views, m, lines, want[d])
			}
			if d == dims.Crawler && !maps.Equal(facts, dimsCrawlerFacts) {
				t.Errorf("%s: crawler operators and purposes (json) %v\nwant %v", what, facts, dimsCrawlerFacts)
			}
			if d == dims.Referrer {
				want := map[string]string{}
				for _, r := range dimsReferrers {
					want[r.host] = r.channel
				}
				if !maps.Equal(facts, want) {
					t.Errorf("%s: referrer channels (json) %v\nwant %v", what, facts, want)
				}
			}
		}
		checkCrawlerFacts(t, what, conf)
	}
	check("replayed")
	out = e.replay(conf, "-site", "dims.test", "-format", "combined", arch)
	wantStatus(t, out, "already counted", 1)
	check("replayed again")
}

// dimsCrawlerFacts are the operator/purpose of each crawler value of
// dimsLog's lines.
var dimsCrawlerFacts = map[string]string{"Googlebot": "Google/search", "GPTBot": "OpenAI/ai-training", "(people)": "/"}

// checkCrawlerFacts: logtally query -by crawler's table and csv give each
// crawler of dimsLog its operator and purpose (dimsCrawlerFacts), in the
// columns after the name.
func checkCrawlerFacts(t *testing.T, what, conf string) {
	t.Helper()
	q := []string{"query", "-config", conf, "-site", "dims.test", "-from", "2026-03-01", "-to", "2026-03-02", "-by", "crawler", "-format"}
	out, stderr, code := runCmd(t, append(q, "csv")...)
	if code != 0 {
		t.Fatalf("%s: query -by crawler -format csv: exit %d\n%s", what, code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != "crawler,operator,purpose,views,share_percent" {
		t.Errorf("%s: csv header %q", what, lines[0])
	}
	facts := map[string]string{}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		facts[f[0]] = f[1] + "/" + f[2]
	}
	if !maps.Equal(facts, dimsCrawlerFacts) {
		t.Errorf("%s: crawler operators and purposes (csv) %v\nwant %v\n%s", what, facts, dimsCrawlerFacts, out)
	}
	out, stderr, code = runCmd(t, append(q, "table")...)
	if code != 0 {
		t.Fatalf("%s: query -by crawler -format table: exit %d\n%s", what, code, stderr)
	}
	lines = strings.Split(out, "\n")
	if f := strings.Fields(lines[0]); !slices.Equal(f, []string{"crawler", "operator", "purpose", "views", "share"}) {
		t.Errorf("%s: table header %q", what, lines[0])
	}
	facts = map[string]string{}
	for _, l := range lines[1:] {
		switch f := strings.Fields(l); {
		case len(f) == 5:
			facts[f[0]] = f[1] + "/" + f[2]
		case len(f) == 3 && f[0] == "(people)":
			facts[f[0]] = "/"
		}
	}
	if !maps.Equal(facts, dimsCrawlerFacts) {
		t.Errorf("%s: crawler operators and purposes (table) %v\nwant %v\n%s", what, facts, dimsCrawlerFacts, out)
	}
}

// torGeoip returns the absolute path of geo's Tor country test file.
func torGeoip(t *testing.T) string {
	t.Helper()
	tor, err := filepath.Abs(filepath.Join("..", "..", "geo", "testdata", "tor", "geoip"))
	if err != nil {
		t.Fatal(err)
	}
	return tor
}

// dimensionsOn turns [dimensions] on.
func dimensionsOn(c *config.Config) { c.Dimensions.Enabled = true }

// loggenGeo writes loggeo's databases (loggen.Networks' countries and
// networks) into dir and returns the override naming them in [geo].
func loggenGeo(t *testing.T, dir string) func(*config.Config) {
	t.Helper()
	country, asn := loggeo.Write(t, dir)
	return func(c *config.Config) { c.Geo.CountryDB, c.Geo.ASNDB = country, asn }
}

// checkDims compares every value of every dimension of every site day
// in db with want's (bucketcheck.CompareDims), and checks that each
// dimension of each site day sums to its views in sites (the site
// documents bucketcheck.Read gave), and all days to hits.
func checkDims(t *testing.T, db *mongo.Database, want bucketcheck.Counts, sites bucketcheck.Buckets) bucketcheck.DimsResult {
	t.Helper()
	got := bucketcheck.ReadDims(t, db)
	res := bucketcheck.CompareDims(t, want.Dims, got)
	var total [dims.N]int64
	for _, id := range slices.Sorted(maps.Keys(got)) {
		views := sites[id][bucket.SiteMeasurePath(measure.Views)]
		for dm := range dims.N {
			var sum int64
			for _, n := range got[id][dm] {
				sum += n
			}
			total[dm] += sum
			if sum != views {
				t.Errorf("%s: %s sums to %d, the day has %d views", id, dims.Dim(dm), sum, views)
			}
		}
	}
	for dm := range dims.N {
		if total[dm] != want.Hits {
			t.Errorf("%s: %d hits in all, want %d", dims.Dim(dm), total[dm], want.Hits)
		}
	}
	return res
}

// TestDryRunDimensions: replay -dry-run with [dimensions] on (and the Tor
// country file) counts the lines by dimension as the daemon does, on two
// workers: each dimension's number of values, its values with the most
// hits and the hits of the rest are the file's (the test's own lists).
// Without [dimensions] the summary has none of it.
func TestDryRunDimensions(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "dims.log")
	want := dimsLog(t, log, 600)
	src := testconfig.Source("dims.test", log)
	on := testconfig.Write(t, filepath.Join(dir, "on.toml"), testconfig.New(dir, testconfig.Sources(src), func(c *config.Config) {
		c.Dimensions.Enabled = true
		c.Geo.CountryDB = torGeoip(t)
	}))
	off := testconfig.Write(t, filepath.Join(dir, "off.toml"), testconfig.New(dir, testconfig.Sources(src)))
	run := func(conf string) string {
		var out, errb bytes.Buffer
		if err := cmdReplay([]string{"-dry-run", "-jobs", "2", "-config", conf, log}, &out, &errb); err != nil {
			t.Fatalf("%v\n%s", err, errb.String())
		}
		return out.String()
	}
	s := run(on)
	number := func(f string) int64 {
		n, err := strconv.ParseInt(strings.ReplaceAll(f, ",", ""), 10, 64)
		if err != nil {
			t.Fatalf("%q: %v\n%s", f, err, s)
		}
		return n
	}
	lines := strings.Split(s, "\n")
	for d := range dims.N {
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "by "+d.String()+" ") })
		if i < 0 {
			t.Fatalf("no %s in the summary:\n%s", d, s)
		}
		if f := strings.Fields(lines[i]); number(f[2]) != int64(len(want[d])) {
			t.Errorf("%s: %s values, want %d", d, f[2], len(want[d]))
		}
		// The values by hits, most first (ties by value), as the file has them.
		vs := slices.Collect(maps.Keys(want[d]))
		slices.SortFunc(vs, func(a, b string) int { return cmp.Or(cmp.Compare(want[d][b], want[d][a]), cmp.Compare(a, b)) })
		var rest int64
		for _, v := range vs[min(3, len(vs)):] {
			rest += want[d][v]
		}
		var shown []string
		restShown := false
		for _, l := range lines[i+1:] {
			if !strings.HasPrefix(l, "  ") {
				break
			}
			f := strings.Fields(l)
			name, n := strings.Join(f[:len(f)-1], " "), number(f[len(f)-1])
			switch {
			case name == dims.Other: // the rest, as query -by -top shows it
				restShown = true
				if len(vs) <= 3 || n != rest {
					t.Errorf("%s: %s %d, want the %d hits of %d more values", d, name, n, rest, len(vs)-3)
				}
			case n != want[d][name]:
				t.Errorf("%s: %s %d hits, want %d", d, name, n, want[d][name])
			default:
				shown = append(shown, name)
			}
		}
		if restShown != (len(vs) > 3) {
			t.Errorf("%s: the rest shown %v with %d values", d, restShown, len(vs))
		}
		if !slices.Equal(shown, vs[:min(3, len(vs))]) {
			t.Errorf("%s: shows %q, want %q\n%s", d, shown, vs[:min(3, len(vs))], s)
		}
	}
	if s := run(off); strings.Contains(s, "by referrer") {
		t.Errorf("counts by dimension without [dimensions]:\n%s", s)
	}
}
