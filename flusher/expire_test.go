package flusher

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// The embedded server refuses TTL indexes: Run falls back to a periodic
// deleteMany, logs it, shows it in Stats, and deletes only expired
// buckets. A retention of 0 drops the index an earlier run created. A
// failure to set up expiry is retried.
func TestExpiryModes(t *testing.T) {
	e := newEnv(t, 8)
	ctx := context.Background()
	fake := clock.NewFake(mustTime(t, "2024-03-05T10:21:10Z"))
	logs := &syncbuf.Buffer{}
	e.f = e.newFlusher(t, Config{MaxOps: 8, Clock: fake, MaxBackoff: time.Second, ExpireEvery: 5 * time.Minute,
		Retention: bucket.Retention{Minute: time.Hour, Daily: 48 * time.Hour},
		Logger:    slog.New(slog.NewTextHandler(logs, nil))})
	// An earlier run kept the monthly buckets for a while.
	if _, err := e.db.Collection("monthly").Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys: bson.D{{Key: "metadata.date", Value: 1}}, Options: options.Index().SetName(ExpiryIndexName)}); err != nil {
		t.Fatal(err)
	}
	fails := 1
	testHooks(e.f).expiry = func(p pass) error {
		if p == minutePass && fails > 0 {
			fails--
			return errors.New("connection reset")
		}
		return nil
	}
	if st := e.f.Stats().Expiry; st[0].Mode != ExpiryPending || st[1].Mode != ExpiryPending || st[2].Mode != ExpiryOff {
		t.Fatalf("modes before Run: %+v", st)
	}
	e.commit(t, small()...)
	e.flush(t)

	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.f.Run(runCtx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(30 * time.Second)
	for e.f.Stats().Expiry[0].Mode == ExpiryPending {
		if time.Now().After(deadline) {
			t.Fatalf("expiry never set up:\n%s", logs)
		}
		// Both loops wait (the flush loop, and the expiry's retry):
		// advancing when only one did let a starved expiry goroutine
		// see an hour pass, under load.
		waiters(t, fake, 2)
		fake.Advance(500 * time.Millisecond)
	}
	var st []ExpiryStats
	if !testenv.Until(time.Until(deadline), func() bool {
		st = e.f.Stats().Expiry
		return st[0].Mode != ExpiryDeleteMany || st[0].Runs > 0
	}) {
		t.Fatal("no first deleteMany round")
	}
	if st[0].Mode == ExpiryTTL {
		t.Skip("the server takes TTL indexes (MONGODB_URI): the deleteMany fallback is not used")
	}
	for p, want := range []string{ExpiryDeleteMany, ExpiryDeleteMany, ExpiryOff} {
		if st[p].Mode != want || st[p].Collection != e.f.colls[p].Name() {
			t.Errorf("%s: %+v, want mode %s", pass(p), st[p], want)
		}
	}
	if !strings.Contains(logs.String(), "the server refuses the TTL index") || !strings.Contains(logs.String(), "ensure indexes (counts are written meanwhile) failed") {
		t.Errorf("modes and the retry not logged:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "retention is 0: dropped the TTL index") {
		t.Errorf("the monthly index is not dropped:\n%s", logs)
	}
	specs, err := e.db.Collection("monthly").Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.Name == ExpiryIndexName {
			t.Errorf("monthly still has %s", ExpiryIndexName)
		}
	}

	// 11:21:00, the next round: the 10:20 buckets' minute ended an hour
	// ago, 10:21's not.
	if st[0].Runs != 1 || st[0].Deleted != 0 {
		t.Errorf("first round %+v: want one run, nothing deleted", st[0])
	}
	waiters(t, fake, 2) // the flush loop and the expiry loop
	fake.Advance(mustTime(t, "2024-03-05T11:21:00Z").Sub(fake.Now()))
	if !testenv.Until(time.Until(deadline), func() bool { return e.f.Stats().Expiry[0].Runs >= 2 }) {
		t.Fatal("no second deleteMany round")
	}
	for id := range e.want["minutes"] {
		if strings.HasPrefix(id, "202403051020/") {
			delete(e.want["minutes"], id)
		}
	}
	e.check(t)
	if st := e.f.Stats().Expiry; st[0].Deleted != 2 || st[1].Deleted != 0 || st[0].Failures != 0 {
		t.Errorf("expiry stats %+v: want 2 minute buckets deleted", st)
	}
}

// A batch written after its buckets expired (a replay of old logs, a long
// outage): its counts for those buckets are not written at that level,
// only counted; the levels whose buckets are kept take them.
func TestExpiredBucketsAreNotWritten(t *testing.T) {
	e := newEnv(t, 8)
	fake := clock.NewFake(mustTime(t, "2024-03-05T12:01:10Z"))
	e.f = e.newFlusher(t, Config{MaxOps: 8, Clock: fake, Retention: bucket.Retention{Minute: time.Hour}})
	e.commit(t, hit{"a.example", "/", "2024-03-05T10:20:30Z", 1}, hit{"a.example", "/b", "2024-03-05T10:20:40Z", 4},
		hit{"a.example", "/c", "2024-03-05T11:01:50Z", 5}) // 11:01 ends 11:02: not expired yet
	e.flush(t)
	for id := range e.want["minutes"] {
		if strings.HasPrefix(id, "202403051020/") {
			delete(e.want["minutes"], id)
		}
	}
	e.check(t)
	if st := e.f.Stats(); st.ExpiredHits != 5 || st.LateBuckets != 0 || st.Inserts != 8 {
		t.Errorf("stats %+v: want 5 expired hits, no late bucket, 8 inserts (1 minute bucket, 3 daily, 3 monthly, 1 site total)", st)
	}
}

