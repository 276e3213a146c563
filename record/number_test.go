package record_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/record"
)

// Writer numbers: one per buffer, the same on a second claim, never
// two buffers on one number even when the counter hands one out again
// (a server whose $inc is not atomic), beside the records in the same
// collection; a counter past MaxNumber is refused.
func TestClaimNumber(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Start(t).Database(t)
	clk := clock.NewFake(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	s := store(t, db, clk, "run-a")
	if _, err := s.Acquire(ctx, "buf-a", true, time.Second); err != nil { // a record in the collection
		t.Fatal(err)
	}
	claim := func(buf string) int64 {
		t.Helper()
		n, err := s.ClaimNumber(ctx, buf)
		if err != nil {
			t.Fatalf("ClaimNumber(%s): %v", buf, err)
		}
		return n
	}
	if a, b, a2 := claim("buf-a"), claim("buf-b"), claim("buf-a"); a != 1 || b != 2 || a2 != 1 {
		t.Fatalf("numbers a=%d b=%d a again=%d; want 1, 2, 1", a, b, a2)
	}
	coll := db.Collection(record.DefaultCollection)
	var c record.Claim
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "writer", Value: int64(2)}}}}).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.BufferID != "buf-b" || c.Instance != "web-1" || !c.Claimed.Equal(clk.Now()) {
		t.Fatalf("claim of 2: %+v", c)
	}
	// The counter goes back (as a non-atomic $inc could leave it): the
	// taken numbers are skipped.
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "writers", Value: "next"}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "next", Value: int64(0)}}}}); err != nil {
		t.Fatal(err)
	}
	if c := claim("buf-c"); c != 3 {
		t.Fatalf("buf-c got %d after the counter went back; want 3", c)
	}
	if rec, err := s.Load(ctx); err != nil || rec == nil || rec.BufferID != "buf-a" {
		t.Fatalf("the record beside the claims: %+v, %v", rec, err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "writers", Value: "next"}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "next", Value: int64(bucket.MaxNumber)}}}}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.ClaimNumber(ctx, "buf-d"); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("a number past MaxNumber: %d, %v", n, err)
	}
}
