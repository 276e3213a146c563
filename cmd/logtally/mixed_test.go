package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/observe"
)

// The mixed fleet (issue 32, target 5): documents written by the version
// before tails are read correctly beside this version's, and old and new
// hosts writing one site, one of them upgraded with a batch in flight,
// stay exact.
//
// An old host is this test binary run with LOGTALLY_TEST_SEAL_LAYOUT=pages
// (buffer.SealLayoutEnv): every batch it seals is stamped LayoutPages, and
// the flusher writes such a batch as the version before tails did, every
// page to its own buckets, through the passes minute, daily, monthly and
// sites, reading and writing no plan (TestOldLayoutBatchStaysOld shows
// the passes). The buffer file it leaves holds its batch in flight
// without a layout stamp, as the older version's file does. Where it
// differs from that version is its preallocator: it inserts the next
// period's plan of the sites it saw active and preallocates the pages that
// plan names hot, where the older one inserted no plan and preallocated
// the pages it saw reach preallocate_min_hits. Neither matters to the
// counts, and here neither happens: the lines are of a past hour, and the
// activity the preallocator goes by counts the current hour's, day's and
// month's hits only, so no host preallocates anything or plans ahead. In
// general, preallocation inserts zero-filled buckets only (duplicates
// ignored, never overwriting) and a plan, whoever inserts it, is fixed
// before its period's first tails write and only decides where batches
// of the tails layout put a page's counts; the readers add a page's
// bucket and its tail entries whatever made them.
//
// Each test fails if a reader ignored the page buckets or the tails: the
// page /cold is counted by old hosts into its own buckets and by new ones
// into the site's tails in the same minutes, /hot into its own buckets by
// every host. Checked by breaking the readers for a run, then restoring
// them. Tails ignored (query's each in query/read.go, verify's
// readMarkers in verify/tails.go and bucketcheck.Read skipping them):
// both tests failed in all three (CompareAll lost 225 of 950 hits at
// each level, query's /cold 8 of 18 a day, verify exit 1 with 1,434
// counters below the files). Page buckets ignored (query's each,
// verify's compareLevel and bucketcheck.Read skipping them): both failed
// in all three (query's /hot 0 of 399, /cold 10 of 18). And the upgrade:
// flusher's layoutOf writing a batch stamped LayoutPages in the tails
// layout in a new host made TestMixedFleetUpgrade fail (8 minute hits
// duplicated, the cold pages written before the cut; query's /cold one
// over at two minutes; verify exit 1).

const (
	mixedSite = "mixed.test"
	// mixedMinHits is [buckets] preallocate_min_hits: a page with this
	// many hits in the first batch of the tails layout that writes a
	// period is hot in it (the lines are of a past hour, so no host has
	// seen the period before: a plan is proposed from the batch's own
	// hits). /hot gets about 40% of a batch's lines, /cold fewer than
	// this in every batch that can propose a plan.
	mixedMinHits = 8
	// mixedTail is the long tail: pages /t/00 to /t/19, rarely hit.
	mixedTail = 20
	// mixedSpan is the seconds the lines are spread over.
	mixedSpan = 600
)

// mixedBase is the lines' first second: one hour, one day and one month,
// so each level has one plan, whose hot pages the first new batch
// decides.
var mixedBase = time.Date(2026, 3, 10, 14, 20, 0, 0, time.UTC)

// Layouts as environments: an old host seals LayoutPages; a new one
// CurrentLayout, whatever the test binary's own environment says.
var (
	oldHostEnv = []string{buffer.SealLayoutEnv + "=pages"}
	newHostEnv = []string{buffer.SealLayoutEnv + "="}
)

// mixedHost is one host of the mixed fleet: its daemon (serving /status),
// log and state dir.
type mixedHost struct {
	host
	log, state string
	rng        *rand.Rand
	n          int   // lines written
	writer     int64 // its writer number, once read from /status
}

