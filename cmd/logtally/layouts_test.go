package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
)

// allMeasures is every measure logtally query reports.
const allMeasures = "views,bots,people,2xx,3xx,4xx,5xx,error_rate,bytes,rt_avg,rt_max,rt_count,bot_search,bot_ai,bot_tool,bot_other,bot_suspect,unmeasured"

// Every reader answers the same on the real log stored as the version
// before tails stored it (every page its own buckets) and as this one
// does (each period's plan deciding; on this log every page is under the
// break-even, so in tails): logtally query at every step with every
// measure, for every page and the site, the bot classes of the site
// totals, and verify exact on both (issue 32, target 3). The first 1,500
// lines of the real Apache log (499 pages over a day) keep the old
// layout's zero-filled documents small enough for the embedded server.
func TestReadersSameOnBothLayouts(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	data, err := os.ReadFile("../../testdata/apache_combined_real.log")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))[:1500]
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	if err := os.WriteFile(logPath, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	const site = "layouts.test"
	srv := mongotest.Start(t)
	want := bucketcheck.CountFiles(t, logPath, site)
	confs := map[string]string{}
	tailed := map[string]int{} // page buckets with tail entries, per layout
	for _, layout := range []string{"pages", "tails"} {
		db := srv.Database(t)
		conf := writeConfig(t, filepath.Join(dir, layout+".toml"), srv.URI(), db.Name(), site, logPath,
			stateAt(filepath.Join(dir, "state-"+layout)))
		cmd := command("replay", "-config", conf, logPath)
		cmd.Env = append(cmd.Env, buffer.SealLayoutEnv+"="+layout)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("replay, %s: %v\n%s", layout, err, out)
		}
		got := bucketcheck.Read(t, db)
		if res := bucketcheck.CompareAll(t, want, got); !res.Exact() {
			t.Fatalf("%s: buckets against the log: %v", layout, res)
		}
		for _, ids := range got.Tailed {
			tailed[layout] += len(ids)
		}
		out, _, code := verifyRun(t, "-config", conf, "-all-hosts", logPath)
		if hits, _ := exactLine(t, out); code != 0 || hits != int(want.Hits) {
			t.Errorf("%s: verify exit %d, %d hits exact; want 0, %d", layout, code, hits, want.Hits)
		}
		confs[layout] = conf
	}
	// The layouts are what they say: tails in one, none in the other.
	if tailed["pages"] != 0 || tailed["tails"] < 1000 {
		t.Fatalf("page buckets with tail entries: %d with every page its own buckets, %d with tails", tailed["pages"], tailed["tails"])
	}
	for _, args := range [][]string{
		{"-step", "minute", "-from", "2015-05-17T10:00:00Z", "-to", "2015-05-17T12:00:00Z", "-measure", allMeasures},
		{"-step", "hour", "-from", "2015-05-17", "-to", "2015-05-19", "-measure", allMeasures},
		{"-step", "day", "-from", "2015-05-17", "-to", "2015-05-19", "-measure", allMeasures},
		{"-step", "month", "-from", "2015-05-01", "-to", "2015-06-01", "-measure", allMeasures},
		{"-step", "hour", "-from", "2015-05-17", "-to", "2015-05-19", "-page", "/"},
		{"-step", "day", "-from", "2015-05-17", "-to", "2015-05-19", "-top", "5"},
		{"-bots", "-from", "2015-05-17", "-to", "2015-05-19"},
	} {
		a := append([]string{"-site", site, "-format", "json"}, args...)
		old, now := queryOut(t, confs["pages"], a...), queryOut(t, confs["tails"], a...)
		if old != now || len(old) < 100 {
			t.Errorf("query %v: %d bytes with every page its own buckets, %d with tails, not the same:\n%.600s\n---\n%.600s", args, len(old), len(now), old, now)
		}
	}
}

// queryOut runs logtally query -config conf args and returns its stdout,
// failing the test on an error.
func queryOut(t *testing.T, conf string, args ...string) string {
	t.Helper()
	out, stderr, code := runCmd(t, append([]string{"query", "-config", conf}, args...)...)
	if code != 0 {
		t.Fatalf("query %v: exit %d\n%s", args, code, stderr)
	}
	return out
}
