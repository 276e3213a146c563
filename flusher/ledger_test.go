package flusher

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/ledger"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/stream"
)

// ledger returns the store of the env's database's ledger, which the
// flusher's marks reach.
func (e *env) ledger() *ledger.Store { return ledger.New(e.db, 0) }

// A batch's ledger marks reach MongoDB's ledger before its acknowledgement,
// never move it back, and entries older than the retention are deleted.
func TestLedgerMarksReachMongoDB(t *testing.T) {
	e := newEnv(t, 8)
	ctx := context.Background()
	m := buffer.Mark{FPLen: 1024, FPSum: 0xfeed, Offset: 5000, Source: "s", Path: "/logs/a.log.gz"}
	key := buffer.AppendKey(nil, []byte("s"), []byte("/"), 1_700_000_000)
	if err := e.buf.Commit(buffer.Commit{Counts: buffer.CountsOf(map[string]measure.Vector{string(key): measure.OfViews(3)}), Marks: []buffer.Mark{m}}); err != nil {
		t.Fatal(err)
	}
	e.flush(t)
	got, err := e.ledger().Read(ctx, []string{m.Key(), stream.LedgerKey(7, 7)})
	if err != nil || len(got) != 1 || got[0].Offset != 5000 || got[0].Key() != m.Key() {
		t.Fatalf("ledger %v, %v; want %s at 5000", got, err, stream.LedgerID(m.Key()))
	}
	var led map[string]stream.Entry
	e.buf.View(func(tx *buffer.ReadTx) (err error) { led, err = tx.Ledger([]string{m.Key()}); return err })
	if led[m.Key()].Acked != 5000 {
		t.Errorf("buffer ledger %+v: not acknowledged", led[m.Key()])
	}
	// A smaller offset (a marks-only batch) does not move it back.
	m.Offset = 100
	if err := e.buf.Commit(buffer.Commit{Marks: []buffer.Mark{m}}); err != nil {
		t.Fatal(err)
	}
	e.flush(t)
	if got, _ := e.ledger().Read(ctx, []string{m.Key()}); len(got) != 1 || got[0].Offset != 5000 {
		t.Fatalf("ledger moved back: %+v", got)
	}

	coll := e.db.Collection(LedgerCollection)
	old := time.Now().Add(-buffer.DefaultLedgerRetention - time.Hour)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "9:0000000000000009"}, {Key: "offset", Value: 9}, {Key: "updated", Value: old}}); err != nil {
		t.Fatal(err)
	}
	if err := e.f.maint.expirer.ensureLedgerExpiry(ctx); err != nil {
		t.Fatal(err)
	}
	if e.f.maint.expirer.ledgerExp.getMode() == ExpiryTTL {
		t.Skip("the server takes TTL indexes (MONGODB_URI): the deleteMany fallback is not used")
	}
	e.f.maint.expirer.expireLedger(ctx, time.Now())
	n, err := coll.CountDocuments(ctx, bson.D{})
	if err != nil || n != 1 || e.f.maint.expirer.ledgerExp.deleted.Load() != 1 {
		t.Fatalf("%d entries left (%v), %d deleted; want the old one gone", n, err, e.f.maint.expirer.ledgerExp.deleted.Load())
	}
}

