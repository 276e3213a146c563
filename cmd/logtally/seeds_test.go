package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
)

// seedQueries is the original design's read queries (its seedqueries.js,
// copied), run with the official MongoDB Node.js driver.
const seedQueries = "../../testdata/seeds/seedqueries.js"

// seedModules is where .ci/run installs the driver (npm install --prefix
// ~/.cache/logtally-test mongodb@6); NODE_PATH is looked in too.
func seedModules() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "logtally-test", "node_modules")
}

// seedResult is what seedqueries.js prints for one page and day.
type seedResult struct {
	DailyByMetadata        bool   `json:"dailyByMetadata"`
	MinuteSum              *int64 `json:"minuteSum"`
	HourlySum              int64  `json:"hourlySum"`
	MonthlyByMetadata      bool   `json:"monthlyByMetadata"`
	MonthlyDay             *int64 `json:"monthlyDay"`
	MinuteDocs             int    `json:"minuteDocs"`
	TotalViews             int64  `json:"totalViews"`
	SecondsSumMatchesTotal bool   `json:"secondsSumMatchesTotal"`
}

// A hot page keeps the seeds' preallocated shapes (issue 32, target 2):
// the original design's queries, unchanged, through the official Node.js
// driver, find its daily document by its whole metadata, its hourly and
// per-minute counters, its monthly document's day and its minute buckets
// with their seconds, each summing to the page's hits in the log. A cold
// page has no bucket of its own (its counts are in its site's tails): the
// seeds' queries do not see it, and logtally query does, exactly.
func TestSeedQueriesReadHotPages(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("the seed queries need Node.js (apt-get install nodejs) and the mongodb npm package (npm install --prefix ~/.cache/logtally-test mongodb@6); .ci/run installs both")
	}
	nodePath := strings.Join([]string{seedModules(), os.Getenv("NODE_PATH")}, string(os.PathListSeparator))
	probe := exec.Command(node, "-e", "require.resolve('mongodb')")
	probe.Env = append(os.Environ(), "NODE_PATH="+nodePath)
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("the seed queries need the mongodb npm package (npm install --prefix ~/.cache/logtally-test mongodb@6; .ci/run does): %v %s", err, out)
	}

	const site = "seeds.test"
	dir := t.TempDir()
	srv := mongotest.Start(t)
	db := srv.Database(t)
	// /hot: 600 hits over 10:00–10:59 of one day, 10 a minute (hot at
	// every level with preallocate_min_hits = 100); /cold1../cold20: 3
	// hits each, in the same hour.
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var log bytes.Buffer
	line := func(at time.Time, page string) {
		fmt.Fprintf(&log, "10.0.0.1 - - [%s] \"GET %s HTTP/1.1\" 200 10 \"-\" \"t\"\n", at.Format("02/Jan/2006:15:04:05 -0700"), page)
	}
	for i := range 600 {
		line(t0.Add(time.Duration(i)*6*time.Second), "/hot")
		if i%10 == 3 && (i/10)%3 == 0 {
			for c := range 3 {
				line(t0.Add(time.Duration(i)*6*time.Second+time.Duration(c)*time.Second), fmt.Sprintf("/cold%d", i/30+1))
			}
		}
	}
	logPath := filepath.Join(dir, "access.log")
	if err := os.WriteFile(logPath, log.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := fastConfig(t, dir, srv.URI(), db.Name(), site, logPath, func(c *config.Config) { c.Buckets.PreallocateMinHits = 100 })
	if out, stderr, code := runCmd(t, "replay", "-config", conf, logPath); code != 0 {
		t.Fatalf("replay: exit %d\n%s\n%s", code, out, stderr)
	}
	want := bucketcheck.CountFiles(t, logPath, site)
	if res := bucketcheck.CompareAll(t, want, bucketcheck.Read(t, db)); !res.Exact() {
		t.Fatalf("buckets against the log: %v", res)
	}

	seeds := func(page string) seedResult {
		t.Helper()
		cmd := exec.Command(node, seedQueries, srv.URI(), db.Name(), site, page, t0.Format(time.DateOnly))
		cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node seedqueries.js %s: %v\n%s", page, err, stderr.String())
		}
		var r seedResult
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("seedqueries.js %s printed %q: %v", page, out, err)
		}
		return r
	}
	hot := seeds("/hot")
	if !hot.DailyByMetadata || hot.MinuteSum == nil || *hot.MinuteSum != 600 || hot.HourlySum != 600 ||
		!hot.MonthlyByMetadata || hot.MonthlyDay == nil || *hot.MonthlyDay != 600 ||
		hot.MinuteDocs != 60 || hot.TotalViews != 600 || !hot.SecondsSumMatchesTotal {
		t.Errorf("the seeds' queries on the hot page: %+v (minuteSum %v, monthlyDay %v), want every sum 600 over 60 minute buckets",
			hot, deref(hot.MinuteSum), deref(hot.MonthlyDay))
	}
	cold := seeds("/cold1")
	if cold.DailyByMetadata || cold.MonthlyByMetadata || cold.MinuteDocs != 0 || cold.HourlySum != 0 {
		t.Errorf("the seeds' queries on a cold page found buckets of its own: %+v", cold)
	}
	out, stderr, code := runCmd(t, "query", "-config", conf, "-site", site, "-page", "/cold1",
		"-from", t0.Format(time.DateOnly), "-to", t0.Add(24*time.Hour).Format(time.DateOnly), "-step", "day", "-format", "csv")
	if code != 0 || !strings.Contains(out, ",/cold1,3\n") {
		t.Errorf("logtally query of the cold page: exit %d\n%s%s", code, out, stderr)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
