package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv/testconfig"
)

// The crash test's traffic: few pages and few minutes, so the embedded
// server's collections stay small (it scans a collection per guarded update).
var (
	crashPages = []string{"/", "/blog/", "/about/"}
	crashBase  = time.Date(2026, 1, 31, 23, 58, 30, 0, time.UTC) // spans a day and a month boundary
)

const crashSpan = 150 // seconds of log time the lines are spread over

// measuresLogFormat is the nginx log_format of the lines with every measure
// (loggen.Gen.Measures, bucketcheck's trailing fields): status, bytes, user
// agent, $request_time and $upstream_response_time.
const measuresLogFormat = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" rt=$request_time urt="$upstream_response_time"`

// TestCrashAndRotation runs logtally as a subprocess while a writer appends
// and rotates (rename, and copytruncate), kills it with SIGKILL at random
// moments, cuts MongoDB off for a while, removes the state dir after two
// of the kills (the next start rebuilds it from MongoDB's progress record:
// the first right after MongoDB is back, when the batch in flight holds
// everything buffered while it was away, rotations and restarts included),
// restarts it each time, and at the end compares every counter and every
// measure of every bucket and site document with the counts taken from the
// log files, and every value of every dimension of where the traffic
// comes from with bucketcheck's counts from loggen's lists (the daemon
// reads loggeo's databases). The lines carry every measure (statuses,
// sizes, user agents of every bot class, response times, through an nginx
// log_format) and loggen's referers and clients.
func TestCrashAndRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	srv := mongotest.Start(t)
	db := srv.Database(t)
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	os.MkdirAll(logs, 0o755)
	conf := fastConfig(t, dir, srv.URI(), db.Name(), "crash.test", filepath.Join(logs, "access.log"), nginxMeasures)

	// A new seed each run covers more orders of events over many CI runs;
	// it is logged so a failure's writer and kill schedule can be rerun
	// with LOGTALLY_CRASH_SEED (the timing itself is never reproducible).
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LOGTALLY_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	// Every other seed writes the daily and monthly buckets only every
	// 400 ms (flush.coarse_interval): minute-only batches, coarse counts
	// waiting in the buffer, their rebuild when the state dir is removed.
	coarse := "0"
	if seed%2 == 1 {
		coarse = "400ms"
	}
	if c := os.Getenv("LOGTALLY_CRASH_COARSE"); c != "" {
		coarse = c
	}
	testconfig.Edit(t, conf, coarseInterval(coarse), dimensionsOn, loggenGeo(t, dir))
	t.Logf("seed %d, flush.coarse_interval %s", seed, coarse)
	w := &writer{dir: logs, rng: rand.New(rand.NewPCG(seed, 2)), gen: loggen.New(seed)}
	w.gen.Measures = true
	w.gen.Site = "crash.test"
	w.open(t)
	ctx, stopWriting := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.loop(ctx, t) }()

	rng := rand.New(rand.NewPCG(seed, 4))
	d := &host{name: "daemon", conf: conf, outDir: dir}
	const kills = 12
	removed := 0
	for i := 0; i < kills; i++ {
		if i == 4 {
			srv.Stop() // MongoDB unreachable for rounds 4..6: logtally buffers on disk
		}
		if i == 7 {
			srv.Resume()
		}
		d.start(t)
		life := time.Duration(150+rng.IntN(900)) * time.Millisecond // a random moment to crash at
		if i == 8 || i == 11 {
			// The state dir was removed: the lease of the killed run
			// lapses (lease_ttl 3s), then the state is rebuilt from
			// MongoDB's record. Crash after that, at a random moment.
			life += 3 * time.Second
		}
		time.Sleep(life) // the moment is the point: a crash anywhere in the daemon's work
		d.stop(t, syscall.SIGKILL)
		if i == 7 || i == 10 {
			// The state dir is lost (an operator's rm -rf, a rebuilt
			// host): the next start rebuilds it from MongoDB's record.
			if err := os.RemoveAll(filepath.Join(dir, "state")); err != nil {
				t.Fatal(err)
			}
			removed++
		}
		if i%3 == 2 {
			// Stay down for a while: the writer rotates once or twice
			// (rename and/or copytruncate) while nobody reads. Time is
			// the point: the writer's rotations are paced by it.
			time.Sleep(time.Duration(500+rng.IntN(1500)) * time.Millisecond)
		}
	}
	stopWriting()
	wg.Wait()
	w.close()

	want := bucketcheck.CountFiles(t, filepath.Join(logs, "access.log*"), "crash.test")
	if want.Hits < 1000 {
		t.Fatalf("writer wrote only %d hits: the test did not exercise much", want.Hits)
	}
	// Final run: wait until every hit is in MongoDB, then SIGTERM must drain
	// and exit 0. A slow machine is waited for as long as the counts move
	// (untilHits).
	d.start(t)
	begun := time.Now()
	total := untilHits(t, db, want.Hits)
	t.Logf("final run: %d of %d hits in MongoDB after %v", total, want.Hits, time.Since(begun).Round(time.Millisecond))
	d.stop(t, syscall.SIGTERM)
	got := bucketcheck.Read(t, db)
	if keep := os.Getenv("LOGTALLY_CRASH_KEEP"); keep != "" {
		os.RemoveAll(keep)
		os.CopyFS(keep, os.DirFS(dir))
		t.Logf("test directory copied to %s", keep)
	}

	res := bucketcheck.CompareAll(t, want, got)
	t.Logf("crash test: %d kills, state dir removed %d times, %d hits in %d files (%d rename and %d copytruncate rotations, %d malformed lines), %v",
		kills, removed, want.Hits, want.Files, w.renames, w.copies, w.malformed, res)
	if w.renames == 0 || w.copies == 0 {
		t.Errorf("writer did not rotate both ways: %d renames, %d copies", w.renames, w.copies)
	}
	// Where the traffic came from: every value of every dimension of
	// every site day is the files', through every kill and rebuild.
	t.Logf("by dimension: %v", checkDims(t, db, want, got.Sites))
}

