package tailer

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/stream"
)

// Rotated files in another directory (logrotate's olddir, Config.Rotated)
// and symbolic links (Config.FollowSymlinks): issue 16, items 4 and 5.

// TestRotatedIntoOldDirWhileDown: 100 lines counted, 50 appended, the file
// renamed into old/ and a new one of 30 lines created, all while down.
// With Rotated naming old/, the 50 are read from the checkpoint; without
// it they are not, and that is an ERROR with the replay command, counted.
func TestRotatedIntoOldDirWhileDown(t *testing.T) {
	for _, withRotated := range []bool{true, false} {
		t.Run(map[bool]string{true: "rotated set", false: "rotated not set"}[withRotated], func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "access.log")
			cp, id, _ := firstRun(t, p)
			appendLines(t, p, "a", 100, 150)
			os.Mkdir(filepath.Join(dir, "old"), 0o755)
			if err := os.Rename(p, filepath.Join(dir, "old", "access.log.1")); err != nil {
				t.Fatal(err)
			}
			appendLines(t, p, "b", 0, 30)
			newID := idOf(t, p)

			var logs syncbuf.Buffer
			cfg := fakeCfg("web", p)
			cfg.Checkpoints = []stream.Checkpoint{cp}
			cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			if withRotated {
				cfg.Rotated = []string{filepath.Join(dir, "old", "access.log*")}
			}
			h := start(t, cfg)
			if withRotated {
				h.waitFor("the rest of the old file and the new file", countLines(80))
				h.settle(3)
				h.clk.Advance(cfg.RotateGrace)
				h.waitFor("Done for the old file", hasDone(id))
			} else {
				h.waitFor("the new file", countLines(30))
				h.tick(2)
			}
			cs := h.stop()
			checkChunks(t, cs)
			sameLines(t, "new file", linesOf(cs, newID), want("b", 0, 30))
			st := h.tl.Stats()
			if withRotated {
				sameLines(t, "old file", linesOf(cs, id), want("a", 100, 150))
				if st.LostFiles != 0 || strings.Contains(logs.String(), "level=ERROR") {
					t.Errorf("stats %+v, log:\n%s", st, logs.String())
				}
				return
			}
			if got := linesOf(cs, id); len(got) != 0 {
				t.Fatalf("%d lines of the old file read without rotated set", len(got))
			}
			l := logs.String()
			if st.LostFiles != 1 || !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "path="+p) ||
				!strings.Contains(l, "offset="+itoa(cp.Offset)) || !strings.Contains(l, "logtally replay") {
				t.Errorf("stats %+v, log:\n%s", st, l)
			}
		})
	}
}

