package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/observe"
	"github.com/logtally/logtally/query"
	"github.com/logtally/logtally/record"
	"github.com/logtally/logtally/salts"
	"github.com/logtally/logtally/visitor"
)

// The end-to-end tests of unique visitors (issue 19): real daemons, one per
// host, against the wire server. The registers MongoDB holds are compared,
// one by one, with the sketch computed here from the log files with the
// day's salt: exact, a far stronger check than an estimate within its
// error, which is checked too.

const visitorSite = "visitors.test"

// The test's user agents: current browsers (people), each carrying a
// marker no real user agent has, so the privacy search finds any copy of
// one; and bots carrying another marker (bots are no visitors, and their
// user agents must not be stored either).
var (
	visitorUAs = []string{
		"Mozilla/5.0 (X11; Linux x86_64; rv:128.0; VisitorMarker-q7Fx) Gecko/20100101 Firefox/128.0",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64; VisitorMarker-z3Kd) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5; VisitorMarker-m9Wt) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
	}
	visitorBotUAs = []string{
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html; BotMarker-r4Pq)",
		"curl/8.5.0 BotMarker-r4Pq",
	}
)

// visitorAddr returns test address a: odd ones IPv4 in 198.18.0.0/15
// (benchmarking, RFC 2544), even ones IPv6 in 2001:db8:7e57::/48
// (documentation, RFC 3849). Both prefixes are searched for by the
// privacy check.
func visitorAddr(a int) string {
	if a%2 == 1 && a/2 < 1<<17 {
		b := a / 2
		return fmt.Sprintf("198.%d.%d.%d", 18+b>>16, b>>8&255, b&255)
	}
	return fmt.Sprintf("2001:db8:7e57:%x::%x", a>>16, a&0xffff)
}

// visitorOf returns visitor i's client address and user agent: distinct
// (address, user agent) pairs for distinct i.
func visitorOf(i int) (addr, ua string) {
	return visitorAddr(i / len(visitorUAs)), visitorUAs[i%len(visitorUAs)]
}

// appendVisitorLines appends the lines of visitors from..to-1 at ts: rep
// rounds, each visitor once per round (so a visitor's lines are not in a
// row), two pages, and two bot lines (other user agents, same address)
// for every tenth visitor in the first round.
func appendVisitorLines(b []byte, from, to, rep int, ts time.Time) []byte {
	stamp := ts.UTC().Format("02/Jan/2006:15:04:05 -0700")
	for r := range rep {
		for i := from; i < to; i++ {
			addr, ua := visitorOf(i)
			b = fmt.Appendf(b, "%s - - [%s] \"GET /p%d HTTP/1.1\" 200 %d \"-\" \"%s\"\n", addr, stamp, (i+r)%2, 100+i%50, ua)
			if r == 0 && i%10 == 0 {
				for _, bot := range visitorBotUAs {
					b = fmt.Appendf(b, "%s - - [%s] \"GET /p0 HTTP/1.1\" 200 64 \"-\" \"%s\"\n", addr, stamp, bot)
				}
			}
		}
	}
	return b
}

// visitorStamp returns the lines' time: the start of the current minute,
// UTC, so today (lines of a day whose salt is gone add no visitor).
func visitorStamp() time.Time { return clock.Real{}.Now().UTC().Truncate(time.Minute) }

// vhost is one host: its own log, state dir and instance name, its
// daemon's outputs in out/.
type vhost struct {
	host
	state, log string
}

// venv is a test's hosts and database.
type venv struct {
	t     *testing.T
	dir   string
	srv   *mongotest.Server
	db    *mongo.Database
	ts    time.Time // the lines' time
	hosts []*vhost
	// outputs are the files holding every replay's output (debug level):
	// searched by the privacy check, with the daemons'.
	outputs []string
	extra   []string // more plain files whose lines were counted (replayed)
}

func newVenv(t *testing.T, srv *mongotest.Server, hosts ...string) *venv {
	t.Helper()
	e := &venv{t: t, dir: t.TempDir(), srv: srv, db: srv.Database(t), ts: visitorStamp()}
	for _, d := range []string{"logs", "out", "archive", "truth"} {
		os.MkdirAll(filepath.Join(e.dir, d), 0o755)
	}
	if keep := os.Getenv("LOGTALLY_VISITORS_KEEP"); keep != "" {
		// The test directory is copied there at the end, for a look at
		// the daemons' outputs after a failure.
		t.Cleanup(func() {
			os.RemoveAll(keep)
			os.CopyFS(keep, os.DirFS(e.dir))
			t.Logf("test directory copied to %s", keep)
		})
	}
	for _, name := range hosts {
		h := &vhost{state: filepath.Join(e.dir, "state-"+name), log: filepath.Join(e.dir, "logs", name+".log")}
		addr := testenv.FreeAddr(t)
		h.host = host{name: name, outDir: filepath.Join(e.dir, "out"), addr: addr, conf: writeConfig(t, filepath.Join(e.dir, name+".toml"),
			srv.URI(), e.db.Name(), visitorSite, h.log, stateAt(h.state), instance(name), noPrealloc, listen(addr))}
		e.hosts = append(e.hosts, h)
	}
	return e
}

