package flusher

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/buffer"
)

// An upgrade: a buffer without a writer number has a batch in flight
// (sealed by an older logtally) when it gets one. That batch is finished
// under its old guard, sent again whole after a crash; the next batch is
// numbered and goes into the same buckets; a numbered batch sent again
// after a crash counts once too. Every bucket is compared with the hits,
// and the buckets hold both of this writer's entries.
func TestGuardUpgradeCountsOnce(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 4)
	e.unnumbered = true
	e.f = e.newFlusher(t, Config{MaxOps: 4})
	crash := errors.New("crash")
	crashAtEnd := func(p pass, _ int) error {
		if p == donePass {
			return crash
		}
		return nil
	}
	// Every chunk written, then a crash before Ack; the restart has
	// lost the progress too, so the whole batch is sent again.
	crashAndRestart := func(numbered bool) *buffer.Batch {
		t.Helper()
		testHooks(e.f).afterChunk = crashAtEnd
		if _, err := e.f.Flush(ctx); !errors.Is(err, crash) {
			t.Fatalf("Flush = %v, want the crash", err)
		}
		batch, err := e.sealed()
		if err != nil || batch == nil {
			t.Fatalf("batch in flight: %v, %v", batch, err)
		}
		if err := e.buf.SaveProgress(batch.ID, nil); err != nil {
			t.Fatal(err)
		}
		e.unnumbered = !numbered
		e.f = e.newFlusher(t, Config{MaxOps: 4})
		return batch
	}

	e.commit(t, small()...)
	old := crashAndRestart(true)
	if _, _, ok := buffer.ParseBatchID(old.ID); ok {
		t.Fatalf("batch %s numbered before the buffer had a number", old.ID)
	}
	// Counts waiting: the flusher claims a number before its next round,
	// and the batch in flight keeps its id and its guard.
	e.commit(t, small()...)
	e.flush(t)
	if e.buf.Number() == 0 {
		t.Fatal("no writer number after a round with counts waiting")
	}
	if st := e.f.Stats(); st.Batches != 1 {
		t.Fatalf("%+v: want the old batch alone written", st)
	}
	numbered := crashAndRestart(true)
	if n, seq, ok := buffer.ParseBatchID(numbered.ID); !ok || n != e.buf.Number() || seq != 1 {
		t.Fatalf("next batch %s, want %d:1", numbered.ID, e.buf.Number())
	}
	e.flush(t)
	e.check(t)

	// One bucket both batches wrote holds both entries: the buffer id's
	// with the old batch, the number's with the sequence.
	id := "20240305/a.example/"
	var doc bson.D
	if err := e.db.Collection("daily").FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	applied := toMap(toMap(doc)["applied"].(bson.D))
	numberedGuard, oldGuard := e.f.guard(numbered.ID), e.f.guard(old.ID)
	if len(applied) != 2 || applied[e.buf.InstanceID()] != oldGuard.Batch || applied[numberedGuard.Field[len("applied."):]] != numberedGuard.Batch {
		t.Errorf("%s applied %v: want %s: %q and %s: %d", id, applied, oldGuard.Field, old.ID, numberedGuard.Field, numberedGuard.Batch)
	}
}
