package buffer

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/stream"
)

func TestLedgerMarksTravelWithBatches(t *testing.T) {
	b := openTest(t, filepath.Join(t.TempDir(), "b.db"), Options{})
	head := []byte("line one\nline two\n")
	sum := fnv1a.Extend(fnv1a.Offset, head)
	m := Mark{FPLen: len(head), FPSum: sum, Offset: int64(len(head)), Source: "s", Path: "/a.gz"}
	key := AppendKey(nil, []byte("site"), []byte("/"), 60)
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{string(key): 2})), Marks: []Mark{m}, KeepLastCommit: true}); err != nil {
		t.Fatal(err)
	}
	if last, _ := read(b, (*ReadTx).LastCommit); !last.IsZero() {
		t.Errorf("KeepLastCommit moved the last commit to %v", last)
	}
	// A smaller offset under the same key never moves it back.
	small := m
	small.Offset = 3
	if err := b.Commit(Commit{Marks: []Mark{small}}); err != nil {
		t.Fatal(err)
	}
	got, err := readErr(b, func(tx *ReadTx) (map[string]stream.Entry, error) { return tx.Ledger(stream.LedgerCandidates(head)) })
	if err != nil {
		t.Fatal(err)
	}
	e, ok := got[m.Key()]
	if !ok || e.Offset != m.Offset || e.Acked != 0 || e.Path != "/a.gz" {
		t.Fatalf("entry %+v (found %v)", e, ok)
	}
	// A longer stream beginning with the same lines finds it too.
	if got, err := readErr(b, func(tx *ReadTx) ([]stream.Entry, error) { return tx.Streams(append(head, "line three\n"...)) }); err != nil || len(got) != 1 || got[0].Offset != m.Offset {
		t.Fatalf("Streams: %+v, %v", got, err)
	}
	batch, err := b.Seal(Seal{})
	if err != nil || batch == nil {
		t.Fatal(batch, err)
	}
	marks, err := readErr(b, func(tx *ReadTx) ([]stream.Entry, error) { return tx.BatchMarks(batch.ID) })
	if err != nil || len(marks) != 1 || marks[0].Offset != m.Offset {
		t.Fatalf("batch marks %+v, %v", marks, err)
	}
	if err := b.Ack(batch.ID); err != nil {
		t.Fatal(err)
	}
	got, _ = readErr(b, func(tx *ReadTx) (map[string]stream.Entry, error) { return tx.Ledger([]string{m.Key()}) })
	if got[m.Key()].Acked != m.Offset {
		t.Fatalf("acked %d, want %d", got[m.Key()].Acked, m.Offset)
	}
	// Marks alone make a batch (nothing else would carry them to MongoDB).
	m2 := Mark{FPLen: 4, FPSum: 7, Offset: 4}
	if err := b.Commit(Commit{Marks: []Mark{m2}}); err != nil {
		t.Fatal(err)
	}
	batch, err = b.Seal(Seal{})
	if err != nil || batch == nil || batch.Keys != 0 {
		t.Fatalf("marks-only batch %+v, %v", batch, err)
	}
	if marks, _ := readErr(b, func(tx *ReadTx) ([]stream.Entry, error) { return tx.BatchMarks(batch.ID) }); len(marks) != 1 || marks[0].Key() != m2.Key() {
		t.Fatalf("marks-only batch marks %+v", marks)
	}
	if err := b.Ack(batch.ID); err != nil {
		t.Fatal(err)
	}
	if batch, _ := b.Seal(Seal{}); batch != nil {
		t.Fatalf("empty seal gave %+v", batch)
	}
}

