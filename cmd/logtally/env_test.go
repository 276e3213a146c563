package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/internal/testenv/testconfig"
	"github.com/logtally/logtally/observe"
)

// What the end-to-end tests share: the config they run logtally with, a
// daemon run as a host (started, stopped, killed, restarted), and the
// waits on what it does (hits in MongoDB, a line logged, everything read
// acknowledged).

// writeConfig writes at path the end-to-end tests' config
// (testconfig.New: short commit and flush intervals, small bulk writes
// for the embedded server, no HTTP, the state dir beside path) with
// MongoDB at uri and database db and one combined-format source of site
// reading logPath, then overrides. It returns path.
func writeConfig(t *testing.T, path, uri, db, site, logPath string, overrides ...func(*config.Config)) string {
	t.Helper()
	base := []func(*config.Config){testconfig.Mongo(uri, db), testconfig.Sources(testconfig.Source(site, logPath))}
	return testconfig.Write(t, path, testconfig.New(filepath.Dir(path), append(base, overrides...)...))
}

// fastConfig is writeConfig at dir/logtally.toml.
func fastConfig(t *testing.T, dir, uri, db, site, logPath string, overrides ...func(*config.Config)) string {
	t.Helper()
	return writeConfig(t, filepath.Join(dir, "logtally.toml"), uri, db, site, logPath, overrides...)
}

// The overrides the tests share.

// instance names the instance.
func instance(name string) func(*config.Config) {
	return func(c *config.Config) { c.Instance = name }
}

// stateAt puts the state dir at dir.
func stateAt(dir string) func(*config.Config) {
	return func(c *config.Config) { c.StateDir = dir }
}

// listen serves /metrics, /healthz and /status at addr.
func listen(addr string) func(*config.Config) {
	return func(c *config.Config) { c.HTTP.Listen = addr }
}

// hotPages makes every page with a hit hot (preallocate_min_hits = 1):
// its own buckets at every level, as every page had before tails. A test
// whose point is a page bucket's counters at a finer grain than a tail
// holds (a daily bucket's minutes) uses it; a cold page is judged at its
// tail's grain (verify: "judged for lost hits only" where that grain
// reaches outside the range).
func hotPages(c *config.Config) { c.Buckets.PreallocateMinHits = 1 }

// noPrealloc turns preallocation off.
func noPrealloc(c *config.Config) { c.Buckets.Preallocate = false }

// nginxMeasures makes the first source read measuresLogFormat lines.
func nginxMeasures(c *config.Config) {
	c.Sources[0].Format, c.Sources[0].LogFormat = "nginx", measuresLogFormat
}

// deadMongoTimings are the settings of the tests with MongoDB unreachable:
// a short stop, a short timeout per operation.
func deadMongoTimings(c *config.Config) {
	c.ShutdownTimeout = config.Duration(time.Second)
	c.Mongo.Timeout = config.Duration(300 * time.Millisecond)
}

// coarseInterval sets flush.coarse_interval (a duration, "0" for none).
func coarseInterval(d string) func(*config.Config) {
	return func(c *config.Config) { c.Flush.CoarseInterval = duration(d) }
}

// shutdownTimeout sets shutdown_timeout.
func shutdownTimeout(d string) func(*config.Config) {
	return func(c *config.Config) { c.ShutdownTimeout = duration(d) }
}

// duration parses d as the config does.
func duration(d string) config.Duration {
	var v config.Duration
	if err := v.UnmarshalText([]byte(d)); err != nil {
		panic(err)
	}
	return v
}

// host is a logtally daemon of the end-to-end tests, run at debug level
// as often as the test starts it, each run's output in its own file,
// outDir/<name>-<run>.log.
type host struct {
	name, conf, outDir string
	addr               string   // its [http] listen, for settle; "" for none
	env                []string // added to its environment ("KEY=value")
	cmd                *exec.Cmd
	done               chan error
	out                string   // the running daemon's output file
	outputs            []string // every run's output file
}

// start runs h's daemon; the test's end kills it if it still runs.
func (h *host) start(t *testing.T) {
	t.Helper()
	out := filepath.Join(h.outDir, fmt.Sprintf("%s-%02d.log", h.name, len(h.outputs)))
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	h.outputs = append(h.outputs, out)
	cmd := command("run", "-config", h.conf, "-log-level", "debug")
	cmd.Env = append(cmd.Env, h.env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatal(err)
	}
	h.cmd, h.done, h.out = cmd, make(chan error, 1), out
	go func() { h.done <- cmd.Wait(); f.Close() }()
	t.Cleanup(func() {
		if h.cmd == cmd {
			cmd.Process.Kill()
			<-h.done
		}
	})
}