// A claim on a ledger document is taken when there is none, kept from
// another holder while it lasts, renewed by its holder, taken over once
// expired and released; the flusher's marks and the ledger's reads ignore it.
func TestLedgerClaim(t *testing.T) {
	e := newEnv(t, 8)
	ctx := context.Background()
	m := buffer.Mark{FPLen: 60, FPSum: 0xbeef, Offset: 700, Source: "s", Path: "/a/x.gz"}
	key := m.Key()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	a := ledger.Claim{Holder: "buffer-a", Instance: "web-1", Host: "h1", Path: "/a/x.gz", Until: t0.Add(time.Minute)}
	b := ledger.Claim{Holder: "buffer-b", Instance: "web-2", Host: "h2", Path: "/b/x.gz", Until: t0.Add(time.Minute)}
	claim := func(c ledger.Claim, now time.Time) (ledger.Claim, bool) {
		t.Helper()
		cur, ok, err := e.ledger().Claim(ctx, key, c, now)
		if err != nil {
			t.Fatal(err)
		}
		return cur, ok
	}
	if _, ok := claim(a, t0); !ok {
		t.Fatal("a could not claim a document that does not exist")
	}
	if cur, ok := claim(b, t0.Add(time.Second)); ok || cur.Holder != "buffer-a" || cur.Instance != "web-1" || !cur.Until.Equal(a.Until) {
		t.Fatalf("b claimed a's live claim: %v, current %+v", ok, cur)
	}
	a.Until = t0.Add(90 * time.Second) // renewed
	if _, ok := claim(a, t0.Add(30*time.Second)); !ok {
		t.Fatal("a could not renew its claim")
	}
	// The flusher's marks and the replay's reads go on beside it.
	key2 := buffer.AppendKey(nil, []byte("s"), []byte("/"), 1_700_000_000)
	if err := e.buf.Commit(buffer.Commit{Counts: buffer.CountsOf(map[string]measure.Vector{string(key2): measure.OfViews(1)}), Marks: []buffer.Mark{m}}); err != nil {
		t.Fatal(err)
	}
	e.flush(t)
	if got, err := e.ledger().Read(ctx, []string{key}); err != nil || len(got) != 1 || got[0].Offset != 700 {
		t.Fatalf("ledger %v, %v; want 700", got, err)
	}
	if cur, ok := claim(b, t0.Add(89*time.Second)); ok || cur.Holder != "buffer-a" {
		t.Fatalf("b claimed a's renewed claim: %v %+v", ok, cur)
	}
	// Expired: b takes it over.
	b.Until = t0.Add(3 * time.Minute)
	if _, ok := claim(b, t0.Add(90*time.Second)); !ok {
		t.Fatal("b could not take an expired claim")
	}
	// a's release does not drop b's claim; b's does.
	if err := e.ledger().Release(ctx, key, "buffer-a"); err != nil {
		t.Fatal(err)
	}
	if cur, ok := claim(a, t0.Add(100*time.Second)); ok || cur.Holder != "buffer-b" {
		t.Fatalf("a's release dropped b's claim: %v %+v", ok, cur)
	}
	if err := e.ledger().Release(ctx, key, "buffer-b"); err != nil {
		t.Fatal(err)
	}
	if _, ok := claim(a, t0.Add(100*time.Second)); !ok {
		t.Fatal("a could not claim a released document")
	}
	if got, _ := e.ledger().Read(ctx, []string{key}); len(got) != 1 || got[0].Offset != 700 {
		t.Fatalf("the claims moved the offset: %v", got)
	}
}

// Streams that begin with the same bytes have a document each in
// MongoDB's ledger, with the tail check of its offset; ledger.Store.Read returns
// every stream under a fingerprint (and an older logtally's entry), none
// under another, and no claim.
func TestLedgerStreamsReachMongoDB(t *testing.T) {
	e := newEnv(t, 8)
	ctx := context.Background()
	a := buffer.Mark{FPLen: 1024, FPSum: 0xabc, Offset: 60000, Stream: 1 << 60, TailLen: 1024, TailSum: 1<<64 - 1, Source: "web", Path: "/a"}
	c := buffer.Mark{FPLen: 1024, FPSum: 0xabc, Offset: 3000, Stream: 5, TailLen: 1024, TailSum: 22, Source: "other", Path: "/c"}
	old := buffer.Mark{FPLen: 1024, FPSum: 0xabc, Offset: 500, Source: "web", Path: "/old"}
	far := buffer.Mark{FPLen: 1024, FPSum: 0xabd, Offset: 9, Stream: 5, TailLen: 9, TailSum: 1}
	if err := e.buf.Commit(buffer.Commit{Marks: []buffer.Mark{a, c, old, far}}); err != nil {
		t.Fatal(err)
	}
	e.flush(t)
	if _, ok, err := e.ledger().Claim(ctx, stream.LedgerKey(1024, 0xabc), ledger.Claim{Holder: "x", Until: time.Now().Add(time.Minute)}, time.Now()); err != nil || !ok {
		t.Fatal(ok, err)
	}
	got, err := e.ledger().Read(ctx, []string{stream.LedgerKey(1024, 0xabc), stream.LedgerKey(7, 7)})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]stream.Entry{}
	for _, g := range got {
		byKey[g.Key()] = g
	}
	if len(got) != 3 || byKey[a.Key()].Offset != 60000 || byKey[a.Key()].TailSum != a.TailSum || byKey[a.Key()].TailLen != 1024 ||
		byKey[c.Key()].Offset != 3000 || byKey[c.Key()].Source != "other" || byKey[old.Key()].Offset != 500 || byKey[old.Key()].TailLen != 0 {
		t.Fatalf("ledger %+v", got)
	}
	if id := stream.LedgerID(a.Key()); id != "1024:0000000000000abc:1000000000000000" {
		t.Fatalf("LedgerID %s", id)
	}
	if k, ok := stream.ParseLedgerID(stream.LedgerID(c.Key())); !ok || k != c.Key() {
		t.Fatalf("ParseLedgerID: %x %v", k, ok)
	}
}
