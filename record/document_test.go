package record_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
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
	err := s.Begin(ctx, "buf-a",
		record.Snapshot{Batch: "batch-2", SealedAt: t0.Add(50 * time.Second),
			Checkpoints: []record.Checkpoint{{Key: "s\x00a", Value: []byte{1, 2}}, {Key: "s\x00b", Value: []byte{3}}}, MinuteOnly: true,
			Finished: record.Finished{Known: true, Files: fin}, Archives: []record.Archive{arc(1), arc(2)}},
		record.Snapshot{Batch: "batch-1", SealedAt: t0.Add(20 * time.Second), Checkpoints: []record.Checkpoint{{Key: "s\x00a", Value: []byte{1}}}},
		record.Snapshot{Batch: "batch-0", SealedAt: t0.Add(-time.Hour), Checkpoints: []record.Checkpoint{{Key: "s\x00a", Value: []byte{0}}},
			Finished: record.Finished{Known: true, Files: []record.Checkpoint{{Key: "s\x00c", Value: []byte{9, 9}}}}, Archives: []record.Archive{arc(3)}})
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
	if err := s.Begin(ctx, "buf-a", record.Snapshot{Batch: "batch-3", SealedAt: t0.Add(80 * time.Second), Checkpoints: []record.Checkpoint{{Key: "s\x00a", Value: []byte{1, 2, 3}}}},
		record.Snapshot{Batch: "batch-2", SealedAt: t0.Add(50 * time.Second)}, record.Snapshot{}); err != nil {
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

// recordV1 is Record as logtally stored it before it was split into
// snapshots (its fields, names and tags as they were): the format a
// record written by an older logtally has, and that it reads.
type recordV1 struct {
	Instance              string              `bson:"_id"`
	BufferID              string              `bson:"buffer_id"`
	Batch                 string              `bson:"batch"`
	Acked                 bool                `bson:"acked"`
	SealedAt              time.Time           `bson:"sealed_at"`
	From                  []record.Checkpoint `bson:"from"`
	FromBatch             string              `bson:"from_batch"`
	FromSealedAt          time.Time           `bson:"from_sealed_at"`
	To                    []record.Checkpoint `bson:"to"`
	MinuteOnly            bool                `bson:"minute_only,omitempty"`
	Coarse                []record.Checkpoint `bson:"coarse,omitempty"`
	CoarseBatch           string              `bson:"coarse_batch,omitempty"`
	CoarseSealedAt        time.Time           `bson:"coarse_sealed_at,omitzero"`
	Finished              []record.Checkpoint `bson:"finished,omitempty"`
	FinishedKnown         bool                `bson:"finished_known,omitempty"`
	FinishedLeftOut       int                 `bson:"finished_left_out,omitempty"`
	CoarseFinished        []record.Checkpoint `bson:"coarse_finished,omitempty"`
	CoarseFinishedKnown   bool                `bson:"coarse_finished_known,omitempty"`
	CoarseFinishedLeftOut int                 `bson:"coarse_finished_left_out,omitempty"`
	Archives              []record.Archive    `bson:"archives,omitempty"`
	ArchivesLeftOut       int                 `bson:"archives_left_out,omitempty"`
	CoarseArchives        []record.Archive    `bson:"coarse_archives,omitempty"`
	CoarseArchivesLeftOut int                 `bson:"coarse_archives_left_out,omitempty"`
	Lease                 record.Lease        `bson:"lease"`
	Updated               time.Time           `bson:"updated"`
}

// flat is r in recordV1's fields, one by one.
func flat(r record.Record) recordV1 {
	c, p, co := r.Current, r.Previous, r.Coarse
	return recordV1{
		Instance: r.Instance, BufferID: r.BufferID, Acked: r.Acked, Lease: r.Lease, Updated: r.Updated,
		Batch: c.Batch, SealedAt: c.SealedAt, To: c.Checkpoints, MinuteOnly: c.MinuteOnly,
		Finished: c.Finished.Files, FinishedKnown: c.Finished.Known, FinishedLeftOut: c.Finished.LeftOut,
		Archives: c.Archives, ArchivesLeftOut: c.ArchivesLeftOut,
		FromBatch: p.Batch, FromSealedAt: p.SealedAt, From: p.Checkpoints,
		CoarseBatch: co.Batch, CoarseSealedAt: co.SealedAt, Coarse: co.Checkpoints,
		CoarseFinished: co.Finished.Files, CoarseFinishedKnown: co.Finished.Known, CoarseFinishedLeftOut: co.Finished.LeftOut,
		CoarseArchives: co.Archives, CoarseArchivesLeftOut: co.ArchivesLeftOut,
	}
}

// TestRecordV1 reads each document of testdata/record-v1.json (written by
// the flat Record) as a Record and as the flat one, and checks that the
// two hold the same values field by field; then writes each back and
// checks that both write the same fields with the same bytes, which the
// flat record reads as the same values.
func TestRecordV1(t *testing.T) {
	for _, stage := range []string{"created", "begun", "acked", "begun_plain", "released"} {
		doc := fixture(t, stage)
		var old recordV1
		if err := bson.Unmarshal(doc, &old); err != nil {
			t.Fatal(err)
		}
		var rec record.Record
		if err := bson.Unmarshal(doc, &rec); err != nil {
			t.Fatal(err)
		}
		if got := flat(rec); !reflect.DeepEqual(got, old) {
			t.Errorf("%s: read as a Record:\n%+v\nwant, as the flat record reads it:\n%+v", stage, got, old)
		}
		back, err := bson.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		oldBack, err := bson.Marshal(old)
		if err != nil {
			t.Fatal(err)
		}
		// The flat record's own writes leave out empty lists (omitempty),
		// which read back as nil: compare with its round trip.
		var again, oldAgain recordV1
		if err := bson.Unmarshal(back, &again); err != nil {
			t.Fatal(err)
		}
		if err := bson.Unmarshal(oldBack, &oldAgain); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again, oldAgain) {
			t.Errorf("%s: written back and read by the flat record:\n%+v\nwant\n%+v", stage, again, oldAgain)
		}
		sameFields(t, stage+" written back", oldBack, back)
	}
}