// appendLog appends visitors from..to-1 (rep rounds) to h's log.
func (e *venv) appendLog(h *vhost, from, to, rep int) {
	e.t.Helper()
	f, err := os.OpenFile(h.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	const chunk = 20000
	for i := from; i < to; i += chunk {
		if _, err := f.Write(appendVisitorLines(nil, i, min(i+chunk, to), rep, e.ts)); err != nil {
			e.t.Fatal(err)
		}
	}
}

// startAll starts every host's daemon at once: the test server's proxy
// applies their writes one at a time, as MongoDB applies each update
// whole (the embedded FerretDB alone loses concurrent updates of one
// document).
func (e *venv) startAll() {
	e.t.Helper()
	for _, h := range e.hosts {
		h.start(e.t)
	}
}

// files returns the plain files whose lines were counted.
func (e *venv) files() []string {
	var out []string
	for _, h := range e.hosts {
		out = append(out, h.log)
	}
	return append(out, e.extra...)
}

// want counts the files' hits (bucketcheck).
func (e *venv) want() bucketcheck.Counts {
	e.t.Helper()
	var want bucketcheck.Counts
	for i, f := range e.files() {
		c := bucketcheck.CountFiles(e.t, f, visitorSite)
		if i == 0 {
			want = c
		} else {
			want.Merge(c)
		}
	}
	return want
}

// waitCounted waits until MongoDB holds every hit of the files and the
// site's registers equal the files' sketch (waiting as long as the hit
// total moves: untilHits) and every running daemon has settled, then
// compares every bucket and every register, and returns the files'
// sketch.
func (e *venv) waitCounted(what string) *visitor.Sketch {
	e.t.Helper()
	want := e.want()
	begun := time.Now()
	untilHits(e.t, e.db, want.Hits)
	sketch := e.filesSketch()
	testenv.Until(30*time.Second, func() bool { return sameSketch(sketch, e.stored()) }) // compareRegisters says what differs
	for _, h := range e.hosts {
		if h.cmd != nil {
			h.settle(e.t) // a double count or a late register would show now
		}
	}
	got := bucketcheck.Read(e.t, e.db)
	res := bucketcheck.CompareAll(e.t, want, got)
	e.t.Logf("%s: %d hits in the files, %d in MongoDB after %v, %v", what, want.Hits, got.MonthTotal, time.Since(begun).Round(time.Millisecond), res)
	if !res.Exact() || got.MonthTotal != want.Hits {
		for _, h := range e.hosts {
			stdout, stderr, _ := runCmd(e.t, "state", "-config", h.conf)
			e.t.Logf("%s's state:\n%s%s", h.name, stdout, stderr)
		}
		e.t.Fatalf("%s: buckets not exact", what)
	}
	e.compareRegisters(what, sketch)
	return sketch
}

// compareRegisters fails the test unless the stored registers equal want's
// one by one.
func (e *venv) compareRegisters(what string, want *visitor.Sketch) {
	e.t.Helper()
	got := e.stored()
	if got == nil {
		e.t.Fatalf("%s: no visitors document for %s", what, visitor.Day.ID(e.ts.Unix()))
	}
	var diffs []string
	for i := range want.R {
		if want.R[i] != got.R[i] {
			diffs = append(diffs, fmt.Sprintf("%d: %d want %d", i, got.R[i], want.R[i]))
		}
	}
	if len(diffs) > 0 {
		e.t.Fatalf("%s: %d of %d registers differ from the files' sketch (stored estimate %.0f, files' %.0f): %s",
			what, len(diffs), len(want.R), got.Estimate(), want.Estimate(), strings.Join(diffs[:min(len(diffs), 10)], ", "))
	}
}

// salt returns the salt of the lines' day from MongoDB.
func (e *venv) salt() *visitor.Salt {
	e.t.Helper()
	s, ok := salts.NewLookup(e.db, visitor.Day, 10*time.Second).For(e.ts.Unix())
	if !ok {
		e.t.Fatalf("no salt for %s in MongoDB", visitor.Day.ID(e.ts.Unix()))
	}
	return s
}

// filesSketch computes the site's sketch of the lines' day from the files
// (every line of people with a client), with the day's salt: the registers
// every host together must reach. It reads the lines itself.
func (e *venv) filesSketch() *visitor.Sketch {
	e.t.Helper()
	salt := e.salt()
	s := visitor.NewSketch(visitor.SitePrecision)
	classes := map[string]botclass.Class{}
	for _, p := range e.files() {
		f, err := os.Open(p)
		if err != nil {
			e.t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Bytes()
			sp := bytes.IndexByte(line, ' ')
			if sp <= 0 || len(line) < 2 || line[len(line)-1] != '"' {
				continue
			}
			q := bytes.LastIndexByte(line[:len(line)-1], '"')
			ua := line[q+1 : len(line)-1]
			c, ok := classes[string(ua)]
			if !ok {
				c = bucketcheck.Class(string(ua))
				classes[string(ua)] = c
			}
			if c != botclass.Person {
				continue
			}
			s.Add(visitor.KeyOf(salt, []byte(visitorSite), line[:sp], visitor.UADigest(ua)))
		}
		f.Close()
	}
	return s
}

// storedDoc reads the site's visitors document of the lines' day: nil if
// there is none.
func (e *venv) storedDoc() bson.Raw { return storedDocOf(e.t, e.db, e.ts, visitorSite) }

// stored returns the stored registers as a sketch (nil: no document).
func (e *venv) stored() *visitor.Sketch { return storedSketch(e.t, e.db, e.ts, visitorSite) }

// storedDocOf reads site's visitors document of ts's day: nil if there is
// none.
func storedDocOf(t *testing.T, db *mongo.Database, ts time.Time, site string) bson.Raw {
	t.Helper()
	start, _ := visitor.Day.Bounds(ts.Unix())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw, err := db.Collection(bucket.DefaultVisitorCollection).FindOne(ctx, bson.D{{Key: "_id", Value: bucket.VisitorID(visitor.Day, start, site, "")}}).Raw()
	if err != nil {
		return nil
	}
	return raw
}

// storedSketch returns site's stored registers of ts's day as a sketch
// (nil: no document).
func storedSketch(t *testing.T, db *mongo.Database, ts time.Time, site string) *visitor.Sketch {
	t.Helper()
	raw := storedDocOf(t, db, ts, site)
	if raw == nil {
		return nil
	}
	_, _, s, err := query.DecodeVisitors(raw)
	if err != nil {
		t.Fatalf("visitors document: %v", err)
	}
	return s
}

func sameSketch(a, b *visitor.Sketch) bool { return a.Equal(b) }

// checkEstimate fails the test unless est lies within k standard errors
// of n.
func checkEstimate(t *testing.T, what string, est float64, n int, k float64) {
	t.Helper()
	se := visitor.StdError(visitor.SitePrecision)
	d := est/float64(n) - 1
	t.Logf("%s: %d visitors, estimate %.0f (%+.2f%%, %.2fσ; σ = %.2f%%)", what, n, est, 100*d, d/se, 100*se)
	if math.Abs(d) > k*se {
		t.Errorf("%s: estimate %.0f of %d visitors: beyond %gσ (%.2f%%)", what, est, n, k, 100*k*se)
	}
}

// testSalt is the salt TestVisitorsAccuracyThreeHosts puts in MongoDB
// before the hosts start (they read it, as they read a salt another host
// created): a visitor key does not hold the date, so the estimates are
// the same on every run, and a 3σ check cannot fail by chance (with a
// random salt each check fails once in 370 runs).
var testSalt = visitor.Salt([]byte("logtally issue19"))

// putSalt stores s as the salt of the lines' day.
func (e *venv) putSalt(s visitor.Salt) {
	e.t.Helper()
	start, end := visitor.Day.Bounds(e.ts.Unix())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := e.db.Collection(salts.Collection).InsertOne(ctx, bson.D{{Key: "_id", Value: visitor.Day.ID(start)},
		{Key: "salt", Value: bson.Binary{Data: s[:]}}, {Key: "expires", Value: bson.NewDateTimeFromTime(time.Unix(end, 0).Add(salts.DefaultGrace))}})
	if err != nil {
		e.t.Fatal(err)
	}
}

// checkSanity checks the generator: the people's user agents are people
// and the bots' are not (else the test would test nothing).
func checkSanity(t *testing.T) {
	t.Helper()
	for _, ua := range visitorUAs {
		if c := bucketcheck.Class(ua); c != botclass.Person {
			t.Fatalf("test user agent %q is %v, want people", ua, c)
		}
	}
	for _, ua := range visitorBotUAs {
		if c := bucketcheck.Class(ua); c == botclass.Person {
			t.Fatalf("test bot %q is people", ua)
		}
	}
}

// TestVisitorsAccuracyThreeHosts: N distinct visitors, split with overlap
// over three hosts (A 0..0.6N, B 0.3N..0.9N, C 0.5N..N, each visitor's
// lines repeated, bots among them), counted by three real daemons into one
// database: the stored registers equal, one by one, the sketch of the
// three hosts' files, and the estimate lies within 3 standard errors of
// N (the salt is fixed, so the estimates are the same every run). 1k,
// 10k, 100k and 1M visitors (LOGTALLY_VISITORS_1M=0 leaves 1M out). The
// privacy search runs on the 10k case.
func TestVisitorsAccuracyThreeHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	checkSanity(t)
	// 1M visitors take about 35 s here (2M lines, 350 MB of logs);
	// LOGTALLY_VISITORS_1M=0 leaves them out.
	sizes := []int{1000, 10000, 100000, 1000000}
	if os.Getenv("LOGTALLY_VISITORS_1M") == "0" {
		sizes = sizes[:3]
	}
	srv := mongotest.Start(t)
	for _, n := range sizes {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			rep := 2
			if n >= 1000000 {
				rep = 1
			}
			e := newVenv(t, srv, "web-a", "web-b", "web-c")
			e.putSalt(testSalt)
			ranges := [][2]int{{0, n * 6 / 10}, {n * 3 / 10, n * 9 / 10}, {n * 5 / 10, n}}
			for i, h := range e.hosts {
				e.appendLog(h, ranges[i][0], ranges[i][1], rep)
			}
			begun := time.Now()
			e.startAll()
			sketch := e.waitCounted(fmt.Sprintf("%d visitors on three hosts", n))
			t.Logf("%d visitors: counted and compared in %v", n, time.Since(begun).Round(time.Millisecond))
			if *e.salt() != testSalt {
				t.Fatal("the day's salt is not the one the test stored")
			}
			checkEstimate(t, fmt.Sprintf("%d visitors on three hosts", n), e.stored().Estimate(), n, 3)
			// The estimate of the files' own sketch is the same number:
			// the registers are equal.
			if got, want := e.stored().Estimate(), sketch.Estimate(); got != want {
				t.Errorf("stored estimate %.0f, files' %.0f", got, want)
			}
			doc := e.storedDoc()
			t.Logf("cost: visitors document (site-day, p=%d) %d bytes of BSON at %d visitors, %d of %d registers non-zero",
				visitor.SitePrecision, len(doc), n, sketch.NonZero(), sketch.M())
			for _, h := range e.hosts {
				h.stop(e.t, syscall.SIGTERM)
			}
			e.compareRegisters("after the daemons stopped", sketch)
			if n == 10000 {
				e.checkPrivacy(0, n)
			}
		})
	}
}

