package termview

import (
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/replay"
)

// A replay whose daemon reloaded after every file was counted says every
// file is counted, not that it stopped; one stopped before says how to
// resume.
func TestReplaySummaryAfterReload(t *testing.T) {
	files := []replay.File{{Path: "/a/access.log.1", Compression: "plain", End: 100, Lines: 2, Status: replay.StatusCounted}}
	var b strings.Builder
	ReplaySummary(&b, &replay.Summary{Files: files, Lines: 2, Hits: 2, Unacknowledged: true}, "in the running daemon", time.Second)
	if out := b.String(); !strings.Contains(out, "every file counted;") || strings.Contains(out, "stopped before the end") {
		t.Errorf("every file counted, the daemon reloaded before the acknowledgement:\n%s", out)
	}
	b.Reset()
	files[0].Status = replay.StatusStopped
	ReplaySummary(&b, &replay.Summary{Files: files, Stopped: true}, "in the running daemon", time.Second)
	if out := b.String(); !strings.Contains(out, "stopped before the end") || strings.Contains(out, "every file counted") {
		t.Errorf("stopped before the end:\n%s", out)
	}
}
