package buffer

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/logtally/logtally/measure"
)

// Every measure of a key survives commits, the seal and the coarse counts:
// sums add up across commits, the maximum stays the greatest.
func TestMeasuresMergeAcrossCommits(t *testing.T) {
	b := open(t, filepath.Join(t.TempDir(), "buffer.db"))
	defer b.Close()
	k := key("s", "/a", 60)
	hit := func(status int, bytes uint64, rt int64) measure.Vector {
		var v measure.Vector
		v.Add(&measure.Hit{Status: status, Bytes: bytes, RT: rt, Bot: 2})
		return v
	}
	if err := b.Commit(Commit{Counts: CountsOf(map[string]measure.Vector{k: hit(200, 100, 5000)})}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(Commit{Counts: CountsOf(map[string]measure.Vector{k: hit(404, 7, 90000)})}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(Commit{Counts: CountsOf(map[string]measure.Vector{k: hit(500, 0, -1)})}); err != nil {
		t.Fatal(err)
	}
	want := hit(200, 100, 5000)
	for _, o := range []measure.Vector{hit(404, 7, 90000), hit(500, 0, -1)} {
		want.Merge(&o)
	}
	if want[measure.Views] != 3 || want[measure.RTMax] != 90000 || want[measure.RTCount] != 2 || want[measure.BotAI] != 3 {
		t.Fatalf("test vector wrong: %v", &want)
	}
	batch, err := b.Seal(Seal{})
	if err != nil || batch == nil {
		t.Fatal(batch, err)
	}
	if batch.Hits != 3 {
		t.Fatalf("batch hits %d, want 3", batch.Hits)
	}
	var got measure.Vector
	if err := scanBatch(b)(batch.ID, nil, func(_ []byte, v *measure.Vector) bool { got = *v; return true }); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("scanned %v, want %v", &got, &want)
	}
}

// A version-1 buffer (counts of 8 bytes, the views alone) is read, and
// marked version 2 once opened read-write, so an older logtally refuses it.
func TestLegacyCountsRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buffer.db")
	b := open(t, path)
	k := key("s", "/a", 60)
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{k: 1}))}); err != nil {
		t.Fatal(err)
	}
	b.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bktMeta).Put(keyFormat, u64(formatVersionV1)); err != nil {
			return err
		}
		return tx.Bucket(bktPending).Bucket(subCounts).Put([]byte(k), binary.BigEndian.AppendUint64(nil, 41))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	b = open(t, path)
	defer b.Close()
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{k: 1}))}); err != nil {
		t.Fatal(err)
	}
	batch, err := b.Seal(Seal{})
	if err != nil {
		t.Fatal(err)
	}
	var got measure.Vector
	if err := scanBatch(b)(batch.ID, nil, func(_ []byte, v *measure.Vector) bool { got = *v; return true }); err != nil {
		t.Fatal(err)
	}
	if got[measure.Views] != 42 {
		t.Fatalf("views %d, want 42 (41 legacy + 1)", got[measure.Views])
	}
	var format uint64
	b.view(func(tx *bolt.Tx) error {
		format = binary.BigEndian.Uint64(tx.Bucket(bktMeta).Get(keyFormat))
		return nil
	})
	if format != formatVersion {
		t.Fatalf("format %d after opening read-write, want %d", format, formatVersion)
	}
}
