package flusher

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/bucket"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/syncbuf"
)

// preallocate runs preallocation steps, without waiting between them,
// until a step has nothing to insert.
func (e *env) preallocate(t *testing.T) {
	t.Helper()
	for i := 0; ; i++ {
		before := e.f.maint.prealloc.calls.Load()
		e.f.maint.prealloc.step(context.Background())
		if e.f.maint.prealloc.calls.Load() == before {
			return
		}
		if i > 100 {
			t.Fatal("preallocation never ends")
		}
	}
}

// statsDelta is what a flush cost.
type statsDelta struct{ BulkWrites, Updates, Finds, Inserts, InsertCalls uint64 }

func delta(a, b Stats) statsDelta {
	return statsDelta{b.BulkWrites - a.BulkWrites, b.Updates - a.Updates, b.Finds - a.Finds, b.Inserts - a.Inserts, b.InsertCalls - a.InsertCalls}
}

// Pages active before an hour boundary have their next hour's minute
// buckets created before it; the flushes after it issue no insert and no
// find, and exactly one update per touched bucket. A page with fewer than
// PreallocateMinHits hits has its minute bucket inserted whole.
func TestPreallocatedBucketsTakeOneUpdate(t *testing.T) {
	e := newEnv(t, 8)
	fake := clock.NewFake(mustTime(t, "2024-03-05T10:40:00Z"))
	e.f = e.newFlusher(t, Config{MaxOps: 8, Clock: fake, Preallocate: true, PreallocateRate: 30, PreallocateMinHits: 2})

	// Before the boundary: /, /b active (3 and 2 hits), /c once.
	e.commit(t,
		hit{"a.example", "/", "2024-03-05T10:39:10Z", 3},
		hit{"a.example", "/b", "2024-03-05T10:39:20Z", 1},
		hit{"a.example", "/b", "2024-03-05T10:39:50Z", 1},
		hit{"a.example", "/c", "2024-03-05T10:39:30Z", 1},
	)
	s0 := e.f.Stats()
	e.flush(t)
	s1 := e.f.Stats()
	before := delta(s0, s1)
	t.Logf("flush before the boundary (3 pages, 9 new buckets, 1 site total): %+v", before)
	if before.Inserts != 9+1 {
		t.Errorf("before the boundary: %+v, want 10 inserts", before)
	}

	// 10:40: before the last 15 minutes, nothing yet.
	e.preallocate(t)
	if st := e.f.Stats().Prealloc; st.Created != 0 || st.InsertCalls != 0 {
		t.Fatalf("preallocated at 10:40: %+v", st)
	}
	// 10:59:59: past any moment drawn; 2 pages x 60 minute buckets.
	fake.Advance(19*time.Minute + 59*time.Second)
	e.preallocate(t)
	pst := e.f.Stats().Prealloc
	t.Logf("preallocation before the boundary: %+v", pst)
	if pst.Created != 120 || pst.Failures != 0 || pst.Dropped != 0 || pst.InsertCalls != 4 {
		t.Errorf("preallocation %+v: want 120 buckets created in 4 calls of at most 30", pst)
	}
	for _, page := range []string{"/", "/b"} {
		for m := range 60 {
			id := "2024030511" + twoDigits(m) + "/a.example" + page
			e.want["minutes"][id] = map[string]int64{}
		}
	}
	e.check(t)

	// After the boundary: / in minutes 11:00 and 11:01, /b in 11:00.
	fake.Advance(90 * time.Second)
	e.commit(t,
		hit{"a.example", "/", "2024-03-05T11:00:05Z", 2},
		hit{"a.example", "/", "2024-03-05T11:01:10Z", 1},
		hit{"a.example", "/b", "2024-03-05T11:00:40Z", 4},
	)
	e.flush(t)
	s2 := e.f.Stats()
	after := delta(s1, s2)
	t.Logf("flush after the boundary (7 touched buckets: 3 minute, 2 daily, 2 monthly; 1 site total): %+v", after)
	if want := (statsDelta{BulkWrites: 4, Updates: 8}); after != want {
		t.Errorf("after the boundary: %+v, want %+v", after, want)
	}
	e.commit(t, hit{"a.example", "/b", "2024-03-05T11:02:00Z", 1})
	e.flush(t)
	if d := delta(s2, e.f.Stats()); d.Inserts != 0 || d.Updates != 4 {
		t.Errorf("second flush after the boundary: %+v, want 4 updates", d)
	}

	// /c had one hit: not preallocated, its minute bucket is inserted
	// whole (its daily and monthly buckets and the site total exist).
	s3 := e.f.Stats()
	e.commit(t, hit{"a.example", "/c", "2024-03-05T11:03:00Z", 1})
	e.flush(t)
	if d, want := delta(s3, e.f.Stats()), (statsDelta{BulkWrites: 3, Updates: 3, Inserts: 1, InsertCalls: 1}); d != want {
		t.Errorf("/c after the boundary: %+v, want %+v", d, want)
	}
	e.check(t)
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

// The daily and monthly buckets of the pages active today (this month)
// are created before midnight (the month's end).
func TestPreallocatesTomorrowAndNextMonth(t *testing.T) {
	e := newEnv(t, 8)
	fake := clock.NewFake(mustTime(t, "2024-02-29T23:00:30Z"))
	e.f = e.newFlusher(t, Config{MaxOps: 8, Clock: fake, Preallocate: true, PreallocateRate: 30, PreallocateMinHits: 1})
	e.commit(t, hit{"a.example", "/", "2024-02-29T23:00:10Z", 1})
	e.flush(t)
	// 23:59:59 on the month's last day: every level's window.
	fake.Advance(59*time.Minute + 29*time.Second)
	e.preallocate(t)
	if st := e.f.Stats().Prealloc; st.Created != 62 {
		t.Errorf("preallocation %+v: want 60 minute + 1 daily + 1 monthly", st)
	}
	for m := range 60 {
		e.want["minutes"]["2024030100"+twoDigits(m)+"/a.example/"] = map[string]int64{}
	}
	e.want["daily"]["20240301/a.example/"] = map[string]int64{}
	e.want["monthly"]["202403/a.example/"] = map[string]int64{}
	e.check(t)
	// Preallocating again (another host) is harmless.
	e.f.maint.prealloc.levels = [3]levelWindow{}
	e.preallocate(t)
	if st := e.f.Stats().Prealloc; st.Created != 62 || st.Existing != 62 || st.Failures != 0 {
		t.Errorf("second preallocation %+v: want 62 existing", st)
	}
}

// Preallocation that fails, or hangs, does not stop or delay the flush of
// counts; failures are logged and counted, the buckets retried until
// their period begins and then dropped.
func TestPreallocationFailuresDoNotStopFlushing(t *testing.T) {
	e := newEnv(t, 8)
	fake := clock.NewFake(mustTime(t, "2024-03-05T10:59:00Z"))
	logs := &syncbuf.Buffer{}
	// Run's own rounds never come (a year's interval): the test flushes by
	// hand, and a round of Run's sealing its counts first would race it.
	e.f = e.newFlusher(t, Config{MaxOps: 8, Clock: fake, Preallocate: true, PreallocateRate: 30, PreallocateMinHits: 1, Interval: 365 * 24 * time.Hour,
		MaxBackoff: time.Second, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	entered, release := make(chan struct{}, 1), make(chan struct{})
	hang := true
	testHooks(e.f).prealloc = func(pass, int) error {
		if hang {
			hang = false
			entered <- struct{}{}
			<-release // the server hangs
		}
		return errors.New("(NotWritablePrimary) not primary")
	}
	e.commit(t, hit{"a.example", "/", "2024-03-05T10:58:10Z", 2})
	e.flush(t)

	e.run(t)
	// Preallocation begins at a random moment late in the hour: the
	// clock moves on until it does.
	for began := false; !began; {
		select {
		case <-entered:
			began = true
		case <-time.After(10 * time.Millisecond):
			fake.Advance(time.Second)
		}
	}
	// While preallocation hangs, counts are flushed.
	e.commit(t, hit{"a.example", "/", "2024-03-05T10:59:01Z", 1})
	e.flush(t)
	close(release)
	deadline := time.Now().Add(30 * time.Second)
	for e.f.Stats().Prealloc.Failures < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("preallocation not retried:\n%s", logs)
		}
		waiters(t, fake, 2)
		fake.Advance(time.Second)
	}
	// The hour begins: what was not created is dropped.
	fake.Advance(time.Hour)
	for e.f.Stats().Prealloc.Dropped == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("nothing dropped: %+v", e.f.Stats().Prealloc)
		}
		waiters(t, fake, 2)
		fake.Advance(time.Second)
	}
	e.commit(t, hit{"a.example", "/", "2024-03-05T11:00:01Z", 1})
	e.flush(t)
	st := e.f.Stats()
	if st.Prealloc.Created != 0 || st.Batches != 3 {
		t.Errorf("stats %+v", st)
	}
	if !strings.Contains(logs.String(), "preallocation failed (counts are written meanwhile)") {
		t.Errorf("failures not logged:\n%s", logs)
	}
	e.check(t)
}