func TestLedgerPrune(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	b := openTest(t, filepath.Join(t.TempDir(), "b.db"), Options{LedgerRetention: time.Hour, Clock: clk})
	m := Mark{FPLen: 4, FPSum: 1, Offset: 4}
	if err := b.Commit(Commit{Marks: []Mark{m}}); err != nil {
		t.Fatal(err)
	}
	// Two hours later a second stream moves; at the seal the first
	// entry, two hours old, expires and the second, new, stays.
	clk.Advance(2 * time.Hour)
	m2 := Mark{FPLen: 4, FPSum: 2, Offset: 4}
	if err := b.Commit(Commit{Marks: []Mark{m2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Seal(Seal{}); err != nil {
		t.Fatal(err)
	}
	if all, _ := read(b, func(tx *ReadTx) []stream.Entry { return tx.LedgerEntries(func(stream.Entry) bool { return true }) }); len(all) != 1 {
		t.Fatalf("%d entries after the first's retention, want the second's only", len(all))
	}
}

// A followed file shrunk in place lowers its stream's entry (Mark.Lower):
// a restart must not take the old, greater offset for the stream and skip
// the lines written after the cut. The acknowledged offset never stays
// past what is counted, also when a batch sealed before the shrink is
// acknowledged after it.
func TestLedgerLoweredByShrink(t *testing.T) {
	b := openTest(t, filepath.Join(t.TempDir(), "b.db"), Options{})
	head := []byte("line one\nline two\n")
	sum := fnv1a.Extend(fnv1a.Offset, head)
	m := Mark{FPLen: len(head), FPSum: sum, Offset: 1000, Source: "s", Path: "/access.log"}
	if err := b.Commit(Commit{Marks: []Mark{m}}); err != nil {
		t.Fatal(err)
	}
	batch, err := b.Seal(Seal{})
	if err != nil || batch == nil {
		t.Fatal(batch, err)
	}
	shrunk := m
	shrunk.Offset, shrunk.Lower = 500, true
	if err := b.Commit(Commit{Marks: []Mark{shrunk}}); err != nil {
		t.Fatal(err)
	}
	if e, err := entry(b, m.Key()); err != nil || e.Offset != 500 {
		t.Fatalf("after the shrink: %+v, %v; want offset 500", e, err)
	}
	if err := b.Ack(batch.ID); err != nil { // the batch sealed at 1000
		t.Fatal(err)
	}
	if e, _ := entry(b, m.Key()); e.Offset != 500 || e.Acked != 500 {
		t.Fatalf("after the ack of the batch sealed before the shrink: %+v; want offset and acked 500", e)
	}
	// Lines after the cut move it forward again; a mark without Lower
	// never moves it back.
	on := m
	on.Offset = 700
	if err := b.Commit(Commit{Marks: []Mark{on}}); err != nil {
		t.Fatal(err)
	}
	back := m
	back.Offset = 600
	if err := b.Commit(Commit{Marks: []Mark{back}}); err != nil {
		t.Fatal(err)
	}
	if e, _ := entry(b, m.Key()); e.Offset != 700 {
		t.Fatalf("entry at %d, want 700", e.Offset)
	}
}

// Counts out of order, or a key given twice (which would count twice),
// are refused, and nothing of the commit is written.
func TestCommitRefusesUnsortedCounts(t *testing.T) {
	b := openTest(t, filepath.Join(t.TempDir(), "b.db"), Options{})
	one := measure.OfViews(1)
	k1, k2 := AppendKey(nil, []byte("s"), []byte("/a"), 60), AppendKey(nil, []byte("s"), []byte("/b"), 60)
	for name, counts := range map[string][]Count{
		"unsorted": {{Key: k2, V: &one}, {Key: k1, V: &one}},
		"twice":    {{Key: k1, V: &one}, {Key: k2, V: &one}, {Key: k2, V: &one}},
	} {
		err := b.Commit(Commit{Counts: counts, Checkpoints: map[string][]byte{"f": []byte("1")}})
		if err == nil {
			t.Errorf("%s: committed", name)
		} else if strings.Contains(err.Error(), fmt.Sprintf("%x", "/b")) || strings.Contains(err.Error(), "/b") {
			t.Errorf("%s: the error names the key (a page of the log): %v", name, err)
		}
		if keys, hits := b.Pending(); keys != 0 || hits != 0 {
			t.Errorf("%s: %d keys, %d hits pending after a refused commit", name, keys, hits)
		}
		if cps, err := read(b, (*ReadTx).Checkpoints); err != nil || len(cps) != 0 {
			t.Errorf("%s: checkpoints %v, %v after a refused commit", name, cps, err)
		}
	}
	if err := b.Commit(Commit{Counts: []Count{{Key: k1, V: &one}, {Key: k2, V: &one}}}); err != nil {
		t.Fatal(err)
	}
	if keys, hits := b.Pending(); keys != 2 || hits != 2 {
		t.Errorf("%d keys, %d hits pending; want 2, 2", keys, hits)
	}
}

// entry returns the ledger entry under key.
func entry(b *Buffer, key string) (stream.Entry, error) {
	got, err := readErr(b, func(tx *ReadTx) (map[string]stream.Entry, error) { return tx.Ledger([]string{key}) })
	return got[key], err
}

// Streams that begin with the same bytes keep an entry each (their Stream
// ids), each with the tail check of its own offset; Streams returns them
// all, and the entry of an older logtally's kind (no stream) too. A mark
// behind its entry keeps the entry's offset and tail check together.
func TestLedgerStreamsApart(t *testing.T) {
	b := openTest(t, filepath.Join(t.TempDir(), "b.db"), Options{})
	head := []byte(strings.Repeat("the same banner line\n", 60))[:1024]
	sum := fnv1a.Extend(fnv1a.Offset, head)
	a := Mark{FPLen: 1024, FPSum: sum, Offset: 60000, Stream: 1, TailLen: 1024, TailSum: 11, Source: "web", Path: "/a"}
	c := Mark{FPLen: 1024, FPSum: sum, Offset: 3000, Stream: 2, TailLen: 1024, TailSum: 22, Source: "web", Path: "/c"}
	old := Mark{FPLen: 1024, FPSum: sum, Offset: 500, Source: "web", Path: "/old"}
	if err := b.Commit(Commit{Marks: []Mark{a, c, old}}); err != nil {
		t.Fatal(err)
	}
	behind := a
	behind.Offset, behind.TailSum = 100, 99
	if err := b.Commit(Commit{Marks: []Mark{behind}}); err != nil {
		t.Fatal(err)
	}
	got, err := readErr(b, func(tx *ReadTx) ([]stream.Entry, error) { return tx.Streams(head) })
	if err != nil {
		t.Fatal(err)
	}
	byStream := map[uint64]stream.Entry{}
	for _, e := range got {
		byStream[e.Stream] = e
	}
	if len(got) != 3 || byStream[1].Offset != 60000 || byStream[1].TailSum != 11 || byStream[2].Offset != 3000 || byStream[2].TailSum != 22 ||
		byStream[0].Offset != 500 || byStream[0].TailLen != 0 {
		t.Fatalf("entries %+v", got)
	}
	if k := a.Key(); len(k) != 18 || k[:10] != stream.LedgerKey(1024, sum) {
		t.Fatalf("a stream's key %x", k)
	}
	if fpLen, fpSum, id, ok := stream.ParseEntryKey(c.Key()); !ok || fpLen != 1024 || fpSum != sum || id != 2 {
		t.Fatalf("ParseEntryKey: %d %x %d %v", fpLen, fpSum, id, ok)
	}
}

// An entry stored by an older logtally (value version 1: no tail check)
// is read, without one.
func TestLedgerEntryVersion1(t *testing.T) {
	k := []byte(stream.LedgerKey(10, 99))
	v := []byte{1}
	for _, n := range []uint64{500, 400, uint64(time.Unix(1e9, 0).UnixNano())} {
		v = binary.AppendUvarint(v, n)
	}
	v = append(binary.AppendUvarint(v, 3), "web"...)
	v = append(binary.AppendUvarint(v, 2), "/a"...)
	e, err := decodeEntry(k, v)
	if err != nil || e.Offset != 500 || e.Acked != 400 || e.Source != "web" || e.Path != "/a" || e.TailLen != 0 || e.Stream != 0 {
		t.Fatalf("decoded %+v, %v", e, err)
	}
	if got, err := decodeEntry(k, encodeEntry(stream.Entry{FPLen: 10, FPSum: 99, Offset: 7, TailLen: 7, TailSum: 5})); err != nil || got.TailLen != 7 || got.TailSum != 5 {
		t.Fatalf("round trip %+v, %v", got, err)
	}
}

func TestLedgerEntries(t *testing.T) {
	b := openTest(t, filepath.Join(t.TempDir(), "b.db"), Options{})
	var marks []Mark
	for i, src := range []string{"a", "b", "a"} {
		marks = append(marks, Mark{FPLen: 10, FPSum: uint64(i + 1), Offset: int64(100 * (i + 1)), Stream: uint64(i + 7), Source: src, Path: fmt.Sprintf("/l/%d.log", i)})
	}
	if err := b.Commit(Commit{Marks: marks, KeepLastCommit: true}); err != nil {
		t.Fatal(err)
	}
	got, err := read(b, func(tx *ReadTx) []stream.Entry {
		return tx.LedgerEntries(func(e stream.Entry) bool { return e.Source == "a" })
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Key() != marks[0].Key() || got[1].Key() != marks[2].Key() ||
		got[0].Offset != 100 || got[1].Offset != 300 || got[1].Path != "/l/2.log" || got[1].Stream != 9 {
		t.Errorf("entries of a: %+v, want the first and third marks", got)
	}
	if all, _ := read(b, func(tx *ReadTx) []stream.Entry { return tx.LedgerEntries(func(stream.Entry) bool { return true }) }); len(all) != 3 {
		t.Errorf("%d entries, want 3", len(all))
	}
}
