package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
)

// The replay tests: every case of issue 9's "exactly once, in every
// order", against the real wire server, judged like the crash test: every
// counter of every bucket against the files' own count.

const replaySite = "replay.test"

// replayEnv is a directory with live logs (logs/access.log, the source's
// glob), archives (archive/), plain copies of what the archives hold
// (truth/, for counting) and a config.
type replayEnv struct {
	t     *testing.T
	dir   string
	srv   *mongotest.Server
	db    *mongo.Database
	conf  string
	addrs map[string]string // each config's /status address
	live  string
	arch  string
	truth string
}

func newReplayEnv(t *testing.T) *replayEnv {
	t.Helper()
	srv := mongotest.Start(t)
	e := &replayEnv{t: t, dir: t.TempDir(), srv: srv, db: srv.Database(t), addrs: map[string]string{}}
	e.live = filepath.Join(e.dir, "logs", "access.log")
	e.arch = filepath.Join(e.dir, "archive")
	e.truth = filepath.Join(e.dir, "truth")
	for _, d := range []string{filepath.Dir(e.live), e.arch, e.truth} {
		os.MkdirAll(d, 0o755)
	}
	e.conf = e.config("state", "web-1")
	return e
}

// config writes a config with its own state dir and instance name, and
// /status at an address of its own (e.settle).
func (e *replayEnv) config(state, name string) string {
	e.t.Helper()
	addr := testenv.FreeAddr(e.t)
	conf := writeConfig(e.t, filepath.Join(e.dir, name+".toml"), e.srv.URI(), e.db.Name(), replaySite, e.live,
		stateAt(filepath.Join(e.dir, state)), instance(name), noPrealloc, listen(addr))
	e.addrs[conf] = addr
	return conf
}

// settle waits until the daemon run with conf has read every file to its
// end and MongoDB holds all it read: a double count would show now.
func (e *replayEnv) settle(conf string, out fmt.Stringer) {
	e.t.Helper()
	settle(e.t, e.addrs[conf], out)
}

// lines returns n combined lines from line number from on: three pages,
// ten lines a second from 2026-03-01 10:00 UTC.
func lines(from, n int) []byte { return linesAt(from, n, 100*time.Millisecond) }

// linesAt is lines with every gap between lines.
func linesAt(from, n int, every time.Duration) []byte {
	var b bytes.Buffer
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "10.0.0.%d - - [%s] \"GET /page%d HTTP/1.1\" 200 10 \"-\" \"t\"\n",
			i%200, t0.Add(time.Duration(i)*every).Format("02/Jan/2006:15:04:05 -0700"), i%3)
	}
	return b.Bytes()
}

// archive writes data to archive/name, compressed by its suffix, and a
// plain copy to truth/name.
func (e *replayEnv) archive(name string, data []byte) string {
	e.t.Helper()
	var out bytes.Buffer
	switch filepath.Ext(name) {
	case ".gz":
		w := gzip.NewWriter(&out)
		w.Write(data)
		w.Close()
	case ".zst":
		w, _ := zstd.NewWriter(&out)
		w.Write(data)
		w.Close()
	default:
		out.Write(data)
	}
	path := filepath.Join(e.arch, name)
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		e.t.Fatal(err)
	}
	os.WriteFile(filepath.Join(e.truth, name), data, 0o644)
	return path
}

// replay runs logtally replay and returns its stdout; it fails the test
// unless it exits 0.
func (e *replayEnv) replay(conf string, args ...string) string {
	e.t.Helper()
	out, stderr, code := runCmd(e.t, append([]string{"replay", "-config", conf}, args...)...)
	if code != 0 {
		e.t.Fatalf("replay %v: exit %d\n%s\n%s", args, code, out, stderr)
	}
	return out
}

// check compares every bucket with the count of the files in truth/ and
// the live log's directory (and what extra holds).
func (e *replayEnv) check(what string, globs ...string) bucketcheck.Counts {
	e.t.Helper()
	var want bucketcheck.Counts
	for i, g := range globs {
		c := bucketcheck.CountFiles(e.t, g, replaySite)
		if i == 0 {
			want = c
		} else {
			want.Merge(c)
		}
	}
	got := bucketcheck.Read(e.t, e.db)
	res := bucketcheck.CompareAll(e.t, want, got)
	e.t.Logf("%s: %d hits in the files, %d in MongoDB, %v", what, want.Hits, got.MonthTotal, res)
	if !res.Exact() || got.MonthTotal != want.Hits {
		e.t.Fatalf("%s: not exact", what)
	}
	return want
}

func wantStatus(t *testing.T, out string, status string, n int) {
	t.Helper()
	if got := strings.Count(out, "  "+status+" "); got != n {
		t.Errorf("%d files %q, want %d:\n%s", got, status, n, out)
	}
}

