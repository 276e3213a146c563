package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/internal/testenv/testconfig"
)

// SIGHUP while lines flow: a site is added as a file in sites.d/, another
// removed and added back, and an invalid file is refused (the running
// config kept). Every
// bucket must equal the files: a removed source's checkpoints are kept, so
// adding it back resumes where it stopped.
func TestReloadWhileLinesFlow(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	dir := t.TempDir()
	logA, logB := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
	sitesD := filepath.Join(dir, "sites.d")
	os.MkdirAll(sitesD, 0o755)
	// The main file has no source: each site is a file in sites.d/, the
	// default include.
	addr := testenv.FreeAddr(t)
	conf := testconfig.Write(t, filepath.Join(dir, "logtally.toml"), testconfig.New(dir, testconfig.Mongo(srv.URI(), db.Name()), listen(addr)))
	addSite := func(s, extra string) {
		path := testconfig.WriteSources(t, filepath.Join(sitesD, s+".toml"), testconfig.Source(s+".test", filepath.Join(dir, s+".log")))
		if extra == "" {
			return
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0) // a bad key: the text is the point
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(extra); err != nil {
			t.Fatal(err)
		}
	}
	removeSite := func(s string) { os.Remove(filepath.Join(sitesD, s+".toml")) }
	addSite("a", "")
	appendCombined(t, logA, 0, 20)
	appendCombined(t, logB, 0, 20)

	ctx, stopWriting := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // 10 lines a second into each file
		defer wg.Done()
		for i := 20; ctx.Err() == nil; i++ {
			appendCombined(t, logA, i, 1)
			appendCombined(t, logB, i, 1)
			time.Sleep(100 * time.Millisecond) // the writers' pace: time is the point
		}
	}()

	d, out := daemon(t, conf)
	reloads := 0
	// flowed waits until lines read since the last reload are in MongoDB:
	// the reloads come while lines flow, each config reads some.
	counted := int64(0)
	flowed := func() {
		t.Helper()
		waitHits(t, db, counted+1, out)
		counted = monthTotal(t, db)
	}
	hup := func(wantReloaded bool) {
		t.Helper()
		flowed()
		before := strings.Count(out.String(), `msg=reloaded`)
		refused := strings.Count(out.String(), "reload refused")
		d.Process.Signal(syscall.SIGHUP)
		if !testenv.Until(20*time.Second, func() bool {
			if wantReloaded {
				return strings.Count(out.String(), `msg=reloaded`) > before
			}
			return strings.Count(out.String(), "reload refused") > refused
		}) {
			t.Fatalf("SIGHUP not handled (want reloaded %v):\n%s", wantReloaded, out)
		}
		if wantReloaded {
			reloads++
		}
	}
	addSite("b", "") // a site added as a file in sites.d/
	hup(true)
	removeSite("a") // a removed: its file grows unread
	hup(true)
	addSite("a", "flush_interval_typo = 1\n") // invalid: the running config is kept
	hup(false)
	addSite("a", "") // a back: resumes where it stopped
	hup(true)
	flowed()
	stopWriting()
	wg.Wait()

	want := bucketcheck.CountFiles(t, logA, "a.test")
	want.Merge(bucketcheck.CountFiles(t, logB, "b.test"))
	waitHits(t, db, want.Hits, out)
	settle(t, addr, out) // a double count would show now
	d.Process.Signal(syscall.SIGTERM)
	if err := d.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "flush_interval_typo") {
		t.Errorf("the refused reload does not name the bad key:\n%s", out)
	}
	got := bucketcheck.Read(t, db)
	res := bucketcheck.CompareAll(t, want, got)
	t.Logf("reload test: %d reloads, 1 refused, %d hits in 2 files; %v", reloads, want.Hits, res)
	if !res.Exact() {
		t.Errorf("not exact after reloads: %v", res)
	}
}
