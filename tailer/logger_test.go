package tailer

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestLoggerPrune: keys logged errLogEvery or longer ago are forgotten at
// each rescan, and a pruned key is logged again as it would have been.
func TestLoggerPrune(t *testing.T) {
	clk := fakeClock()
	var out bytes.Buffer
	l := newLogger(slog.New(slog.NewTextHandler(&out, nil)), clk)
	for _, day := range []string{"2024-01-01", "2024-01-02"} {
		l.logErr("stat /logs/"+day+".log", slog.LevelWarn, "cannot stat file", "day", day)
	}
	clk.Advance(errLogEvery / 2)
	l.logErr("stat /logs/2024-01-03.log", slog.LevelWarn, "cannot stat file", "day", "2024-01-03")
	l.logErr("stat /logs/2024-01-01.log", slog.LevelWarn, "cannot stat file", "day", "2024-01-01") // too soon: not logged
	clk.Advance(errLogEvery / 2)
	l.prune()
	if got := len(l.logged); got != 1 {
		t.Fatalf("%d keys kept after prune, want 1 (the one logged %v ago): %v", got, errLogEvery/2, l.logged)
	}
	if _, ok := l.logged["stat /logs/2024-01-03.log"]; !ok {
		t.Fatalf("the recent key was pruned: %v", l.logged)
	}
	l.logErr("stat /logs/2024-01-01.log", slog.LevelWarn, "cannot stat file", "day", "2024-01-01")
	if n := strings.Count(out.String(), "day=2024-01-01"); n != 2 {
		t.Errorf("2024-01-01 logged %d times, want 2 (once at first, once a minute later):\n%s", n, out.String())
	}
	clk.Advance(2 * time.Minute)
	l.prune()
	if len(l.logged) != 0 {
		t.Errorf("keys kept after every entry expired: %v", l.logged)
	}
}

// TestRescanPrunesErrLog: a rescan prunes the logger of a running Tailer
// (in a synctest bubble: a minute passes at once).
func TestRescanPrunesErrLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		b := startBubble(t, Config{Source: "s", Paths: []string{dir + "/*.log"}})
		for i := range 100 {
			b.tl.log.logErr(fmt.Sprintf("stat %s/%d.log", dir, i), slog.LevelWarn, "cannot stat file")
		}
		b.after(errLogEvery - DefaultRescanInterval)
		if n := b.loggedKeys(); n != 100 {
			t.Fatalf("%d keys kept before they are %v old, want 100", n, errLogEvery)
		}
		b.after(DefaultRescanInterval)
		if n := b.loggedKeys(); n != 0 {
			t.Errorf("%d keys kept after a rescan %v later, want 0", n, errLogEvery)
		}
		b.stop()
	})
}
