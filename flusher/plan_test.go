package flusher

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestPlanBatch plans a batch of 3 pages, each hit in 3 seconds that span
// a minute boundary (so 2 minute buckets, 1 daily and 1 monthly bucket per
// page), and checks it against the builders writeChunk uses.
func TestPlanBatch(t *testing.T) {
	buf, err := buffer.Open(filepath.Join(t.TempDir(), "buffer.db"), buffer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	base := time.Date(2026, 3, 10, 10, 4, 59, 0, time.UTC).Unix()
	counts := map[string]uint64{}
	for _, page := range []string{"/a", "/b", "/c"} {
		for s := range int64(3) {
			counts[string(buffer.AppendKey(nil, []byte("example.com"), []byte(page), base+s))] = uint64(s + 1)
		}
	}
	if err := buf.Commit(counts, nil); err != nil {
		t.Fatal(err)
	}
	batch, err := buf.Seal()
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
			t.Errorf("%s: %d updates, %d buckets, %d docs; want %d", Pass(p), pp.Updates, pp.Buckets, len(pp.Docs), want[p].buckets)
		}
		if pp.Chunks != want[p].chunks || len(pp.FindBytes) != pp.Chunks {
			t.Errorf("%s: %d chunks, %d find sizes; want %d", Pass(p), pp.Chunks, len(pp.FindBytes), want[p].chunks)
		}
		if pp.Hits != 18 {
			t.Errorf("%s: %d hits, want 18", Pass(p), pp.Hits)
		}
	}
	// The first minute bucket of /a, rebuilt with the flusher's own code.
	var ch chunker
	ch.reset(minutePass, 1)
	if err := buf.ScanBatch(batch.ID, nil, ch.add); err != nil {
		t.Fatal(err)
	}
	m := updates(ch.Docs, "applied."+buf.InstanceID(), batch.ID)[0].(*mongo.UpdateOneModel)
	filter, _ := bson.Marshal(m.Filter)
	update, _ := bson.Marshal(m.Update)
	zero, _ := bson.Marshal(ch.Docs[0].Zero())
	got := plan.Passes[PassMinute].Docs[0]
	if got.ID != "202603101004/example.com/a" || got.Hits != 1 || got.Page != "/a" || got.Site != "example.com" ||
		!got.Start.Equal(time.Date(2026, 3, 10, 10, 4, 0, 0, time.UTC)) {
		t.Errorf("first minute bucket %+v", got)
	}
	if got.FilterBytes != len(filter) || got.UpdateBytes != len(update) || got.ZeroBytes != len(zero) {
		t.Errorf("first minute bucket sizes %d/%d/%d, want %d/%d/%d",
			got.FilterBytes, got.UpdateBytes, got.ZeroBytes, len(filter), len(update), len(zero))
	}
	// A daily bucket is created with 1,440 + 24 counters.
	if z := plan.Passes[PassDaily].Docs[0].ZeroBytes; z < 1464*10 || z > 1464*14 {
		t.Errorf("daily zero document %d bytes", z)
	}
	if n := plan.AppliedEntryBytes(); n != 1+16+1+4+24+1 {
		t.Errorf("applied entry %d bytes, want 47", n)
	}
	// Planning leaves the batch in flight; only some passes can be asked for.
	again, err := PlanBatch(buf, batch.ID, 0, PassDaily)
	if err != nil {
		t.Fatal(err)
	}
	if again.Passes[PassMinute].Updates != 0 || again.Passes[PassDaily].Updates != 3 || again.Passes[PassMonthly].Updates != 0 {
		t.Errorf("daily only: %+v", again.Passes)
	}
}