// Cases 1 and 6: plain, gzip and zstd archives are counted once; replayed
// again, after the state dir is removed, and from a second state dir
// (another host) they count nothing.
func TestReplayCountsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	// Rotated names of the source's glob: no -site or -format needed.
	e.archive("access.log.1", lines(0, 400))
	e.archive("access.log.2.gz", lines(400, 400))
	e.archive("access.log.3.zst", lines(800, 400))
	// Another site's file, named like nothing: -site and -format.
	other := e.archive("other.bin.gz", lines(1200, 90))
	out := e.replay(e.conf, filepath.Join(e.arch, "access.log.*"))
	wantStatus(t, out, "counted", 3)
	if !strings.Contains(out, "in this process") || !strings.Contains(out, "database: ops=") {
		t.Errorf("summary:\n%s", out)
	}
	// Oldest first by first hit, whatever the arguments' order.
	if i1, i3 := strings.Index(out, "access.log.1"), strings.Index(out, "access.log.3.zst"); i1 > i3 {
		t.Errorf("files not oldest first:\n%s", out)
	}
	_, stderr, code := runCmd(t, "replay", "-config", e.conf, other)
	if code != 1 || !strings.Contains(stderr, "give -site and -format") {
		t.Errorf("a file no source matches: exit %d, %s", code, stderr)
	}
	e.replay(e.conf, "-site", replaySite, "-format", "combined", other)
	e.check("first replay", filepath.Join(e.truth, "*"))

	out = e.replay(e.conf, "-site", replaySite, "-format", "combined", filepath.Join(e.arch, "*"))
	wantStatus(t, out, "already counted", 4)
	e.check("same archives again", filepath.Join(e.truth, "*"))

	os.RemoveAll(filepath.Join(e.dir, "state"))
	out = e.replay(e.conf, filepath.Join(e.arch, "access.log.*"))
	wantStatus(t, out, "already counted", 3)
	e.check("again after the state dir was removed", filepath.Join(e.truth, "*"))

	second := e.config("state2", "web-2")
	out = e.replay(second, filepath.Join(e.arch, "access.log.*"))
	wantStatus(t, out, "already counted", 3)
	e.check("from a second state dir", filepath.Join(e.truth, "*"))
}

// Case 2: a replay killed with SIGKILL at random moments and run again
// counts each line once.
func TestReplayKilledAndRunAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	var files []string
	for i := range 4 {
		files = append(files, e.archive(fmt.Sprintf("access.log.%d.gz", i+1), linesAt(i*150000, 150000, 4*time.Millisecond)))
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 9))
	// Each stopped round is stopped at a moment that leaves work undone:
	// a random moment early in the read, or the moment MongoDB's minute
	// total moves (a batch partly written). The last stop is a Ctrl-C:
	// reading stops, what was counted is flushed, and the replay says how
	// to resume.
	minutes := func() int64 { return minuteTotal(t, e.db) }
	kills := 0
	const stops = 5
	for round := 0; ; round++ {
		cmd := command(append([]string{"replay", "-config", e.conf, "-jobs", "2", "-log-level", "info"}, files...)...)
		out := &syncbuf.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		before := minutes()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if round == stops {
			if err := <-done; err != nil {
				t.Fatalf("last round: %v\n%s", err, out.String())
			}
			t.Logf("last round:\n%s", out.String())
			break
		}
		early := round%2 == 0 && round < stops-1
		deadline := time.Now().Add(time.Duration(10+rng.IntN(150)) * time.Millisecond)
		finished := false
		for !finished {
			select {
			case err := <-done:
				t.Logf("round %d finished before its stop (%v)", round, err)
				finished = true
				continue
			case <-time.After(20 * time.Millisecond):
			}
			if early && time.Now().After(deadline) || !early && minutes() != before {
				break
			}
		}
		if finished {
			continue
		}
		if round == stops-1 {
			// The minute total can move before this replay has begun (the
			// embedded server finishing the killed round's last write):
			// Ctrl-C waits for the replay's start, after its signal
			// handler is installed, or the default action kills it.
			testenv.Until(30*time.Second, func() bool { return strings.Contains(out.String(), "replay started") })
			cmd.Process.Signal(os.Interrupt)
			err := <-done
			o := out.String()
			if strings.Contains(o, "replayed in this process") && !strings.Contains(o, "stopped before the end") {
				// The replay had ended (its summary printed, its
				// signal handler released) when Ctrl-C came: not a stop.
				t.Logf("round %d finished before its Ctrl-C (%v)", round, err)
				continue
			}
			if err == nil || !strings.Contains(o, "stopped before the end") || !strings.Contains(o, "run the same command again to resume") {
				t.Errorf("Ctrl-C: %v\n%s", err, o)
			}
		} else {
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
		}
		kills++
		t.Logf("round %d stopped (%s), MongoDB's minute total %d -> %d", round, map[bool]string{true: "early", false: "mid-flush"}[early], before, minutes())
	}
	if kills < 3 {
		t.Errorf("only %d of %d replays were stopped before their end", kills, stops)
	}
	e.check(fmt.Sprintf("after %d kills", kills), filepath.Join(e.truth, "*"))
}

