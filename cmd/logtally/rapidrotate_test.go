package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
)

// TestRotationsBetweenPolls (issue 29, 2): logtally follows access.log
// (100 lines counted), then three numbered rotations come one after the
// other, faster than any poll, with 150, 170 and 90 lines written between
// them, logrotate's way (access.log.1 to .2 first, then access.log to
// .1). Every bucket must equal the files' counts once the three rotated
// generations are finished: before, the two generations no poll saw were
// never counted (100 + 0 + 0 + 90), and nothing said so.
func TestRotationsBetweenPolls(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	srv := mongotest.Start(t)
	db := srv.Database(t)
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	os.MkdirAll(logs, 0o755)
	access := filepath.Join(logs, "access.log")
	conf := fastConfig(t, dir, srv.URI(), db.Name(), "rapid.test", access)
	// Few pages within two minutes: the embedded server's collections
	// stay small.
	gen, base, k := loggen.New(29), time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC), 0
	write := func(n int) {
		t.Helper()
		var b []byte
		for range n {
			k++
			b = fmt.Appendf(b, "10.0.%d.%d - - [%s] \"GET %s HTTP/1.1\"", k/250, k%250,
				base.Add(time.Duration(k%90)*time.Second).Format("02/Jan/2006:15:04:05 -0700"), []string{"/", "/a/"}[k%2])
			b = append(gen.AppendRest(b), '\n')
		}
		f, err := os.OpenFile(access, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	rotate := func(generations int) {
		t.Helper()
		for i := generations; i >= 1; i-- {
			from := access
			if i > 1 {
				from = fmt.Sprintf("%s.%d", access, i-1)
			}
			if err := os.Rename(from, fmt.Sprintf("%s.%d", access, i)); err != nil {
				t.Fatal(err)
			}
		}
	}

	write(100)
	d := &host{name: "daemon", conf: conf, outDir: dir}
	d.start(t)
	log := d.out
	waitHits(t, db, 100, fileText(log))
	rotate(1)
	write(150)
	rotate(2)
	write(170)
	rotate(3)
	write(90)
	waitHits(t, db, 510, fileText(log))
	// The three rotated generations are finished (RotateGrace after
	// their last line): nothing of them is read after.
	testenv.Wait(t, time.Minute, "the three rotated generations finished", func() bool {
		return strings.Count(string(fileText(log).bytes()), "rotated file quiet, finished") >= 3
	})
	d.stop(t, syscall.SIGTERM)
	want := bucketcheck.CountFiles(t, access+"*", "rapid.test")
	if want.Hits != 510 || want.Files != 4 {
		t.Fatalf("the files hold %d hits in %d files, want 510 in 4", want.Hits, want.Files)
	}
	got := bucketcheck.Read(t, db)
	res := bucketcheck.CompareAll(t, want, got)
	if l := string(fileText(log).bytes()); strings.Contains(l, "level=ERROR") {
		t.Errorf("an ERROR was logged:\n%s", l)
	}
	t.Logf("rotations between polls: %d hits in %d files; %v", want.Hits, want.Files, res)
}

// fileText shows a file's content (a daemon's log) in failure messages.
type fileText string

func (f fileText) bytes() []byte {
	b, _ := os.ReadFile(string(f))
	return b
}

func (f fileText) String() string { return string(f.bytes()) }