// The set of tracked pages is bounded per level and period; the period
// before is kept (plans are proposed from it), the one before that not.
func TestPreallocTrackingIsBounded(t *testing.T) {
	a := newActivity(2)
	now := mustTime(t, "2024-03-05T10:30:00Z")
	var hs []pageHits
	for _, page := range []string{"/a", "/b", "/c"} {
		hs = append(hs, pageHits{site: "s", page: page, start: now.Unix() - 60, hits: 5})
	}
	// An old minute (last hour) counts for the day and month only.
	hs = append(hs, pageHits{site: "s", page: "/a", start: now.Unix() - 3600, hits: 5})
	a.record(hs, now)
	if tr, un := a.tracked.Load(), a.untracked.Load(); tr != 6 || un != 3 {
		t.Errorf("tracked %d, untracked %d: want 2 pages tracked per level, 1 untracked per level", tr, un)
	}
	if hot, pages, ok := a.history(bucket.Minute, "s", now.Unix()+1800, 5, now.Add(time.Hour)); !ok || pages != 3 || strings.Join(hot, ",") != "/a,/b" {
		t.Errorf("the hour before 11:00: hot %v, %d pages, %v; want /a,/b of 3 pages (one not tracked)", hot, pages, ok)
	}
	// The next hour starts afresh; the hour before is kept.
	a.record([]pageHits{{site: "s", page: "/d", start: now.Unix() + 3600 - 60, hits: 1}}, now.Add(time.Hour))
	if tr, un := a.tracked.Load(), a.untracked.Load(); tr != 7 || un != 5 {
		t.Errorf("tracked %d, untracked %d: want the last hour's kept, /d tracked for the hour (the day and month are full)", tr, un)
	}
	// Two hours on, the 10:00 hour is forgotten.
	a.record(nil, now.Add(2*time.Hour))
	if _, _, ok := a.history(bucket.Minute, "s", now.Unix()+1800, 5, now.Add(2*time.Hour)); ok {
		t.Error("the 10:00 hour is still known at 12:30")
	}
}