// TestVisitorsNothingTwiceNothingLost: three hosts count their visitors,
// then a replay of the same files as archives (one gzipped) leaves the
// registers unchanged, and a replay of a new archive raises them to its
// sketch; one host is killed with SIGKILL several times while lines are
// appended; one host's state dir is removed while it is stopped, and
// another's while MongoDB is away (its batch in flight never written).
// After each the registers equal, one by one, the sketch of every file
// counted, and every bucket equals the files' counts. At the end the
// privacy search finds no address and no user agent anywhere.
func TestVisitorsNothingTwiceNothingLost(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	checkSanity(t)
	const n = 6000
	e := newVenv(t, mongotest.Start(t), "web-a", "web-b", "web-c")
	a, b, c := e.hosts[0], e.hosts[1], e.hosts[2]
	e.appendLog(a, 0, n*6/10, 2)
	e.appendLog(b, n*3/10, n*9/10, 2)
	e.appendLog(c, n*5/10, n, 2)
	e.startAll()
	first := e.waitCounted("three hosts")
	// The hosts create the day's salt (random): the estimates differ per
	// run, so they are checked within 5σ (3σ would fail once in 370 runs;
	// the registers' equality with the files' is the exact check).
	checkEstimate(t, "three hosts", first.Estimate(), n, 5)
	next := n // the next new visitor

	// (a) The same files again, as archives (copies; one gzipped),
	// replayed through host A's running daemon: nothing changes.
	var archives []string
	var copied [][]byte
	for i, h := range e.hosts {
		data, err := os.ReadFile(h.log)
		if err != nil {
			t.Fatal(err)
		}
		copied = append(copied, data)
		name := filepath.Join(e.dir, "archive", fmt.Sprintf("%s.log.%d", h.name, i+1))
		if i == 1 {
			name += ".gz"
			var z bytes.Buffer
			w := gzip.NewWriter(&z)
			w.Write(data)
			w.Close()
			data = z.Bytes()
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		archives = append(archives, name)
	}
	// Beside host A's daemon, the copies of B's and C's files (MongoDB's
	// ledger knows them); a copy of a file A follows is refused there, so
	// then A is stopped and all three are replayed from its state dir.
	// Once B's and C's counts of them are acknowledged: the buckets can
	// hold them before (the ledger's marks follow the bucket updates), and
	// a copy replayed while its host's counts are in flight is counted by
	// both (docs/architecture.md, Known limits).
	waitAcknowledged(t, e.db, copied[1:])
	e.replay(a, archives[1:]...)
	e.waitCounted("B's and C's files replayed as archives beside A's daemon")
	e.compareRegisters("B's and C's files replayed as archives beside A's daemon", first)
	a.stop(e.t, syscall.SIGTERM)
	e.replay(a, archives...)
	a.start(e.t)
	e.waitCounted("the three files replayed as archives with A stopped")
	e.compareRegisters("the three files replayed as archives with A stopped", first)

	// A new archive (visitors no host read) replayed: the registers rise
	// to the sketch of every file, its own included.
	fresh := appendVisitorLines(nil, next, next+1500, 2, e.ts)
	next += 1500
	arch := filepath.Join(e.dir, "archive", "old-host.log.1.gz")
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(fresh)
	zw.Close()
	os.WriteFile(arch, z.Bytes(), 0o644)
	truth := filepath.Join(e.dir, "truth", "old-host.log.1")
	os.WriteFile(truth, fresh, 0o644)
	e.extra = append(e.extra, truth)
	e.replay(a, arch)
	if s := e.waitCounted("a new archive replayed"); sameSketch(s, first) {
		t.Fatal("the new archive's visitors left the files' sketch unchanged: the test tests nothing")
	}
	// And again: nothing changes.
	e.replay(a, arch)
	e.waitCounted("the new archive replayed again")

	// (b) Host A is killed with SIGKILL at random moments while new
	// visitors' lines (and old ones') are appended to its log.
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 19))
	ctx, stopWriting := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var wrote int
	wrng := rand.New(rand.NewPCG(seed, 20)) // the writer's own
	wg.Add(1)
	go func() {
		defer wg.Done()
		for from := next; ctx.Err() == nil; from += 40 {
			f, err := os.OpenFile(a.log, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Error(err)
				return
			}
			f.Write(appendVisitorLines(nil, from, from+40, 1, e.ts))
			old := wrng.IntN(n)
			f.Write(appendVisitorLines(nil, old, old+20, 1, e.ts)) // visitors seen before
			f.Close()
			wrote = from + 40
			time.Sleep(15 * time.Millisecond) // the writer's pace: time is the point
		}
	}()
	const kills = 5
	for range kills {
		a.stop(e.t, syscall.SIGKILL)
		time.Sleep(time.Duration(100+rng.IntN(400)) * time.Millisecond) // down for a random while: time is the point
		a.start(e.t)
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond) // a random moment to kill at: time is the point
	}
	stopWriting()
	wg.Wait()
	next = wrote
	e.waitCounted(fmt.Sprintf("host A killed %d times while lines were appended", kills))

	// (c) Host B's state dir is removed while it is stopped; lines are
	// appended meanwhile. It rebuilds from MongoDB's progress record.
	b.stop(e.t, syscall.SIGTERM)
	e.appendLog(b, next, next+800, 2)
	next += 800
	if err := os.RemoveAll(b.state); err != nil {
		t.Fatal(err)
	}
	b.start(e.t)
	e.waitCounted("host B's state dir removed while it was stopped")

	// Host C reads new lines while MongoDB is away (committed to its
	// buffer, its batch sealed and never written), is killed, loses its
	// state dir, and starts again once MongoDB is back: the rebuild
	// re-reads the batch in flight, whose visitors were never sent.
	e.srv.Stop()
	e.appendLog(c, next, next+700, 2)
	next += 700
	waitStatus(t, c.addr, "host C's new lines read, committed and sealed", fileText(c.out), func(r observe.StatusReport) bool {
		return r.InFlight != nil && r.Sources[0].LagBytes == 0
	})
	c.stop(e.t, syscall.SIGKILL)
	// C's buffer holds the registers it read while MongoDB was away, not
	// sent: the rebuild must not lose them.
	rises := bufferRises(t, c.state)
	if len(rises) == 0 {
		t.Fatal("host C's buffer holds no unsent register after it read lines while MongoDB was away: the case is not tested")
	}
	t.Logf("cost: the flush C owed after 700 new visitors read while MongoDB was away: %d registers, %d bytes of update statement",
		len(rises[0].Regs), flushBytes(rises[0].Start, rises[0].Regs))
	if err := os.RemoveAll(c.state); err != nil {
		t.Fatal(err)
	}
	e.srv.Resume()
	e.appendLog(c, next, next+300, 2)
	next += 300
	c.start(e.t)
	e.waitCounted("host C's state dir removed after a batch read while MongoDB was away")

	// Host C is killed in the middle of a flush (its batch recorded in
	// flight, its minute buckets written, its registers not yet sent) and
	// loses its state dir: the rebuild re-reads that batch's lines, whose
	// registers only it can send. The kill is retried until it lands there.
	landed := false
	for attempt := 1; attempt <= 8 && !landed; attempt++ {
		before := minuteTotal(t, e.db)
		e.appendLog(c, next, next+2000, 1)
		next += 2000
		deadline := time.Now().Add(60 * time.Second)
		for minuteTotal(t, e.db) == before && time.Now().Before(deadline) {
			// No sleep: the kill must come right after the minute pass.
		}
		c.stop(e.t, syscall.SIGKILL)
		acked := progressAcked(t, e.db, c.name)
		rises := bufferRises(t, c.state)
		t.Logf("mid-flush kill %d: batch acknowledged %v, %d periods of unsent registers", attempt, acked, len(rises))
		if landed = !acked && len(rises) > 0; !landed {
			c.start(e.t)
			e.waitCounted(fmt.Sprintf("host C restarted after kill %d", attempt))
		}
	}
	if !landed {
		t.Fatal("no kill landed between a batch's record and its registers' write in 8 attempts: the rebuild of a batch in flight is not tested")
	}
	if err := os.RemoveAll(c.state); err != nil {
		t.Fatal(err)
	}
	c.start(e.t)
	final := e.waitCounted("host C's state dir removed after a kill in the middle of a flush")
	checkEstimate(t, "at the end", final.Estimate(), next, 5)

	for _, h := range e.hosts {
		h.stop(e.t, syscall.SIGTERM)
	}
	e.compareRegisters("after the daemons stopped", final)
	e.checkPrivacy(0, next)
}