// Cases 3 and 4: an archive of a file the daemon counted in part counts
// only the rest; the daemon meeting a file a replay counted skips it.
func TestReplayAndDaemonShareTheLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	stopped := func(what string, d interface{ Wait() error }, out fmt.Stringer) {
		t.Helper()
		if err := d.Wait(); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, out)
		}
	}
	// The daemon counts 300 lines of access.log, then stops.
	os.WriteFile(e.live, lines(0, 300), 0o644)
	d, out := daemon(t, e.conf)
	e.waitHits(300, out)
	d.Process.Signal(syscall.SIGTERM)
	stopped("first daemon", d, out)
	// While it is down the file grows, is rotated and compressed: no
	// live file is left for the daemon to find it by.
	f, _ := os.OpenFile(e.live, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(lines(300, 200))
	f.Close()
	all, _ := os.ReadFile(e.live)
	e.archive("access.log.1.gz", all)
	os.Remove(e.live)
	out2 := e.replay(e.conf, filepath.Join(e.arch, "access.log.1.gz"))
	wantStatus(t, out2, "resumed", 1)
	if !strings.Contains(out2, "lines: 200,") {
		t.Errorf("the archive of a file counted to line 300 of 500 read %s", out2)
	}
	e.check("archive of a file the daemon counted in part", filepath.Join(e.truth, "*"))

	// A replay counts a new access.log before the daemon sees it; the
	// daemon then counts only what is written after.
	os.WriteFile(e.live, lines(500, 250), 0o644)
	out2 = e.replay(e.conf, e.live)
	wantStatus(t, out2, "counted", 1)
	f, _ = os.OpenFile(e.live, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(lines(750, 50))
	f.Close()
	d, out = daemon(t, e.conf)
	e.waitHits(800, out)
	e.settle(e.conf, out) // a double count would show now
	d.Process.Signal(syscall.SIGTERM)
	stopped("second daemon", d, out)
	if !strings.Contains(out.String(), "file already counted in part") {
		t.Errorf("the daemon did not start the file where the replay left it:\n%s", out)
	}
	e.check("daemon after a replay of its file", filepath.Join(e.truth, "*"), e.live)
}

// Case 5: replay while logtally run is running on the same state dir: the
// daemon reads the files through its own pipeline, and both stay exact.
func TestReplayBesideRunningDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	os.WriteFile(e.live, lines(0, 100), 0o644)
	d, out := daemon(t, e.conf)
	sock := filepath.Join(e.dir, "state", "control.sock")
	testenv.Wait(t, 30*time.Second, "the control socket", func() bool { _, err := os.Stat(sock); return err == nil }, out)
	// The live file keeps growing while the replay runs.
	stop := make(chan struct{})
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := 100; ; i += 10 {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			f, _ := os.OpenFile(e.live, os.O_APPEND|os.O_WRONLY, 0)
			f.Write(lines(i, 10))
			f.Close()
		}
	}()
	e.archive("access.log.2.gz", lines(5000, 3000))
	e.archive("access.log.3.zst", lines(8000, 3000))
	rout := e.replay(e.conf, filepath.Join(e.arch, "*"))
	close(stop)
	<-wrote
	if !strings.Contains(rout, "in the running daemon") {
		t.Errorf("replay did not go through the daemon:\n%s", rout)
	}
	wantStatus(t, rout, "counted", 2)
	// The daemon refuses to replay a file it follows.
	_, stderr, code := runCmd(t, "replay", "-config", e.conf, e.live)
	if code == 0 || !strings.Contains(stderr, "this logtally follows it") {
		t.Errorf("replay of the followed file: exit %d, %s", code, stderr)
	}
	e.settle(e.conf, out) // the live file read to its end, all in MongoDB
	d.Process.Signal(syscall.SIGTERM)
	if err := d.Wait(); err != nil {
		t.Fatalf("daemon: %v\n%s", err, out)
	}
	e.check("replay beside the daemon", filepath.Join(e.truth, "*"), e.live)
}

// minuteTotal sums the minute buckets' totalViews and the minute tails'
// views.
func minuteTotal(t *testing.T, db *mongo.Database) int64 {
	t.Helper()
	return bucketcheck.Total(t, db, bucket.Minute)
}