// stop sends sig to h's daemon and waits for it to exit; SIGTERM must end
// it with exit 0.
func (h *host) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	h.cmd.Process.Signal(sig)
	err := <-h.done
	h.cmd = nil
	if sig == syscall.SIGTERM && err != nil {
		t.Errorf("%s after SIGTERM: %v (want exit 0); output in %s", h.name, err, h.out)
	}
}

// running waits until h's daemon has opened its pipeline (it logs
// "logtally running", then answers on its control socket).
func (h *host) running(t *testing.T) {
	t.Helper()
	testenv.Wait(t, 2*stallLimit, h.name+"'s daemon running", func() bool {
		b, _ := os.ReadFile(h.out)
		return strings.Contains(string(b), `msg="logtally running"`)
	})
}

// stallLimit ends a wait for MongoDB's counts that saw no progress for
// this long: a loaded machine is slow, not stuck.
const stallLimit = 90 * time.Second

// untilHits waits until db's monthly buckets hold n hits or more, as long
// as their total moves (stallLimit without progress ends the wait; 10
// minutes in all), and returns the total it read last.
func untilHits(t *testing.T, db *mongo.Database, n int64) int64 {
	t.Helper()
	last, stalled := int64(-1), time.Now().Add(stallLimit)
	testenv.Until(10*time.Minute, func() bool {
		got := monthTotal(t, db)
		if got != last {
			last, stalled = got, time.Now().Add(stallLimit)
		}
		return got >= n || time.Now().After(stalled)
	})
	return last
}

// monthTotal sums the monthly buckets' totals and the monthly tails'
// views (the cheap way to watch progress: a few dozen documents).
func monthTotal(t *testing.T, db *mongo.Database) int64 {
	t.Helper()
	return bucketcheck.Total(t, db, bucket.Monthly)
}

// waitHits is untilHits failing the test, showing out, unless db holds n
// hits.
func waitHits(t *testing.T, db *mongo.Database, n int64, out fmt.Stringer) {
	t.Helper()
	if got := untilHits(t, db, n); got < n {
		t.Fatalf("MongoDB holds %d of %d hits, and no more for %v:\n%s", got, n, stallLimit, out)
	}
}

// failedFlushes waits until out holds n failed flushes (MongoDB
// unreachable), each logged with its error.
func failedFlushes(t *testing.T, out fmt.Stringer, n int) {
	t.Helper()
	testenv.Wait(t, stallLimit, fmt.Sprintf("%d failed flushes logged", n), func() bool {
		return strings.Count(out.String(), `msg="flush failed"`) >= n
	}, out)
}

// waitLog waits until out holds s.
func waitLog(t *testing.T, out fmt.Stringer, s string, within time.Duration) {
	t.Helper()
	testenv.Wait(t, within, fmt.Sprintf("%q logged", s), func() bool { return strings.Contains(out.String(), s) }, out)
}

// waitStatus waits until the /status served at addr satisfies cond, and
// returns it.
func waitStatus(t *testing.T, addr, what string, out fmt.Stringer, cond func(observe.StatusReport) bool) observe.StatusReport {
	t.Helper()
	var last string
	var rep observe.StatusReport
	testenv.Wait(t, stallLimit, what, func() bool {
		code, body := testenv.Get(addr, "/status")
		last, rep = body, observe.StatusReport{}
		return code == 200 && json.Unmarshal([]byte(body), &rep) == nil && len(rep.Sources) > 0 && cond(rep)
	}, stringer(func() string { return "/status: " + last }), out)
	return rep
}

// settle waits until the daemon serving /status at addr has read every
// file to its end and MongoDB holds all it read
// (pipeline.Status.Settled): a double count, were there one, would be in
// the buckets now.
func settle(t *testing.T, addr string, out fmt.Stringer) {
	t.Helper()
	waitStatus(t, addr, "the daemon to settle (everything read acknowledged)", out, func(r observe.StatusReport) bool { return r.Settled() })
}

// settle is settle for h's running daemon.
func (h *host) settle(t *testing.T) {
	t.Helper()
	settle(t, h.addr, fileText(h.out))
}

// stringer is a func as a fmt.Stringer.
type stringer func() string

func (s stringer) String() string { return s() }
