package buffer

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/logtally/logtally/measure"
)

func TestParseBatchID(t *testing.T) {
	for id, want := range map[string][2]int64{
		"17:4031":                  {17, 4031},
		"1:1":                      {1, 1},
		BatchID(999_999, 1<<62):    {999_999, 1 << 62},
		"00112233445566778899aabb": {},
		"017:1":                    {},
		"17:01":                    {},
		"0:1":                      {},
		"1:0":                      {},
		"-1:5":                     {},
		"1:2:3":                    {},
		"1:":                       {},
		":1":                       {},
		"":                         {},
	} {
		n, seq, ok := ParseBatchID(id)
		if ok != (want[0] != 0) || n != want[0] || seq != want[1] {
			t.Errorf("ParseBatchID(%q) = %d, %d, %v; want %d, %d", id, n, seq, ok, want[0], want[1])
		}
	}
}

// sealOne commits one count and seals it; the batch is returned.
func sealOne(t *testing.T, b *Buffer, sec int64) *Batch {
	t.Helper()
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{key("s", "/a", sec): 1}))}); err != nil {
		t.Fatal(err)
	}
	batch, err := b.Seal(Seal{})
	if err != nil || batch == nil {
		t.Fatalf("Seal = %v, %v", batch, err)
	}
	return batch
}

// Batches are random until the buffer has a number, then numbered in
// sequence; a batch sealed before keeps its id; the number and the
// sequence survive a reopen; another number is refused.
func TestNumberedBatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buffer.db")
	b := open(t, path)
	first := sealOne(t, b, 60)
	if _, _, ok := ParseBatchID(first.ID); ok || len(first.ID) != 24 || b.Number() != 0 {
		t.Fatalf("batch before a number: %q (number %d)", first.ID, b.Number())
	}
	if err := b.Update(func(tx *Tx) error { return tx.SetNumber(17) }); err != nil {
		t.Fatal(err)
	}
	if again, err := b.Seal(Seal{}); err != nil || again.ID != first.ID {
		t.Fatalf("the batch in flight became %v, %v; want %s kept", again, err, first.ID)
	}
	if err := b.Ack(first.ID); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"17:1", "17:2"} {
		batch := sealOne(t, b, int64(120+i))
		if batch.ID != want {
			t.Fatalf("batch %d: %q, want %q", i, batch.ID, want)
		}
		if err := b.Ack(batch.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Update(func(tx *Tx) error { return tx.SetNumber(17) }); err != nil {
		t.Errorf("SetNumber of the number it has: %v", err)
	}
	if err := b.Update(func(tx *Tx) error { return tx.SetNumber(18) }); err == nil {
		t.Error("SetNumber(18) on writer 17 succeeded")
	}
	if err := b.Update(func(tx *Tx) error { return tx.SetNumber(0) }); err == nil {
		t.Error("SetNumber(0) succeeded")
	}
	b.Close()
	b = open(t, path)
	if b.Number() != 17 {
		t.Fatalf("Number after reopen = %d", b.Number())
	}
	if batch := sealOne(t, b, 200); batch.ID != "17:3" {
		t.Fatalf("batch after reopen: %q, want 17:3", batch.ID)
	}
}

// A rebuilt buffer takes the lost one's number, and its sequence starts
// above every batch id the record names: the batch in flight keeps its
// id, the next one follows the highest.
func TestRebuildAdoptsNumberAndSequence(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	for name, c := range map[string]struct {
		r    Rebuilt
		next string
	}{
		"acked": {Rebuilt{Acked: Snapshot{Batch: "17:40"}, Batch: "17:40"}, "17:41"},
		"in flight": {Rebuilt{Acked: Snapshot{Batch: "17:39"}, Batch: "17:40",
			Counts: map[string]measure.Vector{key("s", "/a", 60): measure.OfViews(2)}}, "17:41"},
		"coarse ahead": {Rebuilt{Acked: Snapshot{Batch: "17:40"}, Batch: "17:40",
			Coarse: Coarse{Snapshot: Snapshot{Batch: "17:45"}}}, "17:46"},
		"before numbers": {Rebuilt{Acked: Snapshot{Batch: "00112233445566778899aabb"}, Batch: "00112233445566778899aabb"}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			c.r.Since = at
			b := open(t, filepath.Join(t.TempDir(), "buffer.db"))
			if err := b.Rebuild(c.r); err != nil {
				t.Fatal(err)
			}
			if c.r.Counts != nil {
				batch, err := read(b, (*ReadTx).Sealed)
				if err != nil || batch == nil || batch.ID != c.r.Batch {
					t.Fatalf("rebuilt batch %v, %v; want %s", batch, err, c.r.Batch)
				}
				if err := b.Ack(batch.ID); err != nil {
					t.Fatal(err)
				}
			}
			next := sealOne(t, b, 300)
			if c.next == "" {
				if b.Number() != 0 || len(next.ID) != 24 {
					t.Fatalf("next batch %q, number %d; want a random id and no number", next.ID, b.Number())
				}
				return
			}
			if b.Number() != 17 || next.ID != c.next {
				t.Fatalf("next batch %q, number %d; want %s, 17", next.ID, b.Number(), c.next)
			}
		})
	}
}
