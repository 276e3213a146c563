package pipeline_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/record"
)

// recorded is config with a progress record for instance "web-1".
func recorded(dir string, db *mongo.Database, sites ...site) pipeline.Config {
	cfg := config(dir, db, sites...)
	cfg.Instance = "web-1"
	cfg.LeaseTTL = 900 * time.Millisecond
	cfg.ShutdownTimeout = 2 * time.Second
	return cfg
}

// running is a Pipeline running in the background.
type running struct {
	p      *pipeline.Pipeline
	cancel context.CancelFunc
	done   chan error
}

func startRun(t *testing.T, cfg pipeline.Config) *running {
	t.Helper()
	p, err := openPipeline(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{p: p, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- p.Run(ctx) }()
	t.Cleanup(func() { r.stop() })
	return r
}

// stop cancels Run, waits for it and closes the pipeline (once).
func (r *running) stop() error {
	if r.p == nil {
		return nil
	}
	r.cancel()
	err := <-r.done
	r.p.Close(context.Background())
	r.p = nil
	return err
}

func readRecord(t *testing.T, db *mongo.Database) record.Record {
	t.Helper()
	var rec record.Record
	if err := db.Collection(record.DefaultCollection).FindOne(context.Background(), bson.D{{Key: "_id", Value: "web-1"}}).Decode(&rec); err != nil {
		t.Fatalf("read the progress record: %v", err)
	}
	return rec
}

// TestStateDirLostRebuildsFromRecord: a pipeline that dies without a clean
// stop (MongoDB cut off, so its lease is neither released nor its last
// batch marked) loses its state dir while lines keep coming; the next one
// waits for the lease to lapse, rebuilds the buffer from the record and
// counts every line once.
func TestStateDirLostRebuildsFromRecord(t *testing.T) {
	dir := t.TempDir()
	srv := mongotest.Start(t)
	db := srv.Database(t)
	a := site{"a.test", filepath.Join(dir, "a.log")}
	b := site{"b.test", filepath.Join(dir, "b.log")}
	a.appendLines(t, 0, 80)
	b.appendLines(t, 0, 40)
	r := startRun(t, recorded(dir, db, a, b))
	waitFor(t, "120 hits in MongoDB", func() bool { return bucketcheck.Read(t, db).MonthTotal == 120 })
	a.appendLines(t, 80, 30) // read and committed, maybe not flushed: in the buffer only
	// Settled before the cut: a cut in the middle of a write can leave
	// the embedded server failing every write after (its writes go on
	// without their client).
	pipeline.Settle(t, r.p)
	srv.Stop()
	r.stop()
	srv.Resume()

	b.appendLines(t, 40, 25) // written while logtally was down
	if err := os.RemoveAll(filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	rec := readRecord(t, srv.Direct(db.Name()))
	t.Logf("record before the restart: batch %s acked %v, lease until %v", rec.Current.Batch, rec.Acked, rec.Lease.Until)

	r = startRun(t, recorded(dir, db, a, b))
	waitFor(t, "175 hits in MongoDB", func() bool { return bucketcheck.Read(t, db).MonthTotal >= 175 })
	pipeline.Settle(t, r.p) // a double count would show now
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	want, got := countAll(t, a, b), bucketcheck.Read(t, db)
	if res := bucketcheck.CompareAll(t, want, got); !res.Exact() || got.MonthTotal != 175 {
		t.Errorf("after the rebuild: %d hits in MongoDB, files %d; %v", got.MonthTotal, want.Hits, res)
	}
	if rec := readRecord(t, srv.Direct(db.Name())); !rec.Acked || !rec.Lease.Until.IsZero() {
		t.Errorf("after a clean stop the record is %+v, want its last batch acknowledged and the lease released", rec)
	}
}

// TestStateDirLostLeaseReplyDropped: the state dir is lost, and the reply
// to the rebuild's lease take (the start's first write) is lost with its
// connection after the server applied it. The start retries and finds
// the lease its own: it rebuilds, and counts exactly (it used to stop on
// the error; the fleet test found it).
func TestStateDirLostLeaseReplyDropped(t *testing.T) {
	dir := t.TempDir()
	srv := mongotest.Start(t)
	db := srv.Database(t)
	a := site{"a.test", filepath.Join(dir, "a.log")}
	a.appendLines(t, 0, 40)
	r := startRun(t, recorded(dir, db, a))
	waitFor(t, "40 hits in MongoDB", func() bool { return bucketcheck.Read(t, db).MonthTotal == 40 })
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	a.appendLines(t, 40, 25)
	if err := os.RemoveAll(filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	dropped := srv.Faults().DroppedReplies
	srv.DropNextReply()
	r = startRun(t, recorded(dir, db, a))
	waitFor(t, "65 hits in MongoDB", func() bool { return bucketcheck.Read(t, db).MonthTotal >= 65 })
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if n := srv.Faults().DroppedReplies - dropped; n != 1 {
		t.Fatalf("%d replies dropped, want 1: the test did not exercise the lease's retry", n)
	}
	want, got := countAll(t, a), bucketcheck.Read(t, db)
	if res := bucketcheck.CompareAll(t, want, got); !res.Exact() || got.MonthTotal != 65 {
		t.Errorf("after the rebuild: %d hits in MongoDB, files %d; %v", got.MonthTotal, want.Hits, res)
	}
}

// TestStateDirLostWhileBatchInFlight: MongoDB is cut off in the middle of a
// batch's bucket updates, the pipeline stops, and its state dir is removed.
// The next start re-reads the batch's lines, seals them under the batch's
// id and writes them again: the buckets that took the batch skip it.
func TestStateDirLostWhileBatchInFlight(t *testing.T) {
	dir := t.TempDir()
	srv := mongotest.Start(t)
	db := srv.Database(t)
	direct := srv.Direct(db.Name())
	a := site{"a.test", filepath.Join(dir, "a.log")}
	a.appendLines(t, 0, 30)
	cfg := recorded(dir, db, a)
	cfg.Flush.MaxOps = 1 // one bucket per bulk write: a slow batch, to be cut
	cfg.Dims = &parser.DimsConfig{}
	r := startRun(t, cfg)
	waitFor(t, "30 hits in MongoDB", func() bool { return bucketcheck.Read(t, db).MonthTotal == 30 })
	first := readRecord(t, direct).Current.Batch

	// 600 more lines over 3 pages and 150 seconds: about 9 minute buckets.
	a.appendLines(t, 30, 600)
	var batch string
	var applied int64
	waitFor(t, "the next batch to be partly applied", func() bool {
		rec := readRecord(t, direct)
		if rec.Current.Batch == first || rec.Acked {
			return false
		}
		g := flusher.Guard(rec.BufferID, rec.Current.Batch)
		if _, _, numbered := buffer.ParseBatchID(rec.Current.Batch); !numbered {
			t.Errorf("batch %s in flight is not numbered", rec.Current.Batch)
		}
		n, err := direct.Collection("minutes").CountDocuments(context.Background(),
			bson.D{{Key: g.Field, Value: g.Batch}})
		if err != nil || n == 0 {
			return false
		}
		srv.Stop()
		batch, applied = rec.Current.Batch, n
		return true
	})
	r.stop()
	total, _ := direct.Collection("minutes").CountDocuments(context.Background(), bson.D{})
	rec := readRecord(t, direct)
	t.Logf("cut off in batch %s: %d of %d minute buckets had it; record batch %s acked %v", batch, applied, total, rec.Current.Batch, rec.Acked)
	if rec.Current.Batch != batch || rec.Acked {
		t.Fatalf("record %+v, want batch %s in flight", rec, batch)
	}
	// The rebuilt batch must be written in the layout it was begun in.
	if rec.Current.Layout != int(buffer.LayoutTails) {
		t.Errorf("record of batch %s names layout %d, want %d", batch, rec.Current.Layout, buffer.LayoutTails)
	}
	srv.Resume()
	if err := os.RemoveAll(filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	a.appendLines(t, 630, 20)

	r = startRun(t, cfg)
	waitFor(t, "650 hits in MongoDB", func() bool { return bucketcheck.Read(t, db).MonthTotal >= 650 })
	pipeline.Settle(t, r.p) // a double count would show now
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	want, got := countAll(t, a), bucketcheck.Read(t, db)
	if res := bucketcheck.CompareAll(t, want, got); !res.Exact() || got.MonthTotal != 650 {
		t.Errorf("after the rebuild: %d hits in MongoDB; %v", got.MonthTotal, res)
	}
	checkDims(t, direct, a)
}

// TestSecondDaemonWithSameInstanceRefused: a pipeline with the same
// instance name and its own state dir, started while another runs, waits
// for the lease, sees it renewed and refuses.
func TestSecondDaemonWithSameInstanceRefused(t *testing.T) {
	dir := t.TempDir()
	db := mongotest.Start(t).Database(t)
	a := site{"a.test", filepath.Join(dir, "a.log")}
	a.appendLines(t, 0, 10)
	startRun(t, recorded(dir, db, a))
	waitFor(t, "10 hits in MongoDB", func() bool { return bucketcheck.Read(t, db).MonthTotal == 10 })

	other := recorded(filepath.Join(dir, "other"), db, a)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := openPipeline(ctx, other)
	if err == nil || !errors.Is(err, record.ErrInstanceInUse) {
		t.Fatalf("second pipeline with the same instance: %v, want ErrInstanceInUse", err)
	}
	t.Logf("refused: %v", err)
}

// TestStateDirLostWithCoarseInterval: with flush.coarse_interval, the
// minute buckets run ahead of the daily and monthly ones, and the counts
// in between wait in the buffer. When the state dir is lost, the rebuild
// re-reads them from where the daily and monthly counts end (the record's
// coarse position), so every level ends exact.
func TestStateDirLostWithCoarseInterval(t *testing.T) {
	dir := t.TempDir()
	srv := mongotest.Start(t)
	db := srv.Database(t)
	a := site{"a.test", filepath.Join(dir, "a.log")}
	a.appendLines(t, 0, 60)
	cfg := recorded(dir, db, a)
	cfg.Flush.CoarseInterval = time.Hour // only each run's first batch (and a drain) is full
	cfg.Dims = &parser.DimsConfig{}
	r := startRun(t, cfg)
	waitFor(t, "60 hits in the daily buckets", func() bool { return dailyTotal(t, db) == 60 })
	a.appendLines(t, 60, 40) // minute-only batches: in the minute buckets, waiting for the others
	waitFor(t, "100 hits in the minute buckets", func() bool { return minuteTotal(t, db) == 100 })
	if d := dailyTotal(t, db); d != 60 {
		t.Fatalf("daily total %d before a full batch, want 60", d)
	}
	a.appendLines(t, 100, 15) // maybe in a batch in flight when MongoDB goes
	pipeline.ReadToEnd(t, r.p)
	srv.Stop() // the stop's drain cannot write the full batch
	r.stop()
	srv.Resume()
	if err := os.RemoveAll(filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	rec := readRecord(t, srv.Direct(db.Name()))
	t.Logf("record: batch %s acked %v minute-only %v, coarse batch %s", rec.Current.Batch, rec.Acked, rec.Current.MinuteOnly, rec.Coarse.Batch)
	if rec.Coarse.Batch == "" {
		t.Fatal("the record holds no coarse position")
	}
	a.appendLines(t, 115, 10)
	r = startRun(t, cfg) // its first batch is full: every level catches up
	waitFor(t, "125 hits at every level", func() bool {
		c := bucketcheck.Read(t, db)
		return c.MonthTotal >= 125 && dailyTotal(t, db) >= 125 && minuteTotal(t, db) >= 125
	})
	pipeline.Settle(t, r.p) // a double count would show now
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	want, got := countAll(t, a), bucketcheck.Read(t, db)
	if res := bucketcheck.CompareAll(t, want, got); !res.Exact() || got.MonthTotal != 125 {
		t.Errorf("after the rebuild: %d hits in MongoDB, files %d; %v", got.MonthTotal, want.Hits, res)
	}
	checkDims(t, srv.Direct(db.Name()), a)
}

func dailyTotal(t *testing.T, db *mongo.Database) int64 {
	return bucketcheck.Total(t, db, bucket.Daily)
}

func minuteTotal(t *testing.T, db *mongo.Database) int64 {
	return bucketcheck.Total(t, db, bucket.Minute)
}
