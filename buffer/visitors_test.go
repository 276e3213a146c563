package buffer

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/logtally/logtally/visitor"
	bolt "go.etcd.io/bbolt"
)

func sketchOf(p uint8, regs map[int]uint8) *visitor.Sketch {
	s := &visitor.Sketch{P: p, R: make([]uint8, 1<<p)}
	for i, r := range regs {
		s.R[i] = r
	}
	return s
}

// Registers merge by maximum across commits; VisitorRises returns only
// those above what was sent; a sketch fully sent is dropped once old.
func TestVisitorRegisters(t *testing.T) {
	b := open(t, filepath.Join(t.TempDir(), "buffer.db"))
	defer b.Close()
	day := int64(1_764_028_800) // 2025-11-25
	k := VisitorKey(day, []byte("example.com"), nil)
	commit := func(regs map[int]uint8) {
		t.Helper()
		if err := b.Commit(Commit{Visitors: map[string]*visitor.Sketch{k: sketchOf(4, regs)}}); err != nil {
			t.Fatal(err)
		}
	}
	commit(map[int]uint8{1: 3, 5: 2})
	commit(map[int]uint8{1: 2, 7: 4}) // 1 stays 3
	rs, err := readErr(b, (*ReadTx).VisitorRises)
	if err != nil || len(rs) != 1 {
		t.Fatalf("rises %v, %v", rs, err)
	}
	if r := rs[0]; r.Site != "example.com" || r.Page != "" || r.Start != day || r.P != 4 || len(r.Regs) != 3 ||
		r.Regs[0] != (Register{1, 3}) || r.Regs[1] != (Register{5, 2}) || r.Regs[2] != (Register{7, 4}) {
		t.Fatalf("rise %+v", r)
	}
	if err := b.Update(func(tx *Tx) error { return tx.MarkVisitorsSent(rs) }); err != nil {
		t.Fatal(err)
	}
	if rs, _ := readErr(b, (*ReadTx).VisitorRises); len(rs) != 0 {
		t.Fatalf("rises after sent: %+v", rs)
	}
	commit(map[int]uint8{5: 6})
	rs, _ = readErr(b, (*ReadTx).VisitorRises)
	if len(rs) != 1 || len(rs[0].Regs) != 1 || rs[0].Regs[0] != (Register{5, 6}) {
		t.Fatalf("rises after a new maximum: %+v", rs)
	}
	if n, err := dropVisitors(b, day+86400); err != nil || n != 0 {
		t.Fatalf("dropped %d (%v) with a register unsent", n, err)
	}
	b.Update(func(tx *Tx) error { return tx.MarkVisitorsSent(rs) })
	if n, err := dropVisitors(b, day); err != nil || n != 0 {
		t.Fatalf("dropped %d (%v) a sketch not before the bound", n, err)
	}
	if n, err := dropVisitors(b, day+86400); err != nil || n != 1 {
		t.Fatalf("dropped %d (%v), want the sent sketch", n, err)
	}
	// A precision that changed is an error, not a silent merge.
	if err := b.Commit(Commit{Visitors: map[string]*visitor.Sketch{k: sketchOf(4, nil)}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(Commit{Visitors: map[string]*visitor.Sketch{k: sketchOf(5, nil)}}); err == nil {
		t.Fatal("merged sketches of two precisions")
	}
}

func TestSalts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buffer.db")
	b := open(t, path)
	exp := time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)
	e := SaltEntry{ID: "day:20261125", Expires: exp}
	copy(e.Salt[:], "0123456789abcdef")
	if err := b.Update(func(tx *Tx) error { return tx.PutSalt(e) }); err != nil {
		t.Fatal(err)
	}
	b.Close()
	b = open(t, path)
	defer b.Close()
	es, err := readErr(b, (*ReadTx).Salts)
	if err != nil || len(es) != 1 || es[0].ID != e.ID || es[0].Salt != e.Salt || !es[0].Expires.Equal(exp) {
		t.Fatalf("salts %+v, %v", es, err)
	}
	if err := b.Update(func(tx *Tx) error { return tx.DeleteSalt(e.ID) }); err != nil {
		t.Fatal(err)
	}
	if es, _ := readErr(b, (*ReadTx).Salts); len(es) != 0 {
		t.Fatalf("salts after delete: %+v", es)
	}
}

// A page's sketch is kept sparse, beside its site's, and read back with
// its page.
func TestVisitorPageSketch(t *testing.T) {
	b := open(t, filepath.Join(t.TempDir(), "buffer.db"))
	defer b.Close()
	day := int64(1_764_028_800)
	page := visitor.NewSparse(10)
	page.SetMax(3, 2)
	page.SetMax(900, 5)
	k := VisitorKey(day, []byte("example.com"), []byte("/a"))
	if err := b.Commit(Commit{Visitors: map[string]*visitor.Sketch{k: page,
		VisitorKey(day, []byte("example.com"), nil): sketchOf(4, map[int]uint8{1: 1})}}); err != nil {
		t.Fatal(err)
	}
	rs, err := readErr(b, (*ReadTx).VisitorRises)
	if err != nil || len(rs) != 2 {
		t.Fatalf("rises %+v, %v", rs, err)
	}
	var pr VisitorRise
	for _, r := range rs {
		if r.Page == "/a" {
			pr = r
		}
	}
	if pr.Site != "example.com" || pr.P != 10 || len(pr.Regs) != 2 || pr.Regs[0] != (Register{3, 2}) || pr.Regs[1] != (Register{900, 5}) {
		t.Fatalf("page rise %+v", pr)
	}
	var size int
	b.view(func(tx *bolt.Tx) error { size = len(tx.Bucket(bktVisitors).Get([]byte(k))); return nil })
	if size > 32 {
		t.Errorf("a page sketch of 2 registers takes %d bytes stored, want it sparse", size)
	}
	if st, si, pg, err := DecodeVisitorKey([]byte(k)); err != nil || st != day || string(si) != "example.com" || string(pg) != "/a" {
		t.Errorf("DecodeVisitorKey = %d %q %q %v", st, si, pg, err)
	}
}

// dropVisitors is Tx.DropVisitors in a transaction of its own.
func dropVisitors(b *Buffer, before int64) (n int, err error) {
	err = b.Update(func(tx *Tx) (err error) { n, err = tx.DropVisitors(before); return err })
	return n, err
}
