package mongotest

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestInsertFindStopResume(t *testing.T) {
	s := Start(t)
	db := s.Database(t)
	coll := db.Collection("c")
	ctx := context.Background()

	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: int64(1)}}); err != nil {
		t.Fatalf("insert: %v", err)
	}
	var got struct {
		N int64 `bson:"n"`
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "a"}}).Decode(&got); err != nil {
		t.Fatalf("find: %v", err)
	}
	if got.N != 1 {
		t.Fatalf("n = %d, want 1", got.N)
	}

	s.Stop()
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err := coll.InsertOne(short, bson.D{{Key: "_id", Value: "b"}})
	cancel()
	if err == nil {
		t.Fatal("insert while stopped succeeded")
	}

	s.Resume()
	// The driver may need a moment to notice the server is back; wait for
	// the event with a generous deadline.
	deadline := time.Now().Add(20 * time.Second)
	for {
		op, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err = coll.InsertOne(op, bson.D{{Key: "_id", Value: "b"}})
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("insert after resume: %v", err)
		}
	}
	n, err := coll.CountDocuments(ctx, bson.D{})
	if err != nil {
		t.Fatalf("count: %v", err)
	}
	if n != 2 {
		t.Fatalf("count = %d, want 2", n)
	}
}

func TestDatabasesAreDistinct(t *testing.T) {
	s := Start(t)
	a, b := s.Database(t), s.Database(t)
	if a.Name() == b.Name() {
		t.Fatalf("both databases are named %q", a.Name())
	}
}

func TestSplitURI(t *testing.T) {
	for _, tc := range []struct{ in, host, out string }{
		{"mongodb://127.0.0.1:1234/", "127.0.0.1:1234", "mongodb://P/?directConnection=true"},
		{"mongodb://u:p@h1,h2:2/db?replicaSet=rs&w=majority", "h1:27017", "mongodb://u:p@P/db?directConnection=true&w=majority"},
		{"mongodb://h", "h:27017", "mongodb://P/?directConnection=true"},
	} {
		host, proxied, err := splitURI(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if host != tc.host || proxied("P") != tc.out {
			t.Errorf("%s: got %s %s, want %s %s", tc.in, host, proxied("P"), tc.host, tc.out)
		}
	}
	if _, _, err := splitURI("mongodb+srv://x"); err == nil {
		t.Error("mongodb+srv accepted")
	}
}