// TestCopyTruncateIntoOldDir: copytruncate with the copy in old/: with
// Rotated naming old/, the lines written between the last read and the
// truncation are read from the copy, each once.
func TestCopyTruncateIntoOldDir(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	os.Mkdir(filepath.Join(dir, "old"), 0o755)
	cp := filepath.Join(dir, "old", "access.log.1")
	appendLines(t, p, "a", 0, 100)
	id := idOf(t, p)
	cfg := fakeCfg("web", p)
	cfg.Rotated = []string{filepath.Join(dir, "old", "access.log.*")}
	h := start(t, cfg)
	h.waitFor("first 100 lines", countLines(100))
	h.settle(2)
	appendLines(t, p, "a", 100, 150)
	copyFile(t, p, cp)
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	appendLines(t, p, "b", 0, 20)
	copyID := idOf(t, cp)
	h.waitFor("every line", countLines(170))
	h.settle(3)
	h.clk.Advance(h.cfg.RotateGrace)
	h.waitFor("Done for the copy", hasDone(copyID))
	cs := h.stop()
	checkChunks(t, cs)
	sameLines(t, "copy", linesOf(cs, copyID), want("a", 100, 150))
	sameLines(t, "original", linesOf(cs, id), append(want("a", 0, 100), want("b", 0, 20)...))
	if st := h.tl.Stats(); st.LostFiles != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestSymlinks: a link to a file outside the source's directories is not
// read (nor its contents logged), a link inside is, and FollowSymlinks
// reads the outside one.
func TestSymlinks(t *testing.T) {
	for _, follow := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "follow_symlinks"}[follow], func(t *testing.T) {
			dir := t.TempDir()
			logs := filepath.Join(dir, "logs")
			secret := filepath.Join(dir, "secret", "shadow")
			os.MkdirAll(filepath.Dir(secret), 0o755)
			os.Mkdir(logs, 0o755)
			appendLines(t, secret, "secret", 0, 5)
			appendLines(t, filepath.Join(logs, "real.data"), "in", 0, 7)
			if err := os.Symlink(secret, filepath.Join(logs, "out.log")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(logs, "real.data"), filepath.Join(logs, "in.log")); err != nil {
				t.Fatal(err)
			}
			appendLines(t, filepath.Join(logs, "plain.log"), "plain", 0, 3)
			var out syncbuf.Buffer
			cfg := realCfg("web", filepath.Join(logs, "*.log"))
			cfg.Logger = slog.New(slog.NewTextHandler(&out, nil))
			cfg.FollowSymlinks = follow
			h := start(t, cfg)
			wantN := 10
			if follow {
				wantN = 15
			}
			h.waitFor("the readable files", countLines(wantN))
			h.waitFor("a few rescans", func() func([]stream.Chunk) bool {
				n := 0
				return func([]stream.Chunk) bool { n++; return n > 20 }
			}())
			cs := h.stop()
			got := strings.Join(allLines(cs), "\n")
			if strings.Contains(got, "secret") != follow {
				t.Fatalf("follow=%v: the outside file read: %v\n%s", follow, strings.Contains(got, "secret"), dump(cs))
			}
			if len(allLines(cs)) != wantN {
				t.Fatalf("%d lines, want %d", len(allLines(cs)), wantN)
			}
			l := out.String()
			if strings.Contains(l, "secret 0") {
				t.Fatalf("contents in the log:\n%s", l)
			}
			st := h.tl.Stats()
			if follow {
				if st.RefusedLinks != 0 {
					t.Errorf("stats %+v", st)
				}
				return
			}
			if st.RefusedLinks != 1 || strings.Count(l, "not following a symbolic link") != 1 || !strings.Contains(l, "target_dir="+filepath.Dir(secret)) {
				t.Errorf("stats %+v, want 1 refused link logged once:\n%s", st, l)
			}
		})
	}
}

// TestLinkPolicyOpen: open never follows a link it did not check: a path
// that is a link to outside is refused, and the file opened for an allowed
// link is its target.
func TestLinkPolicyOpen(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "x")
	os.WriteFile(outside, []byte("x\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "real"), []byte("r\n"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "bad.log"))
	os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "good.log"))
	lp := newLinkPolicy([]string{filepath.Join(dir, "*.log")}, nil, false)
	if _, err := lp.open(filepath.Join(dir, "bad.log")); err == nil || !strings.Contains(err.Error(), "follow_symlinks") {
		t.Fatalf("bad link: %v", err)
	}
	f, err := lp.open(filepath.Join(dir, "good.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Name() != filepath.Join(dir, "real") {
		t.Errorf("opened %s", f.Name())
	}
	if _, ok := LocateSource(SourceFiles{Paths: []string{filepath.Join(dir, "*.log")}}, stream.Checkpoint{Path: filepath.Join(dir, "bad.log"), File: idOf(t, outside)}); ok {
		t.Error("Locate found the file through a refused link")
	}
}

// TestCopyTruncateWhileDownCopyNotFound: copytruncate while down with the
// copy where the tailer does not look: the truncated file is read from 0
// and the tail the copy holds is an ERROR, counted.
func TestCopyTruncateWhileDownCopyNotFound(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	cp, id, _ := firstRun(t, p)
	appendLines(t, p, "a", 100, 150)
	os.Mkdir(filepath.Join(dir, "old"), 0o755)
	copyFile(t, p, filepath.Join(dir, "old", "access.log.1"))
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	appendLines(t, p, "b", 0, 30)
	var logs syncbuf.Buffer
	cfg := fakeCfg("web", p)
	cfg.Checkpoints = []stream.Checkpoint{cp}
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	h := start(t, cfg)
	h.waitFor("the new lines", countLines(30))
	cs := h.stop()
	sameLines(t, "file", linesOf(cs, id), want("b", 0, 30))
	if st := h.tl.Stats(); st.LostFiles != 1 || !strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("stats %+v, log:\n%s", st, logs.String())
	}
}
