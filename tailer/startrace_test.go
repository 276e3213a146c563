package tailer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/logtally/logtally/stream"
)

// A rotation that renames the files while start matches the checkpoints
// to them (logrotate shifting access.log.N to N+1 just as the daemon
// starts; the crash test saw it drop 30 checkpoints and lose 2,904 hits):
// start looks at the files again, so the renamed file's unread tail and
// the new file are read, and no checkpoint is dropped.
func TestRotationDuringStart(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	cp, id, _ := firstRun(t, p)
	appendLines(t, p, "a", 100, 150) // unread when the daemon starts

	var newID stream.FileID
	calls := 0
	afterSurvey = func() {
		calls++
		if calls > 1 {
			return
		}
		// Between the look at the files and opening them: p is renamed
		// to p.1 and a new p is created.
		if err := os.Rename(p, p+".1"); err != nil {
			t.Error(err)
		}
		appendLines(t, p, "b", 0, 30)
		newID = idOf(t, p)
	}
	t.Cleanup(func() { afterSurvey = nil })

	cfg := fakeCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	h := start(t, cfg)
	h.waitFor("the renamed file's tail and the new file", countLines(80))
	cs := h.stop()
	checkChunks(t, cs)
	if i := doneIndex(cs, id); i >= 0 {
		t.Errorf("checkpoint of the renamed file dropped (Done at chunk %d)", i)
	}
	sameLines(t, "renamed file", linesOf(cs, id), want("a", 100, 150))
	sameLines(t, "new file", linesOf(cs, newID), want("b", 0, 30))
	if calls < 2 {
		t.Errorf("start looked at the files %d times, want a second look after they moved", calls)
	}
}
