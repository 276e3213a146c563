package flusher

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/buffer"
)

// A batch's ledger marks reach MongoDB's ledger before its acknowledgement,
// never move it back, and entries older than the retention are deleted.
func TestLedgerMarksReachMongoDB(t *testing.T) {
	e := newEnv(t, 8)
	ctx := context.Background()
	m := buffer.Mark{FPLen: 1024, FPSum: 0xfeed, Offset: 5000, Source: "s", Path: "/logs/a.log.gz"}
	key := buffer.AppendKey(nil, []byte("s"), []byte("/"), 1_700_000_000)
	if err := e.buf.CommitWith(buffer.Commit{Counts: map[string]uint64{string(key): 3}, Marks: []buffer.Mark{m}}); err != nil {
		t.Fatal(err)
	}
	e.flush(t)
	got, err := e.f.ReadLedger(ctx, []string{m.Key(), buffer.LedgerKey(7, 7)})
	if err != nil || len(got) != 1 || got[m.Key()] != 5000 {
		t.Fatalf("ledger %v, %v; want %s at 5000", got, err, LedgerID(m.Key()))
	}
	if led, _ := e.buf.Ledger([]string{m.Key()}); led[m.Key()].Acked != 5000 {
		t.Errorf("buffer ledger %+v: not acknowledged", led[m.Key()])
	}
	// A smaller offset (a marks-only batch) does not move it back.
	m.Offset = 100
	if err := e.buf.CommitWith(buffer.Commit{Marks: []buffer.Mark{m}}); err != nil {
		t.Fatal(err)
	}
	e.flush(t)
	if got, _ := e.f.ReadLedger(ctx, []string{m.Key()}); got[m.Key()] != 5000 {
		t.Fatalf("ledger moved back to %d", got[m.Key()])
	}

	coll := e.db.Collection(LedgerCollection)
	old := time.Now().Add(-buffer.DefaultLedgerRetention - time.Hour)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "9:0000000000000009"}, {Key: "offset", Value: 9}, {Key: "updated", Value: old}}); err != nil {
		t.Fatal(err)
	}
	if err := e.f.expirer.ensureLedgerExpiry(ctx); err != nil {
		t.Fatal(err)
	}
	if e.f.expirer.ledgerExp.getMode() == ExpiryTTL {
		t.Skip("the server takes TTL indexes (MONGODB_URI): the deleteMany fallback is not used")
	}
	e.f.expirer.expireLedger(ctx, time.Now())
	n, err := coll.CountDocuments(ctx, bson.D{})
	if err != nil || n != 1 || e.f.expirer.ledgerExp.deleted.Load() != 1 {
		t.Fatalf("%d entries left (%v), %d deleted; want the old one gone", n, err, e.f.expirer.ledgerExp.deleted.Load())
	}
}
