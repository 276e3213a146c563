package termview

import (
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/pipeline"
)

// State lists a configured source without a checkpoint, marks one in the
// buffer that is no longer configured, and says when a file is gone.
func TestStateSources(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	st := pipeline.Status{Instance: "web-1", BufferPath: "/nonexistent/buffer.db", LastCommit: now.Add(-90 * time.Second),
		PendingKeys: 2, PendingHits: 5,
		Sources: []pipeline.SourceStatus{{Name: "old", LagBytes: 0, Files: []pipeline.FileStatus{
			{Path: "/var/log/old.log", File: "1:2", Offset: 10, Size: -1, Lag: -1, Checkpoint: true},
		}}}}
	var b strings.Builder
	State(&b, st, []string{"new"}, now)
	out := b.String()
	for _, want := range []string{
		"instance     web-1\n",
		"last commit  2026-11-23T09:58:30Z (1m30s ago)\n",
		"pending      2 keys, 5 hits",
		`source "old": lag 0 bytes (not in the config: its checkpoints are kept, and resume if it is added back)`,
		"  /var/log/old.log  dev:ino 1:2  offset 10  not found  (deleted, or rotated away out of reach)\n",
		"source \"new\": lag 0 bytes\n  no checkpoint yet\n",
		"in flight    none\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