// replay runs logtally replay of files with h's config (-site, -format)
// and fails the test unless it exits 0; its output joins e.outputs.
func (e *venv) replay(h *vhost, files ...string) {
	e.t.Helper()
	args := append([]string{"replay", "-config", h.conf, "-site", visitorSite, "-format", "combined", "-log-level", "debug"}, files...)
	stdout, stderr, code := runCmd(e.t, args...)
	out := filepath.Join(e.dir, "out", fmt.Sprintf("replay-%d.log", len(e.outputs)))
	os.WriteFile(out, []byte(stdout+stderr), 0o644)
	e.outputs = append(e.outputs, out)
	if code != 0 {
		e.t.Fatalf("replay %v: exit %d\n%s\n%s", files, code, stdout, stderr)
	}
}

// privacyRe matches anything that looks like a test address or carries a
// test user agent's marker.
var privacyRe = regexp.MustCompile(`198\.1[89]\.\d+\.\d+|2001:db8:7e57:[0-9a-f:]*|(?i)VisitorMarker|BotMarker|Firefox/128|Chrome/126|Googlebot|curl/8`)

// checkPrivacy searches every document of every collection of the
// database (as extended JSON), every file of every state dir (buffer.db
// and the rest, raw bytes) and every daemon's and replay's output for the
// addresses and user agents of visitors from..to-1 and of the bots: as
// text (each address and user agent, and the test prefixes and markers),
// and in the state files also as binary (16-byte IPv6 addresses, the user
// agents' 8-byte digests in both byte orders). Nothing may be found.
func (e *venv) checkPrivacy(from, to int) {
	e.t.Helper()
	texts := map[string]bool{}
	bins := map[string]string{} // binary form -> what it is
	for i := from; i < to; i++ {
		addr, _ := visitorOf(i)
		texts[addr] = true
		if ip, err := netip.ParseAddr(addr); err == nil && ip.Is6() {
			b := ip.As16()
			bins[string(b[:])] = addr
		}
	}
	for _, ua := range append(append([]string{}, visitorUAs...), visitorBotUAs...) {
		texts[ua] = true
		d := visitor.UADigest([]byte(ua))
		bins[string(binary.BigEndian.AppendUint64(nil, d))] = "digest of " + ua
		bins[string(binary.LittleEndian.AppendUint64(nil, d))] = "digest of " + ua
	}
	found := 0
	report := func(where, what string) {
		found++
		if found <= 20 {
			e.t.Errorf("privacy: %s holds %q", where, what)
		}
	}
	searchText := func(where string, data []byte) {
		for _, m := range privacyRe.FindAllIndex(data, -1) {
			report(where, string(data[max(0, m[0]-40):min(len(data), m[1]+40)]))
		}
		// Every address and user agent verbatim, as its own token.
		for _, tok := range bytes.FieldsFunc(data, func(r rune) bool { return strings.ContainsRune(" \t\n\r\"',;[]{}()=", r) }) {
			if texts[string(tok)] {
				report(where, string(tok))
			}
		}
		for _, ua := range append(append([]string{}, visitorUAs...), visitorBotUAs...) {
			if bytes.Contains(data, []byte(ua)) {
				report(where, ua)
			}
		}
	}
	searchBinary := func(where string, data []byte) {
		for _, w := range []int{8, 16} {
			for i := 0; i+w <= len(data); i++ {
				if what, ok := bins[string(data[i:i+w])]; ok {
					report(where+" (binary, offset "+strconv.Itoa(i)+")", what)
				}
			}
		}
	}

	// (a) The database: every document of every collection.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	names, err := e.db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		e.t.Fatal(err)
	}
	docs, dbBytes := 0, 0
	for _, name := range names {
		cur, err := e.db.Collection(name).Find(ctx, bson.D{})
		if err != nil {
			e.t.Fatalf("dump %s: %v", name, err)
		}
		var dump bytes.Buffer
		for cur.Next(ctx) {
			j, err := bson.MarshalExtJSON(cur.Current, false, false)
			if err != nil {
				e.t.Fatalf("dump %s: %v", name, err)
			}
			dump.Write(j)
			dump.WriteByte('\n')
			docs++
		}
		if err := cur.Err(); err != nil {
			e.t.Fatalf("dump %s: %v", name, err)
		}
		cur.Close(ctx)
		dbBytes += dump.Len()
		searchText("collection "+name, dump.Bytes())
	}
	// (b) Every file of every state dir, buffer.db first among them.
	stateFiles, stateBytes := 0, 0
	for _, h := range e.hosts {
		filepath.WalkDir(h.state, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Type()&os.ModeSocket != 0 {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				e.t.Errorf("read %s: %v", p, err)
				return nil
			}
			stateFiles++
			stateBytes += len(data)
			searchText(p, data)
			searchBinary(p, data)
			return nil
		})
		if _, err := os.Stat(filepath.Join(h.state, "buffer.db")); err != nil {
			e.t.Errorf("no buffer.db in %s: %v", h.state, err)
		}
	}
	// (c) Every daemon's and replay's output.
	outBytes := 0
	outputs := e.outputs
	for _, h := range e.hosts {
		outputs = append(outputs, h.outputs...)
	}
	for _, p := range outputs {
		data, err := os.ReadFile(p)
		if err != nil {
			e.t.Fatal(err)
		}
		outBytes += len(data)
		searchText(p, data)
	}
	e.t.Logf("privacy: searched %d documents of %d collections (%d bytes of extended JSON), %d state files (%d bytes), %d outputs (%d bytes) for %d addresses and %d user agents: %d found",
		docs, len(names), dbBytes, stateFiles, stateBytes, len(outputs), outBytes, len(texts)-len(visitorUAs)-len(visitorBotUAs), len(visitorUAs)+len(visitorBotUAs), found)
	if docs == 0 || stateBytes == 0 || outBytes == 0 {
		e.t.Errorf("privacy: nothing to search in (documents %d, state bytes %d, output bytes %d)", docs, stateBytes, outBytes)
	}
}

