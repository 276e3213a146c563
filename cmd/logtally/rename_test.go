package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/internal/testenv/testconfig"
)

// TestRenamedSourceResumes: a source renamed in the config ([[source]]
// name, same globs, same files) resumes where its old name stopped, at a
// restart and at a reload (SIGHUP): the live file and a rotated one still
// followed at the stop, both grown while down, are read on from their
// checkpoints, not again from their start. Every bucket equals the files.
func TestRenamedSourceResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	srv := mongotest.Start(t)
	db := srv.Database(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	conf := fastConfig(t, dir, srv.URI(), db.Name(), "rename.test", logPath)
	name := func(n string) {
		t.Helper()
		testconfig.Edit(t, conf, func(c *config.Config) { c.Sources[0].Name = n })
	}
	stop := func(d *exec.Cmd, out *syncbuf.Buffer) {
		t.Helper()
		d.Process.Signal(syscall.SIGTERM)
		if err := d.Wait(); err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, out)
		}
	}

	// "default" counts the file, which is rotated (renamed) and written
	// on: the rotated file is still followed at the stop (RotateGrace).
	name("default")
	appendCombined(t, logPath, 0, 30)
	d, out := daemon(t, conf)
	waitHits(t, db, 30, out)
	if err := os.Rename(logPath, logPath+".1"); err != nil {
		t.Fatal(err)
	}
	appendCombined(t, logPath+".1", 30, 10)
	appendCombined(t, logPath, 40, 15)
	waitHits(t, db, 55, out)
	stop(d, out)

	// Renamed while down; both files grow.
	name("shop")
	appendCombined(t, logPath+".1", 55, 5)
	appendCombined(t, logPath, 60, 20)
	d, out = daemon(t, conf)
	waitHits(t, db, 80, out)
	if !strings.Contains(out.String(), "takes over") || !strings.Contains(out.String(), "source=shop from=default files=2") {
		t.Errorf("the takeover of default's two files by shop is not logged:\n%s", out)
	}

	// Renamed by a reload.
	name("web")
	before := strings.Count(out.String(), "msg=reloaded")
	d.Process.Signal(syscall.SIGHUP)
	testenv.Wait(t, 20*time.Second, "the reload", func() bool { return strings.Count(out.String(), "msg=reloaded") > before })
	appendCombined(t, logPath, 80, 10)
	waitHits(t, db, 90, out)
	stop(d, out)
	if !strings.Contains(out.String(), "source=web from=shop files=") {
		t.Errorf("the takeover at the reload is not logged:\n%s", out)
	}

	want := bucketcheck.CountFiles(t, logPath+"*", "rename.test")
	if want.Hits != 90 {
		t.Fatalf("the files hold %d hits, want 90", want.Hits)
	}
	res := bucketcheck.CompareAll(t, want, bucketcheck.Read(t, db))
	t.Logf("renamed twice (a restart, a reload): %d hits; %v", want.Hits, res)
	if !res.Exact() {
		t.Errorf("not exact after the renames: %v", res)
	}
}
