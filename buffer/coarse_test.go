package buffer

import (
	"path/filepath"
	"reflect"
	"testing"
)

func scanAll(t *testing.T, b *Buffer, id string, coarse bool) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	scan := scanBatch(b)
	if coarse {
		scan = scanCoarse(b)
	}
	if err := scanViews(scan, id, nil, func(k []byte, n uint64) bool { out[string(k)] = n; return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

// Minute-only batches' counts wait, once acknowledged, for the next full
// batch, which carries them with its own to the daily and monthly passes.
func TestCoarseCountsWaitForAFullBatch(t *testing.T) {
	b := openTest(t, filepath.Join(t.TempDir(), "b.db"), Options{})
	k := func(page string, sec int64) string { return string(AppendKey(nil, []byte("s"), []byte(page), sec)) }
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{k("/a", 60): 2, k("/b", 61): 1}))}); err != nil {
		t.Fatal(err)
	}
	m, err := b.Seal(Seal{MinuteOnly: true})
	if err != nil || m == nil || !m.MinuteOnly {
		t.Fatalf("minute-only batch %+v, %v", m, err)
	}
	if err := scanViews(scanCoarse(b), m.ID, nil, func([]byte, uint64) bool { return true }); err == nil {
		t.Error("a minute-only batch has coarse counts")
	}
	if again, _ := b.Seal(Seal{}); again == nil || again.ID != m.ID || !again.MinuteOnly {
		t.Errorf("the batch in flight changed kind: %+v", again)
	}
	if err := b.Ack(m.ID); err != nil {
		t.Fatal(err)
	}
	if keys, hits := coarse(t, b); keys != 2 || hits != 3 {
		t.Fatalf("coarse %d keys %d hits, want 2 and 3", keys, hits)
	}
	// Nothing pending: a minute-only seal has nothing to do; a full one
	// carries the waiting counts.
	if none, err := b.Seal(Seal{MinuteOnly: true}); none != nil || err != nil {
		t.Fatalf("minute-only seal of nothing: %+v, %v", none, err)
	}
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{k("/a", 60): 5, k("/c", 120): 1}))}); err != nil {
		t.Fatal(err)
	}
	full, err := b.Seal(Seal{})
	if err != nil || full == nil || full.MinuteOnly {
		t.Fatalf("full batch %+v, %v", full, err)
	}
	if got, want := scanAll(t, b, full.ID, false), map[string]uint64{k("/a", 60): 5, k("/c", 120): 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("minute pass %v, want %v", got, want)
	}
	if got, want := scanAll(t, b, full.ID, true), map[string]uint64{k("/a", 60): 7, k("/b", 61): 1, k("/c", 120): 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("daily and monthly passes %v, want %v", got, want)
	}
	if keys, _ := coarse(t, b); keys != 0 {
		t.Errorf("%d coarse keys still waiting after the full seal", keys)
	}
	if err := b.Ack(full.ID); err != nil {
		t.Fatal(err)
	}
	if keys, _ := coarse(t, b); keys != 0 {
		t.Errorf("%d coarse keys after the full batch", keys)
	}
	// A full batch with nothing waiting reads its own counts.
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{k("/d", 180): 1}))}); err != nil {
		t.Fatal(err)
	}
	plain, _ := b.Seal(Seal{})
	if got := scanAll(t, b, plain.ID, true); len(got) != 1 || got[k("/d", 180)] != 1 {
		t.Errorf("full batch without coarse counts: %v", got)
	}
	// Only coarse counts waiting: a full seal still makes a batch.
	b.Ack(plain.ID)
	b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{k("/e", 240): 4}))})
	m, _ = b.Seal(Seal{MinuteOnly: true})
	b.Ack(m.ID)
	last, err := b.Seal(Seal{})
	if err != nil || last == nil || last.Keys != 0 {
		t.Fatalf("full seal of the waiting counts only: %+v, %v", last, err)
	}
	if got := scanAll(t, b, last.ID, true); got[k("/e", 240)] != 4 {
		t.Errorf("coarse counts of the last batch: %v", got)
	}
}

// coarse returns ReadTx.Coarse, read in a transaction of its own.
func coarse(t *testing.T, b *Buffer) (keys int, hits uint64) {
	t.Helper()
	must(t, b.View(func(tx *ReadTx) error { keys, hits = tx.Coarse(); return nil }))
	return keys, hits
}
