package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/internal/testenv/testconfig"
)

// The verify tests: logs counted by the real daemon and replay, then
// `logtally verify` over them, judged against bucketcheck's own count.

const verifySite = "verify.test"

// verifyLines returns n combined lines from line number from on, one
// every 700 ms from t0: three pages, statuses of every class, sizes and
// the user agents of loggen.Agents (people and bots), so that every
// measure but the response times counts.
func verifyLines(t0 time.Time, from, n int, pages ...string) []byte {
	if len(pages) == 0 {
		pages = []string{"/a", "/b", "/c"}
	}
	statuses := []int{200, 200, 304, 404, 500, 200, 301}
	var b bytes.Buffer
	for i := from; i < from+n; i++ {
		ts := t0.Add(time.Duration(i) * 700 * time.Millisecond)
		fmt.Fprintf(&b, "10.0.%d.%d - - [%s] \"GET %s?q=%d HTTP/1.1\" %d %d \"-\" \"%s\"\n",
			i%7, i%200, ts.Format("02/Jan/2006:15:04:05 -0700"), pages[i%len(pages)], i,
			statuses[i%len(statuses)], 100+i*13%900, loggen.Agents[i%len(loggen.Agents)].UA)
	}
	return b.Bytes()
}

// verifyRun runs logtally verify with args and returns its stdout, stderr
// and exit status, logging them.
func verifyRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	out, stderr, code := runCmd(t, append([]string{"verify"}, args...)...)
	t.Logf("verify %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr)
	return out, stderr, code
}