// A batch held across the expiry of its buckets: the deleteMany runs
// before the batch's first write, between the insert of its new bucket
// (whole) and the update of the others, between its update and its find
// (after some buckets took the batch), or between its insert and its
// second update. In the first three, the late counts land: the insert
// or the three-step path creates the buckets again (and counts them as
// LateBuckets); in the second, the bucket inserted whole expires with its
// counts like any other. In the last, the batch fails and its retry finds
// the buckets expired: their counts are dropped and counted (ExpiredHits).
// exists sends every bucket to the update first (the three-step path), as
// for buckets this flusher wrote before and that expired since.
func TestBatchHeldAcrossExpiry(t *testing.T) {
	for _, tc := range []struct {
		name   string
		late   uint64
		exists bool
		gone   string // a minute bucket the deleteMany took with its counts
		hook   func(f *Flusher, expire func())
	}{
		{"before the first write", 3, false, "", func(f *Flusher, expire func()) {
			testHooks(f).beforeWhole = func(pass, []string) { expire() }
			testHooks(f).beforeBulk = func(int) error {
				expire()
				return nil
			}
		}},
		{"between the insert and the update", 2, false, "202403051020/a.example/c", func(f *Flusher, expire func()) {
			testHooks(f).beforeBulk = func(int) error {
				expire()
				return nil
			}
		}},
		{"between step 1 and find", 3, true, "", func(f *Flusher, expire func()) {
			testHooks(f).afterUpdate = func(p pass, _ []string) {
				if p == minutePass {
					expire()
				}
			}
		}},
		// The retry meets the buckets expired: the counts are dropped and
		// counted, and the 10:20 minute buckets stay deleted.
		{"between insert and step 3", 0, true, "", func(f *Flusher, expire func()) {
			bulks := 0
			testHooks(f).beforeBulk = func(int) error {
				if bulks++; bulks == 2 { // the minute pass's step 3
					expire()
				}
				return nil
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 8)
			fake := clock.NewFake(mustTime(t, "2024-03-05T10:21:10Z"))
			e.f = e.newFlusher(t, Config{MaxOps: 8, Clock: fake, Retention: bucket.Retention{Minute: time.Hour}})
			e.f.maint.expirer.targets[minutePass].setMode(ExpiryDeleteMany) // whatever the server
			e.commit(t, hit{"a.example", "/", "2024-03-05T10:20:59Z", 3}, hit{"a.example", "/b", "2024-03-05T10:20:01Z", 2})
			e.flush(t)
			// Batch 1's minute counts expire with their buckets.
			e.want["minutes"] = map[string]map[string]int64{}

			e.commit(t, hit{"a.example", "/", "2024-03-05T10:20:30Z", 1}, hit{"a.example", "/b", "2024-03-05T10:20:40Z", 4},
				hit{"a.example", "/c", "2024-03-05T10:20:50Z", 5})
			if _, err := e.buf.Seal(buffer.Seal{}); err != nil {
				t.Fatal(err)
			}
			if tc.exists {
				testHooks(e.f).exists = func(pass, string) bool { return true }
			}
			ran := false
			tc.hook(e.f, func() {
				if !ran {
					ran = true
					// The batch's chunk was built at 10:21:10; now, in the
					// middle of its steps, it is 12:01:10 and the 10:20
					// minute buckets have expired.
					fake.Advance(100 * time.Minute)
					e.f.maint.expirer.expireOnce(context.Background())
				}
			})
			if _, err := e.f.Flush(context.Background()); err != nil {
				// The deleteMany took the buckets between insert and
				// update: the batch is retried, as Run would.
				t.Logf("first attempt: %v", err)
				e.flush(t)
			}
			if !ran {
				t.Fatal("the deleteMany did not run")
			}
			st := e.f.Stats()
			if st.Expiry[minutePass].Deleted == 0 {
				t.Errorf("the deleteMany deleted nothing: %+v", st.Expiry)
			}
			if st.LateBuckets != tc.late {
				t.Errorf("LateBuckets %d, want %d", st.LateBuckets, tc.late)
			}
			delete(e.want["minutes"], tc.gone)
			if tc.late == 0 {
				if st.ExpiredHits != 10 {
					t.Errorf("ExpiredHits %d, want 10", st.ExpiredHits)
				}
				for id := range e.want["minutes"] {
					if strings.HasPrefix(id, "202403051020/") {
						delete(e.want["minutes"], id)
					}
				}
			}
			e.check(t)
		})
	}
}

// waiters waits, with a generous deadline, until n goroutines wait on the
// fake clock.
func waiters(t *testing.T, fake *clock.Fake, n int) {
	t.Helper()
	ok := make(chan struct{})
	go func() { fake.BlockUntil(n); close(ok) }()
	select {
	case <-ok:
	case <-time.After(30 * time.Second):
		t.Fatalf("fewer than %d goroutines ever waited on the clock", n)
	}
}
