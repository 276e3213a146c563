package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/measure"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestPlanBatch plans a batch of 3 pages, each hit in 3 seconds that span
// a minute boundary (so 2 minute buckets, 1 daily and 1 monthly bucket per
// page), and checks it against the builders the flusher writes with.
func TestPlanBatch(t *testing.T) {
	buf := testenv.OpenBuffer(t, filepath.Join(t.TempDir(), "buffer.db"), buffer.Options{})
	base := time.Date(2026, 3, 10, 10, 4, 59, 0, time.UTC).Unix()
	counts := map[string]measure.Vector{}
	for _, page := range []string{"/a", "/b", "/c"} {
		for s := range int64(3) {
			counts[string(buffer.AppendKey(nil, []byte("example.com"), []byte(page), base+s))] = measure.OfViews(uint64(s + 1))
		}
	}
	if err := buf.Commit(buffer.Commit{Counts: buffer.CountsOf(counts)}); err != nil {
		t.Fatal(err)
	}
	batch, err := buf.Seal(buffer.Seal{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := PlanBatch(buf, batch.ID, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := [3]struct{ buckets, chunks int }{{6, 2}, {3, 1}, {3, 1}}
	for p, pp := range plan.Passes {
		if pp.Updates != want[p].buckets || pp.Buckets != want[p].buckets || len(pp.Docs) != want[p].buckets {
			t.Errorf("%s: %d updates, %d buckets, %d docs; want %d", bucket.Level(p), pp.Updates, pp.Buckets, len(pp.Docs), want[p].buckets)
		}
		if pp.Chunks != want[p].chunks || len(pp.FindBytes) != pp.Chunks {
			t.Errorf("%s: %d chunks, %d find sizes; want %d", bucket.Level(p), pp.Chunks, len(pp.FindBytes), want[p].chunks)
		}
		if pp.Hits != 18 {
			t.Errorf("%s: %d hits, want 18", bucket.Level(p), pp.Hits)
		}
	}
	// The first minute bucket of /a, rebuilt with the flusher's builders.
	var ch flusher.Chunker
	ch.Reset(bucket.Minute, 1)
	if err := buf.View(func(tx *buffer.ReadTx) error { return tx.ScanBatch(batch.ID, nil, ch.Add) }); err != nil {
		t.Fatal(err)
	}
	g := bucket.IDGuard(buf.InstanceID(), batch.ID)
	f, u := ch.Docs[0].Update(g)
	filter, _ := bson.Marshal(f)
	update, _ := bson.Marshal(u)
	zero, _ := bson.Marshal(ch.Docs[0].Zero())
	whole, err := ch.Docs[0].Whole(g)
	if err != nil {
		t.Fatal(err)
	}
	got := plan.Passes[bucket.Minute].Docs[0]
	if got.ID != "202603101004/example.com/a" || got.Hits != 1 || got.Page != "/a" || got.Site != "example.com" ||
		!got.Start.Equal(time.Date(2026, 3, 10, 10, 4, 0, 0, time.UTC)) {
		t.Errorf("first minute bucket %+v", got)
	}
	if got.FilterBytes != len(filter) || got.UpdateBytes != len(update) || got.ZeroBytes != len(zero) || got.WholeBytes != len(whole) {
		t.Errorf("first minute bucket sizes %d/%d/%d/%d, want %d/%d/%d/%d",
			got.FilterBytes, got.UpdateBytes, got.ZeroBytes, got.WholeBytes, len(filter), len(update), len(zero), len(whole))
	}
	// The whole document is the zero-filled one, its counters set in
	// place, with this batch's applied entry added.
	if got.WholeBytes != got.ZeroBytes+plan.AppliedEntryBytes() {
		t.Errorf("whole document %d bytes, want zero-filled %d + applied entry %d", got.WholeBytes, got.ZeroBytes, plan.AppliedEntryBytes())
	}
	// A daily bucket is created with 1,440 + 24 counters and 24 x 14
	// measures (11 of them int32).
	if z := plan.Passes[bucket.Daily].Docs[0].ZeroBytes; z < 1464*10+24*14*7 || z > 1464*14+24*14*11 {
		t.Errorf("daily zero document %d bytes", z)
	}
	if n := plan.AppliedEntryBytes(); n != 1+16+1+4+24+1 {
		t.Errorf("applied entry %d bytes, want 47", n)
	}
	// Planning leaves the batch in flight; only some passes can be asked for.
	again, err := PlanBatch(buf, batch.ID, 0, bucket.Daily)
	if err != nil {
		t.Fatal(err)
	}
	if again.Passes[bucket.Minute].Updates != 0 || again.Passes[bucket.Daily].Updates != 3 || again.Passes[bucket.Monthly].Updates != 0 {
		t.Errorf("daily only: %+v", again.Passes)
	}
	// Once the buffer has a writer number, batches are numbered and the
	// entry is 16 bytes or less.
	if err := buf.Ack(batch.ID); err != nil {
		t.Fatal(err)
	}
	if err := buf.Update(func(tx *buffer.Tx) error { return tx.SetNumber(999_999) }); err != nil {
		t.Fatal(err)
	}
	if err := buf.Commit(buffer.Commit{Counts: buffer.CountsOf(counts)}); err != nil {
		t.Fatal(err)
	}
	numbered, err := buf.Seal(buffer.Seal{})
	if err != nil {
		t.Fatal(err)
	}
	nplan, err := PlanBatch(buf, numbered.ID, 4)
	if err != nil {
		t.Fatal(err)
	}
	if n := nplan.AppliedEntryBytes(); n != 1+6+1+8 {
		t.Errorf("numbered applied entry %d bytes, want 16", n)
	}
	if d := nplan.Passes[bucket.Minute].Docs[0]; d.WholeBytes != d.ZeroBytes+16 {
		t.Errorf("numbered whole document %d bytes, want zero-filled %d + 16", d.WholeBytes, d.ZeroBytes)
	}
}