// exactLine returns the hits and buckets of verify's "exact: N hits in M
// buckets" line, failing the test without one.
func exactLine(t *testing.T, out string) (hits, buckets int) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^exact: ([\d,]+) hits in ([\d,]+) buckets`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no exact line in:\n%s", out)
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", "")); return n }
	return atoi(m[1]), atoi(m[2])
}

// TestVerify: the daemon counts a live log and a replay a gzip archive of
// the lines before it, across midnight; verify over both is exact, with
// the files' count of hits, and reading a range at a time (-max-sums)
// too. Then one counter of a minute bucket and one of a daily bucket
// are altered in MongoDB: verify exits 1 naming both, with the measure.
func TestVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	srv := mongotest.Start(t)
	db := srv.Database(t)
	dir := t.TempDir()
	logs, truth := filepath.Join(dir, "logs"), filepath.Join(dir, "truth")
	os.MkdirAll(logs, 0o755)
	os.MkdirAll(truth, 0o755)
	live := filepath.Join(logs, "access.log")
	// Every page hot: the test alters page buckets' counters, minute by
	// minute (TestVerifyTails alters tails).
	conf := fastConfig(t, dir, srv.URI(), db.Name(), verifySite, live, hotPages)
	t0 := time.Date(2026, 2, 28, 23, 57, 40, 0, time.UTC) // the last day of a month
	old, now := verifyLines(t0, 0, 200), verifyLines(t0, 200, 200)
	archive := filepath.Join(logs, "access.log.1.gz")
	gzipTo(t, archive, old)
	os.WriteFile(filepath.Join(truth, "1"), old, 0o644)
	os.WriteFile(filepath.Join(truth, "2"), now, 0o644)
	os.WriteFile(live, now, 0o644)

	if out, stderr, code := runCmd(t, "replay", "-config", conf, archive); code != 0 {
		t.Fatalf("replay: exit %d\n%s%s", code, out, stderr)
	}
	d, dout := daemon(t, conf)
	want := bucketcheck.CountFiles(t, filepath.Join(truth, "*"), verifySite)
	testenv.Wait(t, 60*time.Second, "MongoDB to hold every hit", func() bool { return monthTotal(t, db) >= want.Hits }, dout)
	stopDaemon(t, d, d.Process, dout)
	if res := bucketcheck.CompareAll(t, want, bucketcheck.Read(t, db)); !res.Exact() {
		t.Fatalf("MongoDB is not the files' count: %v", res)
	}

	for _, args := range [][]string{
		{"-config", conf, archive, live},
		{"-config", conf, "-all-hosts", filepath.Join(logs, "access.log*")},
		{"-config", conf, "-all-hosts", "-max-sums", "40", "-jobs", "2", archive, live},
	} {
		out, _, code := verifyRun(t, args...)
		hits, buckets := exactLine(t, out)
		if code != 0 || hits != int(want.Hits) || buckets < len(want.Minute)+len(want.Daily) {
			t.Errorf("verify %v: exit %d, %d hits in %d buckets; want exit 0, %d hits in at least %d",
				args, code, hits, buckets, want.Hits, len(want.Minute)+len(want.Daily))
		}
		if slices.Contains(args, "-max-sums") && !strings.Contains(out, "times: a range at a time") {
			t.Errorf("-max-sums 40: read once:\n%s", out)
		}
	}

	// One measure of a minute bucket loses a hit; a daily bucket's minute
	// counter gains two.
	var minuteID string
	for id, c := range want.Minute {
		if c["measures.status_4xx"] > 0 && strings.HasPrefix(id, "202603010001/") {
			minuteID = id
		}
	}
	dailyID := "20260228/" + verifySite + "/b"
	if minuteID == "" || want.Daily[dailyID]["minute.23.59"] == 0 {
		t.Fatalf("no minute bucket with a 4xx, or no hit in %s at 23:59", dailyID)
	}
	ctx := context.Background()
	for coll, u := range map[string]bson.D{
		"minutes": {{Key: "_id", Value: minuteID}},
		"daily":   {{Key: "_id", Value: dailyID}},
	} {
		inc := bson.D{{Key: "measures.status_4xx", Value: int32(-1)}}
		if coll == "daily" {
			inc = bson.D{{Key: "minute.23.59", Value: int64(2)}}
		}
		if res, err := srv.Direct(db.Name()).Collection(coll).UpdateOne(ctx, u, bson.D{{Key: "$inc", Value: inc}}); err != nil || res.MatchedCount != 1 {
			t.Fatalf("alter %s %v: %v, %+v", coll, u, err, res)
		}
	}
	for _, args := range [][]string{
		{"-config", conf, "-all-hosts", archive, live},
		{"-config", conf, "-all-hosts", "-max-sums", "40", "-jobs", "2", archive, live},
	} {
		out, _, code := verifyRun(t, args...)
		for _, want := range []string{
			"differences (2):",
			"minute bucket " + minuteID + ": measures.status_4xx: MongoDB ",
			"(1 lost)",
			"daily bucket " + dailyID + ": minute.23.59: MongoDB ",
			"(2 more in MongoDB)",
			"not exact: 2 counters differ (1 below the files: hits lost; 1 above)",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("verify %v: no %q", args, want)
			}
		}
		if code != 1 {
			t.Errorf("verify %v: exit %d, want 1", args, code)
		}
	}
	// Without -all-hosts the gain may be another host's: said apart; the
	// loss is still a difference.
	out, _, code := verifyRun(t, "-config", conf, archive, live)
	if code != 1 || !strings.Contains(out, "differences (1):") || !strings.Contains(out, "more in MongoDB: other hosts?") ||
		!strings.Contains(out, "daily bucket "+dailyID+": minute.23.59: ") {
		t.Errorf("without -all-hosts: exit %d", code)
	}
}

// TestVerifyHosts: two hosts replay their own logs of the same minutes
// and pages into one database. One host's logs alone: MongoDB holds more,
// said as other hosts' (exit 0), a difference with -all-hosts; both
// hosts' logs with -all-hosts: exact. Buckets past minute_retention are
// not judged, and the summary says so.
func TestVerifyHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	// Ten days ago: past the 48 hours of minute_retention.
	t0 := clock.Real{}.Now().UTC().Add(-10 * 24 * time.Hour).Truncate(time.Hour)
	confs := map[string]string{}
	for _, host := range []string{"web-1", "web-2"} {
		confs[host] = writeConfig(t, filepath.Join(e.dir, host+".toml"), e.srv.URI(), e.db.Name(), replaySite, e.live,
			stateAt(filepath.Join(e.dir, "state-"+host)), instance(host), hotPages, func(c *config.Config) {
				c.Buckets.MinuteRetention = config.Duration(48 * time.Hour)
			})
	}
	a := e.archive("web-1.log.gz", verifyLines(t0, 0, 150, "/a", "/b"))
	b := e.archive("web-2.log.gz", verifyLines(t0, 1, 150, "/b", "/c"))
	e.replay(confs["web-1"], "-site", replaySite, "-format", "combined", a)
	e.replay(confs["web-2"], "-site", replaySite, "-format", "combined", b)
	conf := confs["web-1"]

	out, _, code := verifyRun(t, "-config", conf, a)
	if hits, _ := exactLine(t, out); code != 0 || hits != 150 || !strings.Contains(out, "more in MongoDB: other hosts?") {
		t.Errorf("one host's log: exit %d, %d hits; want 0, 150, more in MongoDB", code, hits)
	}
	for _, want := range []string{"minute buckets past minute_retention", "visitors"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the summary", want)
		}
	}
	if _, _, code := verifyRun(t, "-config", conf, "-all-hosts", a); code != 1 {
		t.Errorf("one host's log with -all-hosts: exit %d, want 1", code)
	}
	out, _, code = verifyRun(t, "-config", conf, "-all-hosts", a, b)
	if hits, _ := exactLine(t, out); code != 0 || hits != 300 || strings.Contains(out, "other hosts?") {
		t.Errorf("both hosts' logs: exit %d, %d hits; want 0, 300, nothing more in MongoDB", code, hits)
	}
}

// TestVerifyBadInput: usage mistakes, a missing file, a file without a
// hit and a config it cannot choose a parser from exit 2 with one line
// naming the problem, before MongoDB (none listens) is asked anything.
func TestVerifyBadInput(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	os.WriteFile(log, verifyLines(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), 0, 10), 0o644)
	junk := filepath.Join(dir, "junk.log")
	os.WriteFile(junk, []byte("not a log line\nnor this\n"), 0o644)
	conf := fastConfig(t, dir, "mongodb://127.0.0.1:1", "x", verifySite, log)
	other := config.Source{Name: "other", Site: "o", Paths: []string{"/nowhere"}, Format: "common"}
	two := writeConfig(t, filepath.Join(dir, "two.toml"), "mongodb://127.0.0.1:1", "x", verifySite, log, testconfig.Sources(other))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{log}, "verify: -config FILE is required"},
		{[]string{"-config", conf}, "verify: no log FILE given"},
		{[]string{"-config", conf, filepath.Join(dir, "*.gz")}, "matches no file"},
		{[]string{"-config", conf, "-from", "yesterday", log}, "verify: -from:"},
		{[]string{"-config", conf, "-from", "2026-03-02", "-to", "2026-03-01", log}, "is not before -to"},
		{[]string{"-config", conf, "-jobs", "0", log}, "-jobs 0"},
		{[]string{"-config", conf, filepath.Join(dir, "missing.log")}, "missing.log"},
		{[]string{"-config", conf, junk}, "no hits in 1 files"},
		{[]string{"-config", two, log}, "choose one with -source NAME"},
		{[]string{"-config", two, "-source", "nope", log}, `no source named "nope"`},
		{[]string{"-config", conf, "-format", "nonsense", log}, "nonsense"},
		{[]string{"-config", filepath.Join(dir, "missing.toml"), log}, "read config"},
	} {
		_, stderr, code := runCmd(t, append([]string{"verify"}, tc.args...)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		last := lines[len(lines)-1]
		if code != 2 || !strings.HasPrefix(last, "logtally: ") || !strings.Contains(last, tc.want) {
			t.Errorf("verify %v: exit %d, stderr %q; want 2 and a last line with %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestVerifyDimensions: a log replayed with [dimensions] on (and a Tor
// country database): verify compares every value of every dimension of
// the site day with the files' and is exact. Then MongoDB's Firefox
// loses a hit and Chrome gains two: verify names both values; hits
// moved from Safari to (other) (a host's bound) are no difference; a day
// without counts by dimension is said apart, not a difference.
func TestVerifyDimensions(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	tor := torGeoip(t)
	conf := writeConfig(t, filepath.Join(e.dir, "dims.toml"), e.srv.URI(), e.db.Name(), "dims.test", e.live,
		stateAt(filepath.Join(e.dir, "dstate")), instance("dims-1"), noPrealloc, func(c *config.Config) {
			c.Dimensions.Enabled = true
			c.Geo.CountryDB = tor
		})
	arch, arch2 := filepath.Join(e.arch, "dims.log"), filepath.Join(e.arch, "dims2.log")
	want := dimsLog(t, arch, 600)
	// The same lines a day later: two site days, and -max-sums reads a
	// day at a time.
	b, err := os.ReadFile(arch)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(arch2, bytes.ReplaceAll(b, []byte("[01/Mar/2026:"), []byte("[02/Mar/2026:")), 0o644)
	e.replay(conf, "-site", "dims.test", "-format", "combined", arch)
	e.replay(conf, "-site", "dims.test", "-format", "combined", arch2)
	var values int
	for _, m := range want {
		values += len(m)
	}
	id := "20260301/dims.test"
	if want[dims.Browser]["Firefox"] != 120 || want[dims.Browser]["Chrome"] != 120 || want[dims.Browser]["Safari"] != 120 {
		t.Fatalf("browsers: %v", want[dims.Browser])
	}
	day := []string{"-from", "2026-03-01", "-to", "2026-03-02"} // the day inside the range: judged exactly
	verify := func(args ...string) (string, int) {
		t.Helper()
		out, _, code := verifyRun(t, append([]string{"-config", conf, "-site", "dims.test", "-format", "combined"}, append(args, arch)...)...)
		return out, code
	}
	for _, args := range [][]string{day, append([]string{"-all-hosts"}, day...), nil} {
		out, code := verify(args...)
		if hits, _ := exactLine(t, out); code != 0 || hits != 600 {
			t.Errorf("verify %v: exit %d, %d hits; want 0, 600", args, code, hits)
		}
		if line := fmt.Sprintf("by dimension: 1 site days, %d values compared\n", values); !strings.Contains(out, line) {
			t.Errorf("verify %v: no %q", args, line)
		}
	}
	// Both days, a day at a time on two goroutines.
	out, _, code := verifyRun(t, "-config", conf, "-site", "dims.test", "-format", "combined", "-all-hosts", "-max-sums", "100", "-jobs", "2",
		"-from", "2026-03-01", "-to", "2026-03-03", arch, arch2)
	if hits, _ := exactLine(t, out); code != 0 || hits != 1200 || !strings.Contains(out, "times: a range at a time") ||
		!strings.Contains(out, fmt.Sprintf("by dimension: 2 site days, %d values compared\n", 2*values)) {
		t.Errorf("two days, -max-sums: exit %d, %d hits; want 0, 1200, read a day at a time, 2 site days by dimension", code, hits)
	}
	// A range that cuts the day while the file has hits of it outside:
	// its counts by dimension (kept by day) are not judged.
	out, code = verify("-from", "2026-03-01T10:05:00Z")
	if hits, _ := exactLine(t, out); code != 0 || hits != 300 || !strings.Contains(out, "by dimension: 0 site days, 0 values compared; 1 site days cut by -from/-to") {
		t.Errorf("-from in the day: exit %d, %d hits", code, hits)
	}

	sites := e.srv.Direct(e.db.Name()).Collection("sites")
	alter := func(inc bson.D) {
		t.Helper()
		if res, err := sites.UpdateOne(context.Background(), bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$inc", Value: inc}}); err != nil || res.MatchedCount != 1 {
			t.Fatalf("alter %v: %v, %+v", inc, err, res)
		}
	}
	alter(bson.D{{Key: "sources.br.Firefox", Value: int64(-1)}, {Key: "sources.br.Chrome", Value: int64(2)}})
	out, code = verify(append([]string{"-all-hosts"}, day...)...)
	for _, w := range []string{
		"differences (2):",
		"site day " + id + ": sources.br Chrome: MongoDB 122, files 120 (2 more in MongoDB)",
		"site day " + id + ": sources.br Firefox: MongoDB 119, files 120 (1 lost)",
		"not exact: 2 counters differ (1 below the files: hits lost; 1 above)",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("altered, -all-hosts: no %q", w)
		}
	}
	if code != 1 {
		t.Errorf("altered, -all-hosts: exit %d, want 1", code)
	}
	// Without -all-hosts Chrome's two may be another host's; at the
	// range's edges (the files' first to last hit) only the loss counts.
	for _, args := range [][]string{day, nil} {
		out, code := verify(args...)
		other := strings.Contains(out, "more in MongoDB: other hosts?") && strings.Contains(out, "sources.br Chrome: MongoDB 122, files 120 (+2)")
		if code != 1 || !strings.Contains(out, "differences (1):") || !strings.Contains(out, "sources.br Firefox: MongoDB 119, files 120 (1 lost)") ||
			other != (args != nil) {
			t.Errorf("altered, %v: exit %d, want 1, Firefox lost, Chrome said as other hosts' inside the range", args, code)
		}
	}

	// Firefox and Chrome as they were; five of Safari's hits as (other),
	// as a host's bound of values would count them: exact.
	alter(bson.D{{Key: "sources.br.Firefox", Value: int64(1)}, {Key: "sources.br.Chrome", Value: int64(-2)},
		{Key: "sources.br.Safari", Value: int64(-5)}, {Key: "sources.br.(other)", Value: int64(5)}})
	if out, code := verify(append([]string{"-all-hosts"}, day...)...); code != 0 {
		t.Errorf("Safari folded into (other): exit %d\n%s", code, out)
	}
	// Five more folded than Safari lost: a difference under (other).
	alter(bson.D{{Key: "sources.br.(other)", Value: int64(-3)}})
	if out, code := verify(append([]string{"-all-hosts"}, day...)...); code != 1 ||
		!strings.Contains(out, "site day "+id+": sources.br (other): MongoDB 2, files 5 (3 lost)") {
		t.Errorf("Safari folded, 3 of them lost: exit %d", code)
	}

	// A day counted before [dimensions] was enabled holds none: not judged.
	if res, err := sites.UpdateOne(context.Background(), bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$unset", Value: bson.D{{Key: "sources", Value: ""}}}}); err != nil || res.MatchedCount != 1 {
		t.Fatalf("unset sources: %v, %+v", err, res)
	}
	out, code = verify(append([]string{"-all-hosts"}, day...)...)
	if hits, _ := exactLine(t, out); code != 0 || hits != 600 || !strings.Contains(out, "by dimension: 0 site days, 0 values compared; 1 site days not counted by dimension in MongoDB") {
		t.Errorf("no sources: exit %d, %d hits", code, hits)
	}
}