// TestRecordLayout: the batch's layout is kept in Current as "layout":
// {batch, n} and read back; a record without it (every record of a
// logtally before layouts, testdata/record-v1.json) reads as layout 0,
// the batch of before whose pages each have their own buckets, and so
// does one whose layout names another batch (left by an earlier batch:
// Begin leaves the field out for layout 0, and an older logtally never
// touches it).
func TestRecordLayout(t *testing.T) {
	for _, stage := range []string{"begun", "begun_plain"} {
		var rec record.Record
		if err := bson.Unmarshal(fixture(t, stage), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Current.Layout != 0 {
			t.Errorf("%s: a record of before reads as layout %d, want 0", stage, rec.Current.Layout)
		}
		rec.Current.Layout = 1
		raw, err := bson.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		v, err := bson.Raw(raw).LookupErr("layout", "n")
		if b, berr := bson.Raw(raw).LookupErr("layout", "batch"); err != nil || berr != nil || v.AsInt64() != 1 || b.StringValue() != rec.Current.Batch {
			t.Errorf("%s: layout stored as %v, %v; want {batch: %q, n: 1}", stage, bson.Raw(raw).Lookup("layout"), err, rec.Current.Batch)
		}
		var back record.Record
		if err := bson.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if back.Current.Layout != 1 || back.Previous.Layout != 0 || back.Coarse.Layout != 0 {
			t.Errorf("%s: read back %d/%d/%d, want 1/0/0", stage, back.Current.Layout, back.Previous.Layout, back.Coarse.Layout)
		}
		// The next batch, begun by a logtally that does not know layouts.
		back.Current.Batch += "-next"
		stale, err := bson.Marshal(struct {
			Batch  string `bson:"batch"`
			Layout bson.RawValue
		}{back.Current.Batch, bson.Raw(raw).Lookup("layout")})
		if err != nil {
			t.Fatal(err)
		}
		var next record.Record
		if err := bson.Unmarshal(stale, &next); err != nil {
			t.Fatal(err)
		}
		if next.Current.Layout != 0 {
			t.Errorf("%s: a layout left by batch %q is read as batch %q's: %d", stage, rec.Current.Batch, next.Current.Batch, next.Current.Layout)
		}
	}
}
