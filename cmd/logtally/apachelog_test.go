package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
)

// apachePage is the page of the real Apache log's test, as the source's
// rewrite rules (apacheRewrite) make it: "/presentations/", "/blog/" or
// "/images/" for paths under those (their first segment), "/other" for
// every other path. Four pages keep the embedded server's collections at
// about 350 buckets instead of 9,000 (1,368 pages over 84 minutes).
func apachePage(path string) string {
	seg, _, _ := strings.Cut(path[1:], "/")
	switch seg {
	case "presentations", "blog", "images":
		return "/" + seg + "/"
	}
	return "/other"
}

// apacheRewrite: the path to its first segment, the three kept ones get a
// trailing slash, every page left without one is "/other".
const apacheRewrite = `[source.page]
rewrite = [
	{ match = '^/([^/]*).*$', replace = '/$1' },
	{ match = '^/(presentations|blog|images)$', replace = '/$1/' },
	{ match = '^/[^/]*$', replace = '/other' },
]`

// TestRealApacheLog runs the 10,000 real Apache combined lines of
// testdata/apache_combined_real.log (four days of a real site: sizes, "-"
// sizes, 2xx to 5xx, HEAD and POST, many bots, a user agent cut short)
// through the daemon and compares every counter and every measure of every
// minute, daily and monthly bucket and of every site document with
// bucketcheck's count of the file. The pages are folded into four (the
// daemon by [source.page] rewrite rules, bucketcheck by apachePage).
func TestRealApacheLog(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	const site = "semicomplete.com"
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "apache_combined_real.log"))
	if err != nil {
		t.Fatal(err)
	}
	srv := mongotest.Start(t)
	db := srv.Database(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "logs", "access.log")
	os.MkdirAll(filepath.Dir(logPath), 0o755)
	if err := os.WriteFile(logPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	conf := fastConfig(t, dir, srv.URI(), db.Name(), site, logPath)
	withSourceKeys(t, conf, apacheRewrite)
	// A second site for the dashboard, whose page names are markup, and
	// the daemon's listener with the dashboard on it.
	bPath := filepath.Join(dir, "logs", "b.log")
	if err := os.WriteFile(bPath, []byte(markupLog()), 0o644); err != nil {
		t.Fatal(err)
	}
	daemonAddr := freeAddr(t)
	withSourceKeys(t, conf, fmt.Sprintf("[[source]]\nsite = %q\npaths = [%q]\nformat = \"combined\"\n\n[dashboard]\ndaemon = true\n", markupSite, bPath))
	setHTTPListen(t, conf, daemonAddr)

	want := bucketcheck.CountFilesWith(t, logPath, site, bucketcheck.Options{Page: apachePage})
	if want.Hits != 10000 {
		t.Fatalf("bucketcheck counts %d hits in the 10,000 lines", want.Hits)
	}
	bWant := func() bucketcheck.Counts {
		return bucketcheck.CountFilesWith(t, bPath, markupSite, bucketcheck.Options{})
	}
	want.Merge(bWant())

	d, out := daemon(t, conf)
	begun := time.Now()
	waitTotal(t, db, want.Hits, out)
	waited := time.Since(begun)
	t.Run("dashboard", func(t *testing.T) {
		testDashboard(t, conf, daemonAddr, db, want, site, []string{"/presentations/", "/blog/", "/images/", "/other"}, markupSite, markupPages, bPath)
	})
	// The dashboard's live check appended lines to site b's log: the
	// files are counted again.
	want = bucketcheck.CountFilesWith(t, logPath, site, bucketcheck.Options{Page: apachePage})
	want.Merge(bWant())
	waitTotal(t, db, want.Hits, out)
	d.Process.Signal(syscall.SIGTERM)
	if err := d.Wait(); err != nil {
		t.Errorf("logtally after SIGTERM: %v (want exit 0)\n%s", err, out)
	}
	got := bucketcheck.Read(t, db)
	res := bucketcheck.CompareAll(t, want, got)
	t.Logf("real Apache log: %d hits, %d minute/%d daily/%d monthly buckets, %d site documents, in MongoDB after %v; %v",
		want.Hits, len(want.Minute), len(want.Daily), len(want.Monthly), len(want.Sites), waited.Round(time.Millisecond), res)
	if !res.Exact() || got.MonthTotal != want.Hits || want.Hits < 10000+90 {
		t.Errorf("not exact: %d hits in MongoDB", got.MonthTotal)
	}
	t.Run("dashboard before the measures", func(t *testing.T) {
		testDashboardBeforeMeasures(t, conf, db, want, markupSite, markupPages)
	})
}

// markupSite is the dashboard test's second site; markupPages its pages,
// two of them markup that must show as text, and two that must show
// escaped: spoofPage (a right-to-left override: it would show as
// /exe.txt) and a zero-width space.
const markupSite = "b.test"

const spoofPage = "/\u202etxt.exe"

var markupPages = []string{"/", "/about", "/<img/src=x/onerror=window.__xss=1>", "/<script>window.__xss=2</script>", spoofPage, "/zero\u200bwidth"}

// markupLog returns 90 combined lines of markupSite's pages on 18 May 2015
// from 10:00 to 12:00 UTC: statuses 200 to 503, people and bots.
func markupLog() string {
	var b strings.Builder
	agents := []string{"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "Googlebot/2.1 (+http://www.google.com/bot.html)", "curl/8.5.0", "GPTBot/1.2"}
	statuses := []int{200, 200, 304, 404, 503}
	at := time.Date(2015, 5, 18, 10, 0, 0, 0, time.UTC)
	for i := range 90 {
		at = at.Add(time.Duration(37+i%50) * time.Second)
		fmt.Fprintf(&b, "192.0.2.%d - - [%s] \"GET %s HTTP/1.1\" %d %d \"-\" \"%s\"\n", i%40, at.Format("02/Jan/2006:15:04:05 -0700"),
			markupPages[i%len(markupPages)], statuses[i%len(statuses)], 100+i*7, agents[i%len(agents)])
	}
	return b.String()
}

// setHTTPListen sets [http] listen in the config at conf to addr.
func setHTTPListen(t *testing.T, conf, addr string) {
	t.Helper()
	data, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), "[http]\nlisten = \"\"\n", fmt.Sprintf("[http]\nlisten = %q\n", addr), 1)
	if s == string(data) {
		t.Fatal("no [http] listen in the config")
	}
	if err := os.WriteFile(conf, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitTotal waits until the monthly totals reach hits, as long as they
// move (within 2 minutes: the embedded server is slow, a few thousand
// updates, and slower under load), at most 5
// minutes.
func waitTotal(t *testing.T, db *mongo.Database, hits int64, out fmt.Stringer) {
	t.Helper()
	begun := time.Now()
	stalled, limit := begun.Add(2*time.Minute), begun.Add(5*time.Minute)
	last := int64(-1)
	for {
		n := monthTotal(t, db)
		if n >= hits {
			return
		}
		if time.Now().After(stalled) || time.Now().After(limit) {
			t.Fatalf("MongoDB holds %d of %d hits after %v:\n%s", n, hits, time.Since(begun).Round(time.Second), out)
		}
		if n != last {
			last, stalled = n, time.Now().Add(2*time.Minute)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// monthTotal sums the monthly buckets' totals (the cheap way to watch
// progress: a few dozen documents).
func monthTotal(t *testing.T, db *mongo.Database) int64 {
	t.Helper()
	return bucketcheck.Total(t, db, bucket.Monthly)
}