// bufferRises returns the registers the buffer of a stopped host holds
// and has not sent (buffer.VisitorRises).
func bufferRises(t *testing.T, state string) []buffer.VisitorRise {
	t.Helper()
	b := testenv.OpenBuffer(t, filepath.Join(state, "buffer.db"), buffer.Options{})
	defer b.Close()
	var rises []buffer.VisitorRise
	err := b.View(func(tx *buffer.ReadTx) (err error) { rises, err = tx.VisitorRises(); return err })
	if err != nil {
		t.Fatal(err)
	}
	return rises
}

// flushBytes returns the BSON size of the update statement a flush sends
// for regs of the site's visitors document of the period starting at
// start, built as the flusher builds it (filter and $max; the command's
// envelope, a few dozen bytes per bulk write, is not counted).
func flushBytes(start int64, regs []buffer.Register) int {
	mx := make(bson.D, len(regs))
	for j, g := range regs {
		mx[j] = bson.E{Key: bucket.RegisterPath(int(g.I)), Value: int32(g.R)}
	}
	b, err := bson.Marshal(bson.D{
		{Key: "q", Value: bucket.VisitorKey(visitor.Day, start, visitorSite, "")},
		{Key: "u", Value: bson.D{{Key: "$max", Value: mx}}},
	})
	if err != nil {
		panic(err)
	}
	return len(b)
}

