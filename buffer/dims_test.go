package buffer

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/logtally/logtally/dims"
)

// dimCounts returns counts as Commit takes them.
func dimCounts(m map[string]uint64) []DimCount {
	out := make([]DimCount, 0, len(m))
	for k, n := range m {
		out = append(out, DimCount{Key: []byte(k), N: n})
	}
	SortDimCounts(out)
	return out
}

func scanDims(t *testing.T, b *Buffer, id string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	if err := b.View(func(tx *ReadTx) error {
		return tx.ScanDims(id, func(k []byte, n uint64) bool { out[string(k)] = n; return true })
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDimKeyRoundTrip(t *testing.T) {
	for _, c := range []struct {
		site, value string
		d           dims.Dim
		day         int64
	}{{"www.example.com", "google.com", dims.Referrer, 1764288000}, {"", "", dims.Crawler, -86400}, {"s", "AS15169 Google LLC", dims.ASN, 0}} {
		k := AppendDimKey(nil, []byte(c.site), c.d, c.value, c.day)
		site, d, value, day, err := DecodeDimKey(k)
		if err != nil || string(site) != c.site || d != c.d || string(value) != c.value || day != c.day {
			t.Errorf("%+v: decoded %q %v %q %d, %v", c, site, d, value, day, err)
		}
		for i := range k {
			if _, _, _, _, err := DecodeDimKey(k[:i]); err == nil {
				t.Errorf("%+v: a key cut to %d bytes decoded", c, i)
			}
		}
	}
	if _, _, _, _, err := DecodeDimKey(AppendDimKey(nil, []byte("s"), dims.N, "v", 0)); err == nil {
		t.Error("a key of no dimension decoded")
	}
	// Lengths whose sum with what follows them wraps (a damaged file):
	// an error, not a panic.
	for _, k := range [][]byte{
		append(binary.AppendUvarint(nil, math.MaxUint64), 0, 1, 2),
		append([]byte{1, 's', byte(dims.Referrer)}, binary.AppendUvarint(nil, math.MaxUint64-7)...),
	} {
		if _, _, _, _, err := DecodeDimKey(k); err == nil {
			t.Errorf("key %x decoded", k)
		}
	}
}

// Dimension counts are committed with the page counts, added per key,
// and go with the next full batch only: a minute-only seal leaves them
// pending; the full batch's Ack deletes them. They never count as hits.
func TestDimsGoWithFullBatches(t *testing.T) {
	b := openTest(t, filepath.Join(t.TempDir(), "b.db"), Options{})
	k := func(page string, sec int64) string { return string(AppendKey(nil, []byte("s"), []byte(page), sec)) }
	dk := func(d dims.Dim, v string) string { return string(AppendDimKey(nil, []byte("s"), d, v, 0)) }
	commit := func(pages map[string]uint64, ds map[string]uint64) {
		t.Helper()
		if err := b.Commit(Commit{Counts: CountsOf(viewsOf(pages)), Dims: dimCounts(ds)}); err != nil {
			t.Fatal(err)
		}
	}
	commit(map[string]uint64{k("/a", 60): 2}, map[string]uint64{dk(dims.Channel, "search"): 2, dk(dims.Browser, "Firefox"): 2})
	commit(map[string]uint64{k("/a", 61): 1}, map[string]uint64{dk(dims.Channel, "search"): 1, dk(dims.Browser, "Chrome"): 1})
	if keys, hits := b.Pending(); keys != 2 || hits != 3 {
		t.Errorf("pending %d keys %d hits, want 2 and 3 (dimension counts are not hits)", keys, hits)
	}
	m, err := b.Seal(Seal{MinuteOnly: true})
	if err != nil || m == nil {
		t.Fatalf("minute-only seal: %+v, %v", m, err)
	}
	if got := scanDims(t, b, m.ID); len(got) != 0 {
		t.Errorf("a minute-only batch carries dimension counts: %v", got)
	}
	if err := b.Ack(m.ID); err != nil {
		t.Fatal(err)
	}
	var keys int
	var hits uint64
	b.View(func(tx *ReadTx) error { keys, hits = tx.PendingDims(); return nil })
	if keys != 3 || hits != 6 {
		t.Errorf("pending dimension counts %d keys %d hits, want 3 and 6", keys, hits)
	}
	commit(map[string]uint64{k("/b", 120): 1}, map[string]uint64{dk(dims.Channel, "search"): 1, dk(dims.Browser, "Firefox"): 1})
	full, err := b.Seal(Seal{})
	if err != nil || full == nil || full.MinuteOnly {
		t.Fatalf("full seal: %+v, %v", full, err)
	}
	want := map[string]uint64{dk(dims.Channel, "search"): 4, dk(dims.Browser, "Firefox"): 3, dk(dims.Browser, "Chrome"): 1}
	if got := scanDims(t, b, full.ID); !reflect.DeepEqual(got, want) {
		t.Errorf("the full batch's dimension counts %v, want %v", got, want)
	}
	// Counted meanwhile: pending for the next full batch.
	commit(map[string]uint64{k("/b", 121): 1}, map[string]uint64{dk(dims.Channel, "direct"): 1})
	if err := b.Ack(full.ID); err != nil {
		t.Fatal(err)
	}
	b.View(func(tx *ReadTx) error { keys, hits = tx.PendingDims(); return nil })
	if keys != 1 || hits != 1 {
		t.Errorf("after the ack: pending dimension counts %d keys %d hits, want the one committed meanwhile", keys, hits)
	}
	next, err := b.Seal(Seal{})
	if err != nil || next == nil {
		t.Fatalf("seal: %+v, %v", next, err)
	}
	if got := scanDims(t, b, next.ID); !reflect.DeepEqual(got, map[string]uint64{dk(dims.Channel, "direct"): 1}) {
		t.Errorf("the next batch's dimension counts %v", got)
	}
	if err := b.Commit(Commit{Dims: []DimCount{{Key: []byte(dk(dims.OS, "b")), N: 1}, {Key: []byte(dk(dims.OS, "a")), N: 1}}}); err == nil {
		t.Error("unsorted dimension counts committed")
	}
}

// A batch in flight keeps its dimension counts across a reopen.
func TestDimsSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.db")
	b := openTest(t, path, Options{})
	dk := string(AppendDimKey(nil, []byte("s"), dims.Country, "DE", 0))
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{string(AppendKey(nil, []byte("s"), []byte("/"), 5)): 1})), Dims: dimCounts(map[string]uint64{dk: 1})}); err != nil {
		t.Fatal(err)
	}
	batch, err := b.Seal(Seal{})
	if err != nil || batch == nil {
		t.Fatal(batch, err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openTest(t, path, Options{})
	if got := scanDims(t, b, batch.ID); got[dk] != 1 || len(got) != 1 {
		t.Errorf("after a reopen: %v", got)
	}
}

func TestMergeDimCounts(t *testing.T) {
	k := func(v string) []byte { return AppendDimKey(nil, []byte("s"), dims.Referrer, v, 0) }
	got := MergeDimCounts([]DimCount{{k("b"), 1}, {k("a"), 2}, {k("b"), 3}, {k("c"), 1}, {k("a"), 1}})
	want := []DimCount{{k("a"), 3}, {k("b"), 4}, {k("c"), 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MergeDimCounts = %v, want %v", got, want)
	}
	if MergeDimCounts(nil) != nil {
		t.Error("MergeDimCounts(nil) is not nil")
	}
}