// In the tails layout, the preallocator inserts the next hour's plan in
// its window, proposed from the hour's activity (the pages of at least
// PreallocateMinHits hits hot), and preallocates the hot pages' minute
// buckets only; the next hour's batch follows that plan without a find
// or insert of its own: the hot pages take one update per bucket, the
// cold one goes to the minute tail.
func TestPreallocatedPlanRoutesNextHour(t *testing.T) {
	e := newEnv(t, 8)
	e.tails = true
	fake := clock.NewFake(mustTime(t, "2024-03-05T10:40:00Z"))
	e.f = e.newFlusher(t, Config{MaxOps: 8, Clock: fake, Preallocate: true, PreallocateRate: 30, PreallocateMinHits: 2})
	e.commit(t,
		hit{"a.example", "/", "2024-03-05T10:39:10Z", 3},
		hit{"a.example", "/b", "2024-03-05T10:39:20Z", 2},
		hit{"a.example", "/c", "2024-03-05T10:39:30Z", 1},
	)
	e.flush(t)
	fake.Advance(19*time.Minute + 59*time.Second) // 10:59:59: past any moment drawn
	s0 := e.f.Stats()
	e.preallocate(t)
	s1 := e.f.Stats()
	if s1.Prealloc.Created != 120 || s1.PlanInserts-s0.PlanInserts != 1 {
		t.Errorf("preallocation %+v, %d plans inserted: want the 11:00 plan and 2 pages x 60 minute buckets", s1.Prealloc, s1.PlanInserts-s0.PlanInserts)
	}
	var plan bson.Raw
	err := e.db.Collection("minutes").FindOne(context.Background(), bucket.Minute.PlanFilter("a.example", mustTime(t, "2024-03-05T11:00:00Z"))).Decode(&plan)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := bucket.Minute.DecodePlan(plan); err != nil || strings.Join(p.Hot, ",") != "/,/b" {
		t.Fatalf("the 11:00 plan: %+v, %v; want / and /b hot", p, err)
	}
	fake.Advance(90 * time.Second)
	e.commit(t,
		hit{"a.example", "/", "2024-03-05T11:00:05Z", 2},
		hit{"a.example", "/b", "2024-03-05T11:00:40Z", 4},
		hit{"a.example", "/c", "2024-03-05T11:01:00Z", 1},
	)
	e.flush(t)
	s2 := e.f.Stats()
	d := delta(s1, s2)
	t.Logf("the batch after the boundary: %+v, plans found %d, inserted %d", d, s2.PlanFinds-s1.PlanFinds, s2.PlanInserts-s1.PlanInserts)
	if d.Inserts != 1 || d.Finds != 0 || s2.PlanFinds != s1.PlanFinds || s2.PlanInserts != s1.PlanInserts {
		t.Errorf("after the boundary: %+v, plans found %d, inserted %d; want one insert (the new minute's tail), no find", d, s2.PlanFinds-s1.PlanFinds, s2.PlanInserts-s1.PlanInserts)
	}
	for _, page := range []string{"/", "/b"} {
		for m := range 60 {
			id := "2024030511" + twoDigits(m) + "/a.example" + page
			if e.want["minutes"][id] == nil {
				e.want["minutes"][id] = map[string]int64{}
			}
		}
	}
	e.checkTails(t, [bucket.Levels][]string{
		bucket.Minute:  {"202403051039/a.example/c", "202403051101/a.example/c"},
		bucket.Daily:   {"20240305/a.example/c"},
		bucket.Monthly: {"202403/a.example/c"},
	})
}
