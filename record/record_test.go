package record_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/record"
)

func store(t *testing.T, db *mongo.Database, clk clock.Clock, holder string) *record.Store {
	t.Helper()
	s, err := record.NewStore(record.Config{DB: db, Instance: "web-1", Holder: holder, LeaseTTL: 30 * time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLeaseAndRecord(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Start(t).Database(t)
	clk := clock.NewFake(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	a := store(t, db, clk, "run-a")

	// First start: no record; Acquire creates it.
	if rec, err := a.Load(ctx); err != nil || rec != nil {
		t.Fatalf("Load before any record = %+v, %v", rec, err)
	}
	if rec, err := a.Acquire(ctx, "buf-a", true, time.Second); err != nil || rec != nil {
		t.Fatalf("Acquire on no record = %+v, %v; want nil, nil", rec, err)
	}
	cps := []record.Checkpoint{{Key: "s\x001:2", Value: []byte{1, 2}}}
	if err := a.Begin(ctx, "buf-a", record.Snapshot{Batch: "batch-1", SealedAt: clk.Now(), Checkpoints: cps}, record.Snapshot{}, record.Snapshot{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Renew(ctx, "batch-0"); err != nil { // not the record's batch: not acked
		t.Fatal(err)
	}
	rec, _ := a.Load(ctx)
	if rec.Current.Batch != "batch-1" || rec.Acked || len(rec.Current.Checkpoints) != 1 || rec.Current.Checkpoints[0].Key != cps[0].Key || rec.BufferID != "buf-a" {
		t.Fatalf("record after Begin: %+v", rec)
	}
	if err := a.Renew(ctx, "batch-1"); err != nil {
		t.Fatal(err)
	}
	if rec, _ := a.Load(ctx); !rec.Acked || !rec.Lease.Until.Equal(clk.Now().Add(30*time.Second)) {
		t.Fatalf("record after Renew(batch-1): %+v", rec)
	}

	// The same buffer's next run (a restart after a crash) takes the
	// lease at once.
	a2 := store(t, db, clk, "run-a2")
	if _, err := a2.Acquire(ctx, "buf-a", true, time.Second); err != nil {
		t.Fatalf("restart of the same buffer: %v", err)
	}
	if err := a.Begin(ctx, "buf-a", record.Snapshot{Batch: "batch-2", SealedAt: clk.Now()}, record.Snapshot{}, record.Snapshot{}); !errors.Is(err, record.ErrLeaseLost) {
		t.Fatalf("Begin by the run that lost the lease: %v, want ErrLeaseLost", err)
	}

	// Another buffer (a lost state dir) waits; a lease that keeps being
	// renewed means a second live daemon.
	b := store(t, db, clk, "run-b")
	errc := make(chan error, 1)
	go func() { _, err := b.Acquire(ctx, "buf-a", false, 10*time.Second); errc <- err }()
	clk.BlockUntil(1)            // waiting: the lease is a2's
	clk.Advance(3 * time.Second) // b's next look is 7s away
	if err := a2.Renew(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if err := advanceUntil(clk, errc, 10*time.Second); !errors.Is(err, record.ErrInstanceInUse) {
		t.Fatalf("Acquire against a renewed lease: %v, want ErrInstanceInUse", err)
	}

	// A lease that lapses is taken over; a released one at once.
	go func() { _, err := b.Acquire(ctx, "buf-a", false, 10*time.Second); errc <- err }()
	if err := advanceUntil(clk, errc, 10*time.Second); err != nil {
		t.Fatalf("Acquire after the lease lapsed: %v", err)
	}
	if rec, _ := b.Load(ctx); rec.Lease.Holder != "run-b" {
		t.Fatalf("lease after the takeover: %+v", rec.Lease)
	}
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
	c := store(t, db, clk, "run-c")
	if _, err := c.Acquire(ctx, "buf-a", false, time.Second); err != nil {
		t.Fatalf("Acquire after a release: %v", err)
	}
}

// advanceUntil advances clk by step whenever someone waits on it, until
// errc delivers.
func advanceUntil(clk *clock.Fake, errc <-chan error, step time.Duration) error {
	for {
		select {
		case err := <-errc:
			return err
		case <-time.After(time.Millisecond):
			if clk.Waiters() > 0 {
				clk.Advance(step)
			}
		}
	}
}
