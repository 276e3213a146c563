package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/testenv/testconfig"
)

// Issue 29, "Counts", item 2, end to end: max_size = "1MiB", MongoDB down,
// 20,000 lines appended (each its own second: a key each, 1.5 MB of
// counts). Reading pauses
// with the buffer's live data (what max_size bounds: Buffer.Size, logged
// with the pause and shown as buffer_bytes; the file itself is bbolt's,
// mapped 8 MiB from the start and never shrunk, see buffer/doc.go) at
// most one read's counts past max_size; once MongoDB is back every line
// is counted, every bucket compared.
func TestMaxSizeHeldWhileMongoDBDown(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	testconfig.Edit(t, e.conf, func(c *config.Config) { c.Buffer.MaxSize = 1 << 20 })

	e.appendTo(e.live, lines(0, 100))
	d, out := daemon(t, e.conf)
	e.waitHits(100, out)
	e.srv.Stop()
	const n = 20000
	e.appendTo(e.live, linesAt(100, n, time.Second))
	waitLog(t, out, "buffer full: reading paused", 60*time.Second)
	m := regexp.MustCompile(`buffer full: reading paused[^\n]* size=(\d+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no size logged with the pause:\n%s", out)
	}
	size, _ := strconv.ParseInt(m[1], 10, 64)
	// One read (beside a 1 MiB buffer the tailers read 64 KiB at a time)
	// of these lines, each its own key, as the buffer counts them.
	line := linesAt(100, 1, time.Second)
	key := 1 + len(replaySite) + 1 + len("/page0") + 8
	perRead := (64<<10)/len(line) + 1
	bound := buffer.EstimateCounts(perRead, perRead*key)
	t.Logf("paused at %d bytes; max_size %d, one read's counts %d", size, 1<<20, bound)
	if size > 1<<20+bound {
		t.Errorf("buffer at %d bytes when reading paused: over max_size %d by more than one read's counts (%d)", size, 1<<20, bound)
	}
	if !strings.Contains(out.String(), "level=WARN msg=\"buffer full") { // the line waitLog saw
		t.Errorf("no WARN for the pause:\n%s", out)
	}

	e.srv.Resume()
	resumed := time.Now()
	e.waitHits(100+n, out)
	t.Logf("all counted %v after MongoDB came back", time.Since(resumed).Round(time.Second))
	e.settle(e.conf, out) // a double count would show now
	stopDaemon(t, d, d.Process, out)
	e.check("max_size held while MongoDB was down", filepath.Join(e.truth, "*"))
}
