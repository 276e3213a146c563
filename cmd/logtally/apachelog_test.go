package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
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

	want := bucketcheck.CountFilesWith(t, logPath, site, bucketcheck.Options{Page: apachePage})
	if want.Hits != 10000 {
		t.Fatalf("bucketcheck counts %d hits in the 10,000 lines", want.Hits)
	}

	d, out := daemon(t, conf)
	// Wait as long as the monthly totals move (the embedded server is
	// slow: a few thousand updates), at most 5 minutes.
	begun := time.Now()
	stalled, limit := begun.Add(60*time.Second), begun.Add(5*time.Minute)
	last := int64(-1)
	for {
		n := monthTotal(t, db)
		if n >= want.Hits {
			break
		}
		if time.Now().After(stalled) || time.Now().After(limit) {
			t.Fatalf("MongoDB holds %d of %d hits after %v:\n%s", n, want.Hits, time.Since(begun).Round(time.Second), out)
		}
		if n != last {
			last, stalled = n, time.Now().Add(60*time.Second)
		}
		time.Sleep(500 * time.Millisecond)
	}
	waited := time.Since(begun)
	d.Process.Signal(syscall.SIGTERM)
	if err := d.Wait(); err != nil {
		t.Errorf("logtally after SIGTERM: %v (want exit 0)\n%s", err, out)
	}
	got := bucketcheck.Read(t, db)
	res := bucketcheck.CompareAll(t, want, got)
	t.Logf("real Apache log: %d hits, %d minute/%d daily/%d monthly buckets, %d site documents, in MongoDB after %v; %v",
		want.Hits, len(want.Minute), len(want.Daily), len(want.Monthly), len(want.Sites), waited.Round(time.Millisecond), res)
	if !res.Exact() || got.MonthTotal != want.Hits {
		t.Errorf("not exact: %d hits in MongoDB", got.MonthTotal)
	}
}

// monthTotal sums the monthly buckets' totals (the cheap way to watch
// progress: a few dozen documents).
func monthTotal(t *testing.T, db *mongo.Database) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	total := bucket.Monthly.TotalField()
	cur, err := db.Collection(bucket.DefaultMonthlyCollection).Find(ctx, bson.D{})
	if err != nil {
		t.Fatalf("read monthly: %v", err)
	}
	var docs []bson.M
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatalf("read monthly: %v", err)
	}
	var n int64
	for _, d := range docs {
		switch v := d[total].(type) {
		case int32:
			n += int64(v)
		case int64:
			n += v
		}
	}
	return n
}
