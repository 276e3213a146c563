package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
)

// /healthz follows the pipeline's progress (issue 29): with MongoDB
// stopped and hits pending it answers 503, naming MongoDB and since when,
// once http.unhealthy_after has passed, while the daemon goes on
// buffering, and the watchdog goes on pinging; with MongoDB back it answers 200 again, and every bucket
// equals the file.
func TestHealthzFailsWhileMongoDBIsDownWithHitsPending(t *testing.T) {
	dir := t.TempDir()
	srv := mongotest.Start(t)
	db := srv.Database(t)
	logPath := filepath.Join(dir, "access.log")
	appendCombined(t, logPath, 0, 30)
	addr := testenv.FreeAddr(t)
	conf := fastConfig(t, dir, srv.URI(), db.Name(), "s", logPath, noPrealloc, listen(addr), func(c *config.Config) {
		c.ShutdownTimeout = config.Duration(20 * time.Second)
		c.Mongo.Timeout = config.Duration(500 * time.Millisecond)
		c.HTTP.UnhealthyAfter = config.Duration(time.Second)
	})
	earlierBuffer(t, filepath.Join(dir, "state"))
	sock, stop, out := runNotified(t, conf) // under a fake systemd, with a 2 s watchdog

	get := func(path string) (int, string) { return testenv.Get(addr, path) }
	// waitHealth polls /healthz (an event wait, bounded) until it
	// answers code with a body holding every one of says, and returns
	// the body.
	waitHealth := func(what string, code int, says ...string) string {
		t.Helper()
		var c int
		var body string
		if !testenv.Until(30*time.Second, func() bool {
			c, body = get("/healthz")
			return c == code && !slices.ContainsFunc(says, func(s string) bool { return !strings.Contains(body, s) })
		}) {
			t.Fatalf("%s: /healthz = %d %q after 30s, want %d\nlog:\n%s", what, c, body, code, out)
		}
		return body
	}
	waitTotal := func(what string, n int64) {
		t.Helper()
		if !testenv.Until(30*time.Second, func() bool { return monthTotal(t, db) == n }) {
			t.Fatalf("%s: MongoDB's monthly total %d after 30s, want %d\nlog:\n%s", what, monthTotal(t, db), n, out)
		}
	}

	waitTotal("the first 30 hits", 30)
	// Acknowledged too: a batch still writing its site totals when
	// MongoDB stops stays in flight, and its hits pending with the rest.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, st := get("/status"); strings.Contains(st, `"in_flight": null`) {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the first batch not acknowledged after 30s: /status %s", st)
		}
	}
	if body := waitHealth("MongoDB up, nothing pending", 200); body != "ok\n" {
		t.Errorf("/healthz body %q, want ok", body)
	}

	// MongoDB stops; 300 more lines come.
	srv.Stop()
	appendCombined(t, logPath, 30, 300)
	body := waitHealth("MongoDB down, 300 hits pending", 503,
		"MongoDB unreachable since 20", "300 hits pending", "nothing written to MongoDB since 20", "http.unhealthy_after 1s")
	host := strings.TrimSuffix(strings.TrimPrefix(srv.URI(), "mongodb://"), "/")
	if i := strings.IndexAny(host, "/?"); i >= 0 {
		host = host[:i]
	}
	for _, never := range []string{host, "mongodb://", "/p1", "GET"} {
		if strings.Contains(body, never) {
			t.Errorf("/healthz 503 body %q shows %q", body, never)
		}
	}
	if _, status := get("/status"); !strings.Contains(status, `"health": "MongoDB unreachable since`) || !strings.Contains(status, `"pending_hits": 300`) {
		t.Errorf("/status does not show the health and the 300 pending hits:\n%s", status)
	}
	// The daemon goes on: the watchdog still pings (systemd would restart
	// a daemon that stops them), and it still reads.
	pings := sock.count("WATCHDOG=1")
	sock.waitFor(t, "two more watchdog pings while /healthz is 503", out, func([]string) bool { return sock.count("WATCHDOG=1") >= pings+2 })
	if c, _ := get("/healthz"); c != 503 {
		t.Errorf("/healthz = %d after the pings with MongoDB still down, want 503", c)
	}
	appendCombined(t, logPath, 330, 20)

	// MongoDB back: the batches are acknowledged, /healthz is 200, every
	// bucket equals the file.
	srv.Resume()
	waitTotal("every hit once MongoDB is back", 350)
	if body := waitHealth("MongoDB back", 200); body != "ok\n" {
		t.Errorf("/healthz body %q, want ok", body)
	}
	if err := stop(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, out)
	}
	want, got := bucketcheck.CountFiles(t, logPath, "s"), bucketcheck.Read(t, db)
	if res := bucketcheck.CompareAll(t, want, got); !res.Exact() || got.MonthTotal != want.Hits {
		t.Errorf("after the outage: %d hits in MongoDB, %d in the file, %v", got.MonthTotal, want.Hits, res)
	}
}
