package flusher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/measure"
)

// A bucket inserted whole is, byte for byte on the real server, the
// document the zero-filled insert and the guarded update make: for every
// level and a site's day, with counters and measures in several slots, a
// maximum, and counts past 2^31 (an int32 measure widened to int64).
func TestWholeInsertEqualsZeroAndUpdate(t *testing.T) {
	e := newEnv(t, 4)
	ctx := context.Background()
	at := time.Date(2024, 2, 29, 23, 59, 58, 0, time.UTC).Unix() // a leap day's last minute
	hits := []measure.Hit{
		{Status: 200, Bytes: 512, RT: 1500},
		{Status: 404, Bot: botclass.AI, Bytes: 100, RT: -1},
		{Status: 503, Bytes: 7, RT: 90000},
	}
	var docs []guarded
	for l := range bucket.Level(bucket.Levels) {
		d := bucket.NewDoc(l, "www.example.com", "/a/b", at)
		for i, h := range hits {
			var v measure.Vector
			v.Add(&h)
			d.Add(at+int64(i/2), &v)
		}
		big := measure.OfViews(3_000_000_000)
		big[measure.Status2xx] = 3_000_000_000
		d.Add(at+1, &big)
		docs = append(docs, &d)
	}
	s := bucket.SiteDoc{ID: bucket.SiteID(at, "www.example.com"), Site: "www.example.com", Start: at - at%86400}
	for _, h := range hits {
		s.V.Add(&h)
	}
	docs = append(docs, &s)

	for gi, g := range []bucket.Guard{e.f.guard("00112233445566778899aabb"), e.f.guard(buffer.BatchID(7, 1<<40))} {
		viaUpdate, viaWhole := e.db.Collection(fmt.Sprintf("via_update%d", gi)), e.db.Collection(fmt.Sprintf("via_whole%d", gi))
		for _, d := range docs {
			if _, err := viaUpdate.InsertOne(ctx, d.Zero()); err != nil {
				t.Fatal(err)
			}
			filter, update := d.Update(g)
			if res, err := viaUpdate.UpdateOne(ctx, filter, update); err != nil || res.MatchedCount != 1 {
				t.Fatalf("%s: update = %+v, %v", d.DocID(), res, err)
			}
			whole, err := d.Whole(g)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := viaWhole.InsertOne(ctx, whole); err != nil {
				t.Fatal(err)
			}
			id := bson.D{{Key: "_id", Value: d.DocID()}}
			want, err := viaUpdate.FindOne(ctx, id).Raw()
			if err != nil {
				t.Fatal(err)
			}
			got, err := viaWhole.FindOne(ctx, id).Raw()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s (%s) inserted whole:\n%v\nzero-filled and updated:\n%v", d.DocID(), g.Field, got, want)
			}
		}
	}
}

// A batch whose whole insert reached the server but whose reply was lost
// (the insert's error stands for it) is retried after a restart (the
// known set empty): the insert meets the duplicates, their guard stops
// the update, the find sees the batch in them, and everything counts
// once.
func TestWholeInsertRetriedCountsOnce(t *testing.T) {
	e := newEnv(t, 4)
	e.commit(t, small()...)
	lost := errors.New("reply lost")
	testHooks(e.f).afterWhole = func(p pass) error {
		if p == minutePass {
			return lost
		}
		return nil
	}
	if _, err := e.f.Flush(context.Background()); !errors.Is(err, lost) {
		t.Fatalf("Flush = %v, want the lost reply", err)
	}
	// The 4 minute buckets hold this batch already; a restart.
	e.f = e.newFlusher(t, Config{MaxOps: 4})
	e.flush(t)
	e.check(t)
	// The minute chunk: 4 duplicates, 4 updates that do not match, a find
	// that sees the batch in all 4; the daily (2), monthly (2) and site
	// (1) documents inserted whole.
	st := e.f.Stats()
	if st.InsertDups != 4 || st.Updates != 4 || st.Finds != 1 || st.Inserts != 2+2+1 {
		t.Errorf("retry: %+v, want 4 duplicates, 4 updates, 1 find, 5 inserts", st)
	}
}
