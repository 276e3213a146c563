package buffer

import (
	"path/filepath"
	"testing"
	"time"
)

// A batch sealed now carries CurrentLayout, in the batch and its
// snapshot, through a reopen, and not beyond its ack; a rebuilt batch
// carries the layout its record names, LayoutPages when it names none.
func TestBatchLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buffer.db")
	b := openTest(t, path, Options{})
	key := string(AppendKey(nil, []byte("s"), []byte("/a"), 1_700_000_000))
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{key: 3}))}); err != nil {
		t.Fatal(err)
	}
	batch, err := b.Seal(Seal{MinuteOnly: true})
	if err != nil || batch == nil || batch.Layout != CurrentLayout || CurrentLayout != LayoutTails {
		t.Fatalf("sealed %+v, %v; want layout %d", batch, err, CurrentLayout)
	}
	b.Close()
	b = openTest(t, path, Options{})
	again, _ := read(b, (*ReadTx).Sealed)
	s, _ := snap(b, SealedBatch)
	if again.Layout != CurrentLayout || s.Layout != CurrentLayout {
		t.Fatalf("reopened: batch layout %d, snapshot layout %d; want %d", again.Layout, s.Layout, CurrentLayout)
	}
	if err := b.Ack(batch.ID); err != nil {
		t.Fatal(err)
	}
	if s, _ := snap(b, SealedBatch); s.Layout != LayoutPages {
		t.Errorf("after the ack, the sealed snapshot's layout is %d", s.Layout)
	}

	for _, l := range []Layout{LayoutPages, LayoutTails} {
		rp := filepath.Join(t.TempDir(), "rebuilt.db")
		r := openTest(t, rp, Options{InstanceID: "lostbuffer01"})
		err := r.Rebuild(Rebuilt{Checkpoints: map[string][]byte{"f": []byte("x")},
			Counts: viewsOf(map[string]uint64{key: 7}), Batch: "7:12", Layout: l, Since: time.Unix(1_700_000_100, 0)})
		if err != nil {
			t.Fatal(err)
		}
		sealed, _ := read(r, (*ReadTx).Sealed)
		if sealed == nil || sealed.ID != "7:12" || sealed.Layout != l {
			t.Errorf("rebuilt with layout %d: sealed %+v", l, sealed)
		}
		// The next batch sealed is this version's.
		if err := r.Ack("7:12"); err != nil {
			t.Fatal(err)
		}
		if err := r.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{key: 1}))}); err != nil {
			t.Fatal(err)
		}
		if next, _ := r.Seal(Seal{}); next == nil || next.Layout != CurrentLayout {
			t.Errorf("after a rebuild with layout %d, the next batch: %+v", l, next)
		}
	}
}

// SealLayoutEnv is read in a test binary only: "pages" and "tails" name
// their layouts, empty is CurrentLayout, anything else stops the binary;
// and Seal stamps the layout it chose.
func TestSealLayoutEnv(t *testing.T) {
	for _, tc := range []struct {
		inTest bool
		v      string
		want   Layout
	}{
		{false, "pages", CurrentLayout},
		{true, "", CurrentLayout},
		{true, "pages", LayoutPages},
		{true, "tails", LayoutTails},
	} {
		if got := testSealLayout(tc.inTest, tc.v); got != tc.want {
			t.Errorf("testSealLayout(%v, %q) = %d, want %d", tc.inTest, tc.v, got, tc.want)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error(`testSealLayout(true, "old") did not panic`)
			}
		}()
		testSealLayout(true, "old")
	}()

	defer func(l Layout) { sealLayout = l }(sealLayout)
	sealLayout = LayoutPages
	b := openTest(t, filepath.Join(t.TempDir(), "buffer.db"), Options{})
	key := string(AppendKey(nil, []byte("s"), []byte("/a"), 1_700_000_000))
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{key: 3}))}); err != nil {
		t.Fatal(err)
	}
	if batch, err := b.Seal(Seal{}); err != nil || batch == nil || batch.Layout != LayoutPages {
		t.Fatalf("sealed with the pages layout asked: %+v, %v", batch, err)
	}
	if again, _ := read(b, (*ReadTx).Sealed); again.Layout != LayoutPages {
		t.Errorf("read back: layout %d, want %d", again.Layout, LayoutPages)
	}
}
