package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 29, "Counts", item 3, end to end: lines appended to a rotated file
// after it was finished (quiet for the rotate grace, 10 s) are counted
// while the daemon runs, every bucket compared.
func TestRotatedFileWrittenAfterGraceCounted(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	e.appendTo(e.live, lines(0, 200))
	d, out := daemon(t, e.conf)
	e.waitHits(200, out)
	rotated := e.live + ".1"
	if err := os.Rename(e.live, rotated); err != nil {
		t.Fatal(err)
	}
	e.appendTo(e.live, lines(200, 100))
	waitLog(t, out, "rotated file quiet, finished", 60*time.Second)
	e.appendTo(rotated, lines(300, 150)) // a writer that reopened its log late
	e.waitHits(450, out)
	e.settle(e.conf, out) // a double count would show now
	stopDaemon(t, d, d.Process, out)
	if !strings.Contains(out.String(), "lines written to a rotated file after it was finished") {
		t.Errorf("no WARN naming the late lines:\n%s", out)
	}
	e.check("a rotated file written after the grace", filepath.Join(e.truth, "*"))
}
