package record_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/record"
)

var update = flag.Bool("update", false, "rewrite testdata/record-v1.json (only ever from the code that wrote records before Record was split into snapshots)")

// TestRecordDocument checks that the record document Store writes, step by
// step (created, begun with every field, acknowledged, begun with none of
// the optional ones, released), is the one in testdata/record-v1.json,
// written by logtally before Record was split: field by field, the same
// BSON types and bytes.
func TestRecordDocument(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Start(t).Database(t)
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	s := store(t, db, clk, "run-a")
	raw := func() bson.Raw {
		r, err := db.Collection(record.DefaultCollection).FindOne(ctx, bson.D{{Key: "_id", Value: "web-1"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var out bson.D
	if _, err := s.Acquire(ctx, "buf-a", true, time.Second); err != nil {
		t.Fatal(err)
	}
	out = append(out, bson.E{Key: "created", Value: raw()})
	clk.Advance(time.Minute)
	var fin []record.Checkpoint
	for i := range record.MaxFinished + 1 {
		fin = append(fin, record.Checkpoint{Key: fmt.Sprintf("f%03d", i), Value: []byte{byte(i)}})
	}
	arc := func(i int) record.Archive {
		return record.Archive{Source: "web", Path: fmt.Sprintf("/var/log/a%d.gz", i), FPLen: 1024, FPSum: -12345 - int64(i), From: 10 * int64(i), To: 10*int64(i) + 7, Parser: []byte{'p', byte(i)}}
	}
	err := s.BeginWith(ctx, "buf-a", "batch-2", t0.Add(50*time.Second),
		[]record.Checkpoint{{Key: "s\x00a", Value: []byte{1, 2}}, {Key: "s\x00b", Value: []byte{3}}},
		"batch-1", t0.Add(20*time.Second), []record.Checkpoint{{Key: "s\x00a", Value: []byte{1}}},
		record.CoarseRecord{MinuteOnly: true, Batch: "batch-0", SealedAt: t0.Add(-time.Hour), At: []record.Checkpoint{{Key: "s\x00a", Value: []byte{0}}}},
		record.Extra{
			Finished:       record.Finished{Known: true, Files: fin},
			CoarseFinished: record.Finished{Known: true, Files: []record.Checkpoint{{Key: "s\x00c", Value: []byte{9, 9}}}},
			Archives:       []record.Archive{arc(1), arc(2)},
			CoarseArchives: []record.Archive{arc(3)},
		})
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, bson.E{Key: "begun", Value: raw()})
	clk.Advance(10 * time.Second)
	if err := s.Renew(ctx, "batch-2"); err != nil {
		t.Fatal(err)
	}
	out = append(out, bson.E{Key: "acked", Value: raw()})
	clk.Advance(10 * time.Second)
	if err := s.Begin(ctx, "buf-a", "batch-3", t0.Add(80*time.Second), []record.Checkpoint{{Key: "s\x00a", Value: []byte{1, 2, 3}}},
		"batch-2", t0.Add(50*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	out = append(out, bson.E{Key: "begun_plain", Value: raw()})
	clk.Advance(time.Second)
	if err := s.Release(ctx); err != nil {
		t.Fatal(err)
	}
	out = append(out, bson.E{Key: "released", Value: raw()})
	var ind bytes.Buffer
	ind.WriteString("{\n")
	for i, e := range out {
		js, err := bson.MarshalExtJSON(e.Value, true, false)
		if err != nil {
			t.Fatal(err)
		}
		k, _ := json.Marshal(e.Key)
		ind.Write(k)
		ind.WriteString(": ")
		ind.Write(js)
		if i < len(out)-1 {
			ind.WriteByte(',')
		}
		ind.WriteByte('\n')
	}
	ind.WriteString("}\n")
	if *update {
		if err := os.WriteFile("testdata/record-v1.json", ind.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range out {
		want := fixture(t, e.Key)
		sameFields(t, e.Key, want, e.Value.(bson.Raw))
	}
}

// fixture returns the document of stage in testdata/record-v1.json.
func fixture(t *testing.T, stage string) bson.Raw {
	t.Helper()
	js, err := os.ReadFile("testdata/record-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var all bson.Raw
	if err := bson.UnmarshalExtJSON(js, true, &all); err != nil {
		t.Fatal(err)
	}
	doc, ok := all.Lookup(stage).DocumentOK()
	if !ok {
		t.Fatalf("testdata/record-v1.json has no document %q", stage)
	}
	return doc
}

// sameFields fails unless got has the fields of want, with the same types
// and bytes, and no other (in any order: the server orders fields it adds).
func sameFields(t *testing.T, what string, want, got bson.Raw) {
	t.Helper()
	we, err := want.Elements()
	if err != nil {
		t.Fatal(err)
	}
	ge, err := got.Elements()
	if err != nil {
		t.Fatal(err)
	}
	if len(ge) != len(we) {
		t.Errorf("%s: %d fields, want %d:\n got %s\nwant %s", what, len(ge), len(we), got, want)
	}
	for _, w := range we {
		g, err := got.LookupErr(w.Key())
		if err != nil {
			t.Errorf("%s: no field %q", what, w.Key())
			continue
		}
		if !g.Equal(w.Value()) {
			t.Errorf("%s: field %q = %s, want %s", what, w.Key(), g, w.Value())
		}
	}
}