// newMixedHost makes host name under dir (its log, state dir and config:
// the site mixedSite, preallocate_min_hits mixedMinHits, no visitors,
// /status served), old or new, with overrides.
func newMixedHost(t *testing.T, dir, uri, db, name string, old bool, seed uint64, overrides ...func(*config.Config)) *mixedHost {
	t.Helper()
	hdir := filepath.Join(dir, name)
	os.MkdirAll(hdir, 0o755)
	addr := testenv.FreeAddr(t)
	h := &mixedHost{log: filepath.Join(hdir, "access.log"), state: filepath.Join(hdir, "state"), rng: rand.New(rand.NewPCG(seed, 7))}
	settings := func(c *config.Config) {
		c.Buckets.PreallocateMinHits = mixedMinHits
		c.Visitors.Enabled = false // not the point: fewer documents
	}
	h.host = host{name: name, outDir: hdir, addr: addr, env: newHostEnv,
		conf: fastConfig(t, hdir, uri, db, mixedSite, h.log, append([]func(*config.Config){instance(name), listen(addr), settings}, overrides...)...)}
	if old {
		h.env = oldHostEnv
	}
	return h
}

// write appends lines combined lines of mixedSite to h's log, within
// mixedSpan seconds of mixedBase: cold of them of /cold, the others of /hot
// (40%), / (15%) or a page of the long tail, with every status class,
// sizes and the user agents of loggen.Agents (people and bots), so that
// every measure but the response times counts.
func (h *mixedHost) write(t *testing.T, lines, cold int) {
	t.Helper()
	statuses := []int{200, 200, 304, 404, 500, 200, 301}
	var b []byte
	for i := range lines {
		h.n++
		page := "/cold"
		if i >= cold {
			switch r := h.rng.IntN(100); {
			case r < 40:
				page = "/hot"
			case r < 55:
				page = "/"
			default:
				page = fmt.Sprintf("/t/%02d", h.rng.IntN(mixedTail))
			}
		}
		ts := mixedBase.Add(time.Duration(h.rng.IntN(mixedSpan)) * time.Second)
		b = fmt.Appendf(b, "10.9.%d.%d - - [%s] \"GET %s?n=%d HTTP/1.1\" %d %d \"-\" \"%s\"\n",
			h.n/250%250, h.n%250, ts.Format("02/Jan/2006:15:04:05 -0700"), page, h.n,
			statuses[h.rng.IntN(len(statuses))], 100+h.rng.IntN(900), loggen.Agents[h.rng.IntN(len(loggen.Agents))].UA)
	}
	f, err := os.OpenFile(h.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// status waits until h's /status satisfies cond, and returns it.
func (h *mixedHost) status(t *testing.T, what string, cond func(observe.StatusReport) bool) observe.StatusReport {
	t.Helper()
	return waitStatus(t, h.addr, h.name+": "+what, fileText(h.out), cond)
}

// mixedCounts is the files' count of every host's log.
func mixedCounts(t *testing.T, hosts []*mixedHost) bucketcheck.Counts {
	t.Helper()
	var want bucketcheck.Counts
	for i, h := range hosts {
		c := bucketcheck.CountFiles(t, h.log, mixedSite)
		if i == 0 {
			want = c
		} else {
			want.Merge(c)
		}
	}
	return want
}

// mixedSettle waits until MongoDB holds every line of the hosts' logs and
// each running host has settled (everything it read acknowledged: a
// double count would show now), and returns the files' count.
func mixedSettle(t *testing.T, db *mongo.Database, hosts []*mixedHost) bucketcheck.Counts {
	t.Helper()
	want := mixedCounts(t, hosts)
	var outs []string
	for _, h := range hosts {
		outs = append(outs, h.out)
	}
	waitHits(t, db, want.Hits, stringer(func() string { return "daemon outputs: " + strings.Join(outs, ", ") }))
	for _, h := range hosts {
		if h.cmd != nil {
			rep := h.status(t, "settled (everything read acknowledged)", func(r observe.StatusReport) bool { return r.Settled() })
			h.writer = rep.Writer
		}
	}
	return want
}

// levelDocs reads every document of level l's collection.
func levelDocs(t *testing.T, db *mongo.Database, l bucket.Level) []bson.Raw {
	t.Helper()
	var names bucket.Collections
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cur, err := db.Collection(names.Name(l)).Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var raws []bson.Raw
	if err := cur.All(ctx, &raws); err != nil {
		t.Fatal(err)
	}
	return raws
}

// docPage is the page field of an l document: a page, or a marker.
func docPage(l bucket.Level, raw bson.Raw) string {
	v, _ := raw.LookupErr(strings.Split(l.PageField(), ".")...)
	p, _ := v.StringValueOK()
	return p
}

// levelWriters returns the writers (applied.<n>) of level l's page
// buckets, by page, and of its tails.
func levelWriters(t *testing.T, db *mongo.Database, l bucket.Level) (pages map[string]map[string]bool, tails map[string]bool) {
	t.Helper()
	pages, tails = map[string]map[string]bool{}, map[string]bool{}
	for _, raw := range levelDocs(t, db, l) {
		page := docPage(l, raw)
		ws := tails
		if _, tail := bucket.TailShard(page); !tail {
			if bucket.IsMarker(page) {
				continue // a plan
			}
			if pages[page] == nil {
				pages[page] = map[string]bool{}
			}
			ws = pages[page]
		}
		applied, err := raw.LookupErr(bucket.FieldApplied)
		if err != nil {
			continue
		}
		elems, err := applied.Document().Elements()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range elems {
			ws[e.Key()] = true
		}
	}
	return pages, tails
}

// levelPlans returns level l's plans.
func levelPlans(t *testing.T, db *mongo.Database, l bucket.Level) []bucket.Plan {
	t.Helper()
	var plans []bucket.Plan
	for _, raw := range levelDocs(t, db, l) {
		if docPage(l, raw) == bucket.PlanPage {
			p, err := l.DecodePlan(raw)
			if err != nil {
				t.Fatal(err)
			}
			plans = append(plans, p)
		}
	}
	return plans
}

// checkPlans fails the test unless level l has plans, /hot is hot in
// each and /cold in none: the premise of the checks on where each page's
// counts are.
func checkPlans(t *testing.T, db *mongo.Database, l bucket.Level) {
	t.Helper()
	plans := levelPlans(t, db, l)
	if len(plans) == 0 {
		t.Fatalf("no %s plan: no batch of the tails layout wrote", l)
	}
	for _, p := range plans {
		if !p.IsHot("/hot") || p.IsHot("/cold") {
			t.Fatalf("the %s plan of %s names hot %q: want /hot and not /cold (the first new batch held fewer than %d hits of /hot?)",
				l, time.Unix(p.Start, 0).UTC(), p.Hot, mixedMinHits)
		}
	}
}

// tailedPage reports whether got holds entries of page in level l's tails.
func tailedPage(got bucketcheck.Counts, l bucket.Level, page string) bool {
	for id := range got.Tailed[l] {
		if strings.HasSuffix(id, "/"+mixedSite+page) {
			return true
		}
	}
	return false
}

// mixedRange is the range of the lines at step: the span of their
// minutes, or the hour, day or month that holds them.
func mixedRange(step string) (from, to time.Time) {
	switch step {
	case "minute":
		return mixedBase, mixedBase.Add(mixedSpan * time.Second)
	case "hour":
		from = mixedBase.Truncate(time.Hour)
		return from, from.Add(time.Hour)
	case "day":
		from = mixedBase.Truncate(24 * time.Hour)
		return from, from.AddDate(0, 0, 1)
	}
	from = time.Date(mixedBase.Year(), mixedBase.Month(), 1, 0, 0, 0, 0, time.UTC)
	return from, from.AddDate(0, 1, 0)
}

// checkQuery runs logtally query with conf at every step over the lines'
// range, for page alone (-page) or, with page "", every page of the site,
// and compares every point of pages with the files' count.
func checkQuery(t *testing.T, conf string, want bucketcheck.Counts, page string, pages []string) {
	t.Helper()
	for _, step := range []string{"minute", "hour", "day", "month"} {
		from, to := mixedRange(step)
		args := []string{"query", "-config", conf, "-site", mixedSite, "-step", step, "-format", "csv",
			"-from", from.Format(time.RFC3339), "-to", to.Format(time.RFC3339)}
		if page != "" {
			args = append(args, "-page", page)
		}
		out, stderr, code := runCmd(t, args...)
		if code != 0 {
			t.Errorf("query %v: exit %d: %s", args[1:], code, stderr)
			continue
		}
		got, _ := parseCSV(t, out)
		starts := stepStarts(step, from, to)
		for _, ts := range starts {
			for _, p := range pages {
				k := point{ts.Format(time.RFC3339), p}
				if g, w := got[k], expectedOf(want, mixedSite, step, ts, p); g != w {
					t.Errorf("query -step %s: %s %s: %d, the files %d", step, k.time, p, g, w)
				}
			}
		}
		if len(got) != len(starts)*len(pages) {
			t.Errorf("query -step %s (page %q): %d points, want %d steps x %d pages", step, page, len(got), len(starts), len(pages))
		}
	}
}

// checkVerify runs logtally verify -all-hosts with conf over every host's
// log: exact, with the files' hits.
func checkVerify(t *testing.T, conf string, hosts []*mixedHost, want bucketcheck.Counts) {
	t.Helper()
	args := []string{"-config", conf, "-all-hosts"}
	for _, h := range hosts {
		args = append(args, h.log)
	}
	out, _, code := verifyRun(t, args...)
	if code != 0 {
		t.Errorf("verify over every host's log: exit %d, want 0 (exact)", code)
	} else if hits, _ := exactLine(t, out); int64(hits) != want.Hits {
		t.Errorf("verify: exact with %d hits, the files hold %d", hits, want.Hits)
	}
}

// resumePage matches a resume point within a level pass (flusher.Resume's
// String), the page its next chunk starts at in the second group.
var resumePage = regexp.MustCompile(`^(minute|daily|monthly) pass, from site "[^"]*" page "([^"]*)"`)

// pastCold reports whether resume is a point within a level pass past
// /cold's buckets in the buffer's key order (length-prefixed: /, /hot,
// /cold, /t/00, ...): the pass has written /cold's counts to its own
// buckets (the pages layout), and not yet every page's. Were the rest of
// the batch written in the tails layout, its tail pass would write
// /cold's counts of this level again.
func pastCold(resume string) bool {
	m := resumePage.FindStringSubmatch(resume)
	if m == nil {
		return false
	}
	key := func(page string) []byte { return buffer.AppendKey(nil, []byte(mixedSite), []byte(page), 0) }
	return bytes.Compare(key(m[2]), key("/cold")) > 0
}

// TestMixedFleetUpgrade: two old hosts (the version before tails: every
// page to its own buckets) and two new ones write the same site, the same
// pages and minutes, at once: a hot page (/hot, enough hits to be hot in
// every plan), a cold one (/cold, never), and a long tail. Then the
// embedded server stops in the middle of one old host's batch (its
// /status shows the batch written part way through a level pass, /cold's
// buckets of that pass written: pastCold), the
// host commits more lines, is killed and restarts as a new host on the
// same state dir: its batch in flight, stamped LayoutPages (checked in
// the buffer file), is finished in that layout once MongoDB is back, and
// the lines pending behind it go in the tails layout. Everyone writes
// more. At the end every minute, daily and monthly bucket and every site
// total equals the files' count (bucketcheck.CompareAll), logtally query
// gives the files' count of /hot and /cold at every step, and logtally
// verify over every host's log says exact. And the documents show who
// wrote what: the host that stayed old wrote no tail, the upgraded one
// tails (after) and /cold's own buckets (before), the new ones /hot's
// buckets and the tails only.
func TestMixedFleetUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("mixed fleet test skipped in -short mode")
	}
	begun := time.Now()
	srv := mongotest.Start(t)
	db := srv.Database(t)
	dir := t.TempDir()
	seed := mixedSeed(t)
	// old-1's bulk writes are of two buckets: its batch takes many
	// chunks, so that /status shows it part way through a pass.
	old1 := newMixedHost(t, dir, srv.URI(), db.Name(), "old-1", true, seed, func(c *config.Config) { c.Flush.MaxOps = 2 })
	old2 := newMixedHost(t, dir, srv.URI(), db.Name(), "old-2", true, seed+1)
	new1 := newMixedHost(t, dir, srv.URI(), db.Name(), "new-1", false, seed+2)
	new2 := newMixedHost(t, dir, srv.URI(), db.Name(), "new-2", false, seed+3)
	hosts := []*mixedHost{old1, old2, new1, new2}

	// Every host's first lines are in its log before it starts: a new
	// host's first batch holds them all, and the first new batch
	// proposes the plans (/hot hot, /cold not: 2 of its 100 lines).
	for _, h := range hosts {
		h.write(t, 100, 2)
		h.start(t)
	}
	mixedSettle(t, db, hosts)
	t.Logf("%v: the first 400 lines in MongoDB", time.Since(begun).Round(time.Millisecond))

	// old-1's batch is cut part way through a pass, past /cold: MongoDB
	// stops as soon as /status shows it there. A batch written whole
	// before a look (the machine was slow to look) is tried again with
	// more lines.
	var cut string
	for attempt := 1; cut == ""; attempt++ {
		if attempt > 3 {
			t.Fatalf("old-1's batch was never seen part way through a pass, past /cold, in %d bursts", attempt-1)
		}
		old1.write(t, 150, 2)
		ok := testenv.Until(stallLimit, func() bool {
			code, body := testenv.Get(old1.addr, "/status")
			var rep observe.StatusReport
			if code != 200 || json.Unmarshal([]byte(body), &rep) != nil {
				return false
			}
			if rep.InFlight != nil && pastCold(rep.InFlight.Resume) {
				srv.Stop()
				cut = rep.InFlight.Resume
				return true
			}
			return rep.Settled()
		})
		if !ok {
			t.Fatalf("old-1 neither wrote its burst nor showed it part way in %v; output in %s", stallLimit, old1.out)
		}
	}
	t.Logf("MongoDB stopped with old-1's batch at: %s", cut)
	// While MongoDB is away every host reads more; old-1's lines wait
	// pending behind its batch in flight.
	for _, h := range hosts {
		h.write(t, 40, 1)
	}
	old1.status(t, "the lines read while MongoDB is away committed behind the batch in flight", func(r observe.StatusReport) bool {
		lag := int64(0)
		for _, s := range r.Sources {
			lag += s.LagBytes
		}
		return lag == 0 && r.InFlight != nil && r.PendingHits > r.InFlight.Hits
	})
	old1.stop(t, syscall.SIGKILL)

	// The buffer old-1 leaves: its batch in flight stamped LayoutPages,
	// cut within a pass, and counts pending behind it.
	buf, err := buffer.OpenReadOnly(filepath.Join(old1.state, "buffer.db"), buffer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sealed *buffer.Batch
	var unacked uint64
	buf.View(func(tx *buffer.ReadTx) error {
		sealed = tx.Sealed()
		_, unacked = tx.Unacked()
		return nil
	})
	buf.Close()
	if sealed == nil || sealed.Layout != buffer.LayoutPages || !pastCold(flusher.ResumeOf(sealed).String()) || unacked <= sealed.Hits {
		t.Fatalf("old-1 left batch %+v (resume %s) and %d hits unacknowledged: want a batch of the pages layout cut within a pass past /cold, and hits pending behind it",
			sealed, flusher.ResumeOf(sealed), unacked)
	}
	t.Logf("old-1 killed with batch %s in flight (%d hits, layout pages, resume: %s) and %d hits pending behind it",
		sealed.ID, sealed.Hits, flusher.ResumeOf(sealed), unacked-sealed.Hits)

	// The upgrade: old-1 starts again as a new host, MongoDB comes back.
	old1.env = newHostEnv
	old1.start(t)
	old1.running(t)
	srv.Resume()
	mixedSettle(t, db, hosts)
	t.Logf("%v: the upgrade settled", time.Since(begun).Round(time.Millisecond))

	// Everyone writes more: old-2 still old, old-1 now new.
	for _, h := range hosts {
		h.write(t, 60, 1)
	}
	want := mixedSettle(t, db, hosts)
	for _, h := range hosts {
		h.stop(t, syscall.SIGTERM)
	}
	got := bucketcheck.Read(t, db)
	res := bucketcheck.CompareAll(t, want, got)
	t.Logf("mixed fleet: %d hits of %d pages, %d minute, %d daily, %d monthly buckets: %v",
		want.Hits, len(want.Monthly), len(want.Minute), len(want.Daily), len(want.Monthly), res)

	// Where each page's counts are, and who wrote them.
	w := func(h *mixedHost) string { return strconv.FormatInt(h.writer, 10) }
	for l := range bucket.Level(bucket.Levels) {
		checkPlans(t, db, l)
		pages, tails := levelWriters(t, db, l)
		if cold := pages["/cold"]; !maps.Equal(cold, map[string]bool{w(old1): true, w(old2): true}) {
			t.Errorf("%s: /cold's own buckets written by %v; want the old hosts' writers %s and %s only", l, slices.Sorted(maps.Keys(cold)), w(old1), w(old2))
		}
		if !tailedPage(got, l, "/cold") {
			t.Errorf("%s: no tail entry of /cold: the new hosts' counts of it are not in tails", l)
		}
		for _, h := range hosts {
			if !pages["/hot"][w(h)] {
				t.Errorf("%s: /hot's buckets hold nothing of %s (writer %s)", l, h.name, w(h))
			}
		}
		for _, h := range []*mixedHost{old1, new1, new2} {
			if !tails[w(h)] {
				t.Errorf("%s: no tail written by %s (writer %s)", l, h.name, w(h))
			}
		}
		if tails[w(old2)] {
			t.Errorf("%s: old-2, an old host all along, wrote a tail", l)
		}
	}

	checkQuery(t, new1.conf, want, "/hot", []string{"/hot"})
	checkQuery(t, new1.conf, want, "/cold", []string{"/cold"})
	checkVerify(t, new1.conf, hosts, want)
	t.Logf("%v in all", time.Since(begun).Round(time.Millisecond))
}

// TestMixedOldDatabaseThenNew: a database written by the version before
// tails alone (an old host: page buckets only, no tail, no plan) is read
// correctly after two new hosts add to it the same site's hits of the
// same minutes and pages: logtally query's count of every page at every
// step (minute, hour, day, month) equals the files', as does every bucket
// and site total (bucketcheck.CompareAll), and logtally verify says exact.
func TestMixedOldDatabaseThenNew(t *testing.T) {
	if testing.Short() {
		t.Skip("mixed fleet test skipped in -short mode")
	}
	begun := time.Now()
	srv := mongotest.Start(t)
	db := srv.Database(t)
	dir := t.TempDir()
	seed := mixedSeed(t)
	old := newMixedHost(t, dir, srv.URI(), db.Name(), "old", true, seed)
	old.write(t, 200, 6)
	old.start(t)
	mixedSettle(t, db, []*mixedHost{old})
	old.stop(t, syscall.SIGTERM)
	for l := range bucket.Level(bucket.Levels) {
		for _, raw := range levelDocs(t, db, l) {
			if p := docPage(l, raw); bucket.IsMarker(p) {
				t.Fatalf("the old host wrote a %s document of marker %q: not the version before tails", l, p)
			}
		}
	}

	new1 := newMixedHost(t, dir, srv.URI(), db.Name(), "new-1", false, seed+1)
	new2 := newMixedHost(t, dir, srv.URI(), db.Name(), "new-2", false, seed+2)
	hosts := []*mixedHost{old, new1, new2}
	for _, h := range hosts[1:] {
		h.write(t, 150, 3)
		h.start(t)
	}
	want := mixedSettle(t, db, hosts)
	for _, h := range hosts[1:] {
		h.stop(t, syscall.SIGTERM)
	}
	got := bucketcheck.Read(t, db)
	res := bucketcheck.CompareAll(t, want, got)
	t.Logf("old database, then new hosts: %d hits of %d pages: %v", want.Hits, len(want.Monthly), res)
	for l := range bucket.Level(bucket.Levels) {
		checkPlans(t, db, l)
		if !tailedPage(got, l, "/cold") {
			t.Errorf("%s: no tail entry of /cold: the new hosts' counts of it are not in tails", l)
		}
	}

	var pages []string
	for id := range want.Monthly {
		_, key, _ := strings.Cut(id, "/")
		pages = append(pages, strings.TrimPrefix(key, mixedSite))
	}
	slices.Sort(pages)
	checkQuery(t, new1.conf, want, "", pages)
	checkVerify(t, new1.conf, hosts, want)
	t.Logf("%v in all", time.Since(begun).Round(time.Millisecond))
}

// mixedSeed returns the seed of a mixed-fleet test's traffic: random,
// logged, or LOGTALLY_MIXED_SEED's to replay a failure.
func mixedSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LOGTALLY_MIXED_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d", seed)
	return seed
}