// writer appends lines of measuresLogFormat (the client and the rest of
// each line after the request from loggen: statuses, sizes, referers,
// user agents, timing; set gen.Site to the site's host) and
// rotates the file now and then,
// the way logrotate does: rename (the writer goes on writing the renamed
// file for a moment, as nginx does until it reopens) or copytruncate.
type writer struct {
	dir                        string
	base                       time.Time     // the lines' first second; zero: crashBase
	pace                       time.Duration // between writes; zero: 5 ms
	rng                        *rand.Rand
	gen                        *loggen.Gen
	f                          *os.File
	n, sinceRotate             int
	renames, copies, malformed int
}

func (w *writer) path(i int) string {
	if i == 0 {
		return filepath.Join(w.dir, "access.log")
	}
	return filepath.Join(w.dir, "access.log."+strconv.Itoa(i))
}

func (w *writer) open(t *testing.T) {
	f, err := os.OpenFile(w.path(0), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	w.f = f
}

func (w *writer) close() { w.f.Close() }

func (w *writer) write(t *testing.T, lines int) {
	var b []byte
	for i := 0; i < lines; i++ {
		w.n++
		if w.n%97 == 0 {
			b = append(b, "this is not an access log line\n"...)
			w.malformed++
			continue
		}
		base := w.base
		if base.IsZero() {
			base = crashBase
		}
		ts := base.Add(time.Duration(w.rng.IntN(crashSpan)) * time.Second).In(time.FixedZone("", -5*3600))
		page := crashPages[w.rng.IntN(len(crashPages))]
		b = fmt.Appendf(w.gen.AppendClient(b), " - - [%s] \"GET %s?n=%d HTTP/1.1\"",
			ts.Format("02/Jan/2006:15:04:05 -0700"), page, w.n)
		b = append(w.gen.AppendRest(b), '\n')
	}
	if _, err := w.f.Write(b); err != nil {
		t.Error(err)
	}
}

// shift renames access.log.N to access.log.N+1, oldest first.
func (w *writer) shift(t *testing.T) {
	last := 0
	for {
		if _, err := os.Stat(w.path(last + 1)); err != nil {
			break
		}
		last++
	}
	for i := last; i >= 1; i-- {
		if err := os.Rename(w.path(i), w.path(i+1)); err != nil {
			t.Error(err)
		}
	}
}

func (w *writer) loop(ctx context.Context, t *testing.T) {
	for ctx.Err() == nil {
		w.write(t, 1+w.rng.IntN(15))
		w.sinceRotate++
		if w.sinceRotate > 60+w.rng.IntN(60) {
			w.sinceRotate = 0
			w.shift(t)
			if (w.renames+w.copies)%2 == 0 {
				// rename + create; keep writing the old file briefly.
				if err := os.Rename(w.path(0), w.path(1)); err != nil {
					t.Error(err)
				}
				w.write(t, 5)
				time.Sleep(20 * time.Millisecond) // a writer that reopens late: time is the point
				w.write(t, 5)
				w.f.Close()
				w.open(t)
				w.renames++
			} else {
				// copytruncate: copy, then truncate in place.
				src, _ := os.Open(w.path(0))
				dst, _ := os.Create(w.path(1))
				io.Copy(dst, src)
				src.Close()
				dst.Close()
				if err := w.f.Truncate(0); err != nil {
					t.Error(err)
				}
				w.copies++
			}
		}
		time.Sleep(cmp.Or(w.pace, 5*time.Millisecond)) // the writer's pace: time is the point
	}
}
