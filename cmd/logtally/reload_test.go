package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
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
	conf := filepath.Join(dir, "logtally.toml")
	sitesD := filepath.Join(dir, "sites.d")
	os.MkdirAll(sitesD, 0o755)
	// The main file has no source: each site is a file in sites.d/, the
	// default include.
	err := os.WriteFile(conf, []byte(fmt.Sprintf("state_dir = %q\nlease_ttl = \"3s\"\n[mongo]\nuri = %q\ndatabase = %q\ntimeout = \"5s\"\n"+
		"[buffer]\ncommit_interval = \"50ms\"\n[flush]\ninterval = \"100ms\"\nmax_ops = 16\nmax_backoff = \"200ms\"\n[buckets]\nminute_retention = \"0\"\n[http]\nlisten = \"\"\n",
		filepath.Join(dir, "state"), srv.URI(), db.Name())), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	addSite := func(s, extra string) {
		body := fmt.Sprintf("[[source]]\nsite = %q\npaths = [%q]\nformat = \"combined\"\n%s", s+".test", filepath.Join(dir, s+".log"), extra)
		if err := os.WriteFile(filepath.Join(sitesD, s+".toml"), []byte(body), 0o600); err != nil {
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
			time.Sleep(100 * time.Millisecond)
		}
	}()

	d, out := daemon(t, conf)
	reloads := 0
	hup := func(wantReloaded bool) {
		t.Helper()
		time.Sleep(700 * time.Millisecond)
		before := strings.Count(out.String(), `msg=reloaded`)
		refused := strings.Count(out.String(), "reload refused")
		d.Process.Signal(syscall.SIGHUP)
		deadline := time.Now().Add(20 * time.Second)
		for {
			if wantReloaded && strings.Count(out.String(), `msg=reloaded`) > before {
				reloads++
				return
			}
			if !wantReloaded && strings.Count(out.String(), "reload refused") > refused {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("SIGHUP not handled (want reloaded %v):\n%s", wantReloaded, out)
			}
			time.Sleep(20 * time.Millisecond)
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
	time.Sleep(700 * time.Millisecond)
	stopWriting()
	wg.Wait()

	want := bucketcheck.CountFiles(t, logA, "a.test")
	want.Merge(bucketcheck.CountFiles(t, logB, "b.test"))
	deadline := time.Now().Add(60 * time.Second)
	for bucketcheck.Read(t, db).MonthTotal < want.Hits {
		if time.Now().After(deadline) {
			t.Fatalf("MongoDB did not reach the files' %d hits:\n%s", want.Hits, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a double count would show now
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
