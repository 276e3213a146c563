package salts

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/visitor"
)

func openBuffer(t *testing.T) *buffer.Buffer {
	t.Helper()
	b := testenv.OpenBuffer(t, filepath.Join(t.TempDir(), "buffer.db"), buffer.Options{})
	return b
}

// Two hosts get the same salt for a period, hold it through a restart,
// and forget it a grace after the period ends, in MongoDB too.
func TestSaltsSharedHeldAndExpired(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	ctx := context.Background()
	fake := clock.NewFake(time.Date(2026, 11, 25, 23, 30, 0, 0, time.UTC))
	keeper := func(b *buffer.Buffer) *Keeper {
		k, err := New(Config{DB: db, Buffer: b, Period: visitor.Day, Grace: time.Hour, Clock: fake})
		if err != nil {
			t.Fatal(err)
		}
		if err := k.Load(); err != nil {
			t.Fatal(err)
		}
		return k
	}
	b1, b2 := openBuffer(t), openBuffer(t)
	k1, k2 := keeper(b1), keeper(b2)
	today := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC).Unix()
	tomorrow := today + 86400
	if _, ok := k1.For(today); ok {
		t.Fatal("a salt before any round")
	}
	if err := k1.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if err := k2.Round(ctx); err != nil {
		t.Fatal(err)
	}
	for _, sec := range []int64{today, tomorrow} {
		s1, ok1 := k1.For(sec)
		s2, ok2 := k2.For(sec)
		if !ok1 || !ok2 || *s1 != *s2 {
			t.Fatalf("salts of %d: %v %v, %v %v; want one shared salt", sec, s1, ok1, s2, ok2)
		}
	}
	if s1, _ := k1.For(today); func() bool { s2, _ := k1.For(tomorrow); return *s1 == *s2 }() {
		t.Fatal("today and tomorrow share a salt")
	}
	// A restart keys lines with the salts the buffer holds, MongoDB or not.
	k1 = keeper(b1)
	if _, ok := k1.For(today); !ok {
		t.Fatal("salt not held across a restart")
	}
	// An hour past midnight plus the grace: today's salt is gone
	// everywhere, tomorrow's kept.
	fake.Advance(30*time.Minute + time.Hour)
	if err := k1.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := k1.For(today); ok {
		t.Fatal("today's salt held past its grace")
	}
	if _, ok := k1.For(tomorrow); !ok {
		t.Fatal("tomorrow's salt lost")
	}
	n, err := db.Collection(Collection).CountDocuments(ctx, bson.D{{Key: "_id", Value: visitor.Day.ID(today - today%86400)}})
	if err != nil || n != 0 {
		t.Fatalf("today's salt in MongoDB: %d, %v", n, err)
	}
	var es []buffer.SaltEntry
	b1.View(func(tx *buffer.ReadTx) (err error) { es, err = tx.Salts(); return err })
	for _, e := range es {
		if e.ID == visitor.Day.ID(today-today%86400) {
			t.Fatal("today's salt still in the buffer")
		}
	}
	// The other host, restarted, forgets it too (Load drops the expired).
	k2 = keeper(b2)
	if _, ok := k2.For(today); ok {
		t.Fatal("an expired salt loaded")
	}
}
