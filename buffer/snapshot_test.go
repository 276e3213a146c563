package buffer

import (
	"maps"
	"path/filepath"
	"testing"
	"time"
)

func TestSnapshotsFollowSealAndAck(t *testing.T) {
	b := openTest(t, filepath.Join(t.TempDir(), "buffer.db"), Options{})
	key := string(AppendKey(nil, []byte("s"), []byte("/a"), 1_700_000_000))
	c1 := map[string][]byte{"f1": []byte("at 10"), "f2": []byte("at 20")}
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{key: 3})), Checkpoints: c1}); err != nil {
		t.Fatal(err)
	}
	batch, err := b.Seal(Seal{})
	if err != nil {
		t.Fatal(err)
	}
	// Checkpoints committed after the seal are not the batch's.
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{key: 1})), Checkpoints: map[string][]byte{"f1": []byte("at 30"), "f2": nil}}); err != nil {
		t.Fatal(err)
	}
	s, err := snap(b, SealedBatch)
	if err != nil {
		t.Fatal(err)
	}
	if s.Batch != batch.ID || !maps.EqualFunc(s.Checkpoints, c1, func(a, b []byte) bool { return string(a) == string(b) }) || s.SealedAt.IsZero() {
		t.Fatalf("sealed snapshot %+v, want batch %s at %v", s, batch.ID, c1)
	}
	if a, _ := snap(b, AckedBatch); a.Batch != "" {
		t.Fatalf("acked snapshot before any ack: %+v", a)
	}
	if err := b.Ack(batch.ID); err != nil {
		t.Fatal(err)
	}
	a, err := snap(b, AckedBatch)
	if err != nil {
		t.Fatal(err)
	}
	if a.Batch != batch.ID || len(a.Checkpoints) != 2 || string(a.Checkpoints["f1"]) != "at 10" || !a.SealedAt.Equal(s.SealedAt) {
		t.Fatalf("acked snapshot %+v, want the sealed one %+v", a, s)
	}
	if s, _ := snap(b, SealedBatch); s.Batch != "" {
		t.Fatalf("sealed snapshot after the ack: %+v", s)
	}
	// The next batch's snapshot is the checkpoints at its seal.
	batch2, _ := b.Seal(Seal{})
	s2, _ := snap(b, SealedBatch)
	if s2.Batch != batch2.ID || len(s2.Checkpoints) != 1 || string(s2.Checkpoints["f1"]) != "at 30" {
		t.Fatalf("second sealed snapshot %+v", s2)
	}
}

func TestRebuild(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buffer.db")
	b := openTest(t, path, Options{InstanceID: "lostbuffer01"})
	key := string(AppendKey(nil, []byte("s"), []byte("/a"), 1_700_000_000))
	acked := Snapshot{Batch: "prev", SealedAt: time.Unix(1_700_000_000, 0), Checkpoints: map[string][]byte{"f1": []byte("at 10")}}
	cps := map[string][]byte{"f1": []byte("at 40"), "f3": []byte("at 5")}
	since := time.Unix(1_700_000_100, 0)
	if err := b.Rebuild(Rebuilt{Acked: acked, Checkpoints: cps, Counts: viewsOf(map[string]uint64{key: 7}), Batch: "inflight-n", Since: since}); err != nil {
		t.Fatal(err)
	}
	b.Close()
	b = openTest(t, path, Options{InstanceID: "ignored"})
	if b.InstanceID() != "lostbuffer01" {
		t.Errorf("instance id %q, want the adopted one", b.InstanceID())
	}
	sealed, _ := read(b, (*ReadTx).Sealed)
	if sealed == nil || sealed.ID != "inflight-n" || sealed.Hits != 7 {
		t.Fatalf("sealed %+v, want batch inflight-n of 7 hits", sealed)
	}
	s, _ := snap(b, SealedBatch)
	a, _ := snap(b, AckedBatch)
	got, _ := read(b, (*ReadTx).Checkpoints)
	last, _ := read(b, (*ReadTx).LastCommit)
	if len(s.Checkpoints) != 2 || string(s.Checkpoints["f3"]) != "at 5" || a.Batch != "prev" || string(a.Checkpoints["f1"]) != "at 10" ||
		len(got) != 2 || string(got["f1"]) != "at 40" || !last.Equal(since) || !a.SealedAt.Equal(acked.SealedAt) {
		t.Fatalf("rebuilt: sealed %+v acked %+v checkpoints %v last commit %v", s, a, got, last)
	}
	if keys, hits := b.Pending(); keys != 0 || hits != 0 {
		t.Errorf("pending %d/%d after rebuild, want all sealed", keys, hits)
	}
}