// TestVisitorsFlushCost measures what the visitors cost MongoDB per
// flush: a day of 1,000 and of 100,000 distinct visitors (the test's
// addresses and browsers, keyed with the test salt), arriving at uniform
// random times, flushed every flush.interval (10 s, the default): per
// flush, the registers that rose since the last one (what the buffer's
// VisitorRises returns) as the update statement the flusher sends. It
// checks that the registers sent over the day make up the day's sketch
// (nothing lost between flushes) and that no flush sends more registers
// than the sketch has, and logs the figures.
func TestVisitorsFlushCost(t *testing.T) {
	const day, interval = 86400, 10
	start, _ := visitor.Day.Bounds(clock.Real{}.Now().Unix())
	for _, n := range []int{1000, 100000} {
		rng := rand.New(rand.NewPCG(uint64(n), 19))
		arrivals := make([][]int, day/interval) // flush -> visitors arriving in its interval
		for i := range n {
			f := rng.IntN(day) / interval
			arrivals[f] = append(arrivals[f], i)
		}
		sk := visitor.NewSketch(visitor.SitePrecision)
		sent := make([]uint8, sk.M())
		merged := visitor.NewSketch(visitor.SitePrecision)
		var flushes, total, most, regs int
		for _, vs := range arrivals {
			for _, i := range vs {
				addr, ua := visitorOf(i)
				sk.Add(visitor.KeyOf(&testSalt, []byte(visitorSite), []byte(addr), visitor.UADigest([]byte(ua))))
			}
			var rs []buffer.Register
			sk.Risen(sent, func(i int, r uint8) { rs = append(rs, buffer.Register{I: uint32(i), R: r}) })
			if len(rs) == 0 {
				continue // no visitor write in this flush
			}
			for _, g := range rs {
				sent[g.I] = g.R
				merged.SetMax(int(g.I), g.R)
			}
			b := flushBytes(start, rs)
			flushes++
			total += b
			regs += len(rs)
			most = max(most, b)
		}
		if !sameSketch(sk, merged) {
			t.Errorf("%d visitors: the registers sent over the day differ from the day's sketch", n)
		}
		if regs < sk.NonZero() {
			t.Errorf("%d visitors: %d registers sent, the sketch has %d non-zero", n, regs, sk.NonZero())
		}
		var all []buffer.Register
		sk.Risen(nil, func(i int, r uint8) { all = append(all, buffer.Register{I: uint32(i), R: r}) })
		t.Logf("cost: %d visitors a day, flush every %ds: %d of %d flushes send registers, %.1f registers and %.0f bytes per such flush on average (%.1f bytes per flush over all %d), largest %d bytes, %d bytes a day (%d register writes); one flush of the whole day's registers (a catch-up): %d registers, %d bytes; estimate %.0f",
			n, interval, flushes, len(arrivals), float64(regs)/float64(max(flushes, 1)), float64(total)/float64(max(flushes, 1)), float64(total)/float64(len(arrivals)), len(arrivals), most, total, regs, len(all), flushBytes(start, all), sk.Estimate())
	}
}

// progressAcked reports whether instance's progress record says its last
// batch was acknowledged.
func progressAcked(t *testing.T, db *mongo.Database, instance string) bool {
	t.Helper()
	var rec struct {
		Acked bool `bson:"acked"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.Collection(record.DefaultCollection).FindOne(ctx, bson.D{{Key: "_id", Value: instance}}).Decode(&rec); err != nil {
		t.Fatalf("progress record of %s: %v", instance, err)
	}
	return rec.Acked
}
