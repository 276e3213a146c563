package flusher

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
)

// With a coarse interval, the batches in between write the minute buckets
// only; the next full batch brings every count since the last one to the
// daily and monthly buckets, and a drain makes its batches full: in the
// end every bucket is exact.
func TestCoarseIntervalWritesDailyAndMonthlyLater(t *testing.T) {
	e := newEnv(t, 8)
	fake := clock.NewFake(mustTime(t, "2024-03-05T10:21:10Z"))
	e.f = e.newFlusher(t, Config{MaxOps: 8, Clock: fake, CoarseInterval: time.Minute})
	ctx := context.Background()
	total := func(coll, field string) int64 {
		t.Helper()
		cur, err := e.db.Collection(coll).Find(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		var docs []bson.M
		if err := cur.All(ctx, &docs); err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, d := range docs {
			n += d[field].(int64)
		}
		return n
	}
	levels := func() [3]int64 {
		return [3]int64{total("minutes", "totalViews"), total("daily", "daily"), total("monthly", "total")}
	}
	step := func(what string, h hit, want [3]int64) {
		t.Helper()
		fake.Advance(10 * time.Second)
		e.commit(t, h)
		e.flush(t)
		if got := levels(); got != want {
			t.Fatalf("%s: minute/daily/monthly totals %v, want %v", what, got, want)
		}
	}
	e.commit(t, hit{"a.example", "/", "2024-03-05T10:20:59Z", 3})
	e.flush(t)
	if got := levels(); got != [3]int64{3, 3, 3} {
		t.Fatalf("first batch (full): %v", got)
	}
	before := e.f.Stats()
	step("10 s later", hit{"a.example", "/b", "2024-03-05T10:21:05Z", 2}, [3]int64{5, 3, 3})
	if d := delta(before, e.f.Stats()); d != (statsDelta{Inserts: 1, InsertCalls: 1}) {
		t.Errorf("a minute-only batch of one new minute bucket: %+v, want 1 insert and nothing else (no daily or monthly)", d)
	}
	step("20 s later", hit{"a.example", "/", "2024-03-05T10:21:15Z", 4}, [3]int64{9, 3, 3})
	fake.Advance(30 * time.Second) // a minute since the first full batch
	step("the next full batch", hit{"a.example", "/c", "2024-03-05T10:22:00Z", 1}, [3]int64{10, 10, 10})
	e.check(t)
	step("right after it", hit{"a.example", "/c", "2024-03-05T10:22:30Z", 6}, [3]int64{16, 10, 10})
	if err := e.f.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := levels(); got != [3]int64{16, 16, 16} {
		t.Fatalf("after the drain: %v", got)
	}
	var keys int
	if err := e.buf.View(func(tx *buffer.ReadTx) error { keys, _ = tx.Coarse(); return nil }); err != nil {
		t.Fatal(err)
	}
	if keys != 0 {
		t.Errorf("%d coarse keys left after the drain", keys)
	}
	e.check(t)
}
