package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestReplayParsedAheadCountsOnce replays a large plain archive (read
// faster than one core parses it) and a gzip one on two cores: the
// readers parse lines ahead of the aggregator (the summary says how many),
// and every bucket still holds the files' count, once, replayed again.
func TestReplayParsedAheadCountsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	t.Setenv("GOMAXPROCS", "2") // the replay's process: a reader beside the aggregator
	e := newReplayEnv(t)
	// A thousand lines a second: few buckets for the wire server.
	e.archive("access.log.1", linesAt(0, 300_000, time.Millisecond))
	e.archive("access.log.2.gz", linesAt(300_000, 50_000, time.Millisecond))
	out := e.replay(e.conf, filepath.Join(e.arch, "access.log.*"))
	wantStatus(t, out, "counted", 2)
	m := regexp.MustCompile(`(?m)^parsed ahead: (\d+) lines`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no line was parsed ahead:\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	t.Logf("%d lines of 350,000 parsed ahead", n)
	if n <= 0 || n > 350_000 {
		t.Errorf("parsed ahead: %d lines of 350,000", n)
	}
	e.check("replayed, parsed ahead", filepath.Join(e.truth, "*"))
	out = e.replay(e.conf, filepath.Join(e.arch, "access.log.*"))
	wantStatus(t, out, "already counted", 2)
	e.check("replayed again", filepath.Join(e.truth, "*"))
}
