package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/tailer"
)

// site is a source of the end-to-end pipeline tests: one log file.
type site struct{ name, path string }

func (s site) source() pipeline.Source {
	return pipeline.Source{
		Name: s.name, Paths: []string{s.path},
		Parser: parser.Config{Format: "combined", Site: s.name},
		Tailer: tailer.Config{PollInterval: 10 * time.Millisecond, RescanInterval: 50 * time.Millisecond},
	}
}

// appendLines appends n combined lines over a few pages and seconds.
func (s site) appendLines(t *testing.T, from, n int) {
	t.Helper()
	f, err := os.OpenFile(s.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	var b bytes.Buffer // one write: a tailer most often reads the lines in one chunk
	for i := from; i < from+n; i++ {
		ts := t0.Add(time.Duration(i%150) * time.Second).Format("02/Jan/2006:15:04:05 -0700")
		fmt.Fprintf(&b, "10.0.0.%d - - [%s] \"GET /p%d HTTP/1.1\" 200 512 \"-\" \"test\"\n", i%200, ts, i%3)
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
}

func config(dir string, db *mongo.Database, sites ...site) pipeline.Config {
	cfg := pipeline.Config{
		BufferPath:      filepath.Join(dir, "state", "buffer.db"),
		Buffer:          buffer.Options{LockTimeout: time.Second},
		Flush:           flusher.Config{DB: db, Interval: 30 * time.Millisecond, MaxOps: 32, Timeout: 5 * time.Second, MaxBackoff: 100 * time.Millisecond},
		CommitInterval:  10 * time.Millisecond,
		ShutdownTimeout: 10 * time.Second,
	}
	for _, s := range sites {
		cfg.Sources = append(cfg.Sources, s.source())
	}
	return cfg
}

// runUntil runs a pipeline until MongoDB's monthly total reaches total, then
// stops it and checks Run returns nil.
func runUntil(t *testing.T, cfg pipeline.Config, db *mongo.Database, total int64) {
	t.Helper()
	p, err := openPipeline(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() {
		cancel()
		<-done
		p.Close(context.Background())
	}()
	waitFor(t, fmt.Sprintf("MongoDB's monthly total to reach %d", total), func() bool {
		return bucketcheck.Read(t, db).MonthTotal >= total
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	done <- nil // for the deferred stop
	if st := p.Stats(); st.PendingKeys != 0 || st.PendingHits != 0 {
		t.Errorf("after a clean stop: pending %d keys, %d hits, want none", st.PendingKeys, st.PendingHits)
	}
}

func countAll(t *testing.T, sites ...site) bucketcheck.Counts {
	var c bucketcheck.Counts
	for i, s := range sites {
		got := bucketcheck.CountFiles(t, s.path, s.name)
		if i == 0 {
			c = got
		} else {
			c.Merge(got)
		}
	}
	return c
}

// TestRestartsAndRemovedSourceExact runs three pipelines in turn on one
// buffer: both sources; then with source b removed while its file grows;
// then with b back. b must resume where it stopped (its checkpoints kept),
// and every bucket must equal the files.
func TestRestartsAndRemovedSourceExact(t *testing.T) {
	dir := t.TempDir()
	db := mongotest.Start(t).Database(t)
	a := site{"a.test", filepath.Join(dir, "a.log")}
	b := site{"b.test", filepath.Join(dir, "b.log")}
	a.appendLines(t, 0, 120)
	b.appendLines(t, 0, 90)
	runUntil(t, config(dir, db, a, b), db, 210)

	a.appendLines(t, 120, 60)
	b.appendLines(t, 90, 30) // not read while b is not configured
	runUntil(t, config(dir, db, a), db, 270)
	if got := bucketcheck.Read(t, db).MonthTotal; got != 270 {
		t.Fatalf("with b removed: monthly total %d, want 270", got)
	}

	runUntil(t, config(dir, db, a, b), db, 300)
	want, got := countAll(t, a, b), bucketcheck.Read(t, db)
	if want.Hits != 300 {
		t.Fatalf("the files hold %d hits, want 300", want.Hits)
	}
	if res := bucketcheck.CompareAll(t, want, got); !res.Exact() {
		t.Errorf("%v", res)
	}
}

// TestStatsCountSealedBatch: with MongoDB cut off, the hits sealed into the
// batch in flight are still pending in Stats, and the shutdown drain writes
// them once MongoDB is back.
func TestStatsCountSealedBatch(t *testing.T) {
	dir := t.TempDir()
	srv := mongotest.Start(t)
	db := srv.Database(t)
	a := site{"a.test", filepath.Join(dir, "a.log")}
	a.appendLines(t, 0, 10)
	p, err := openPipeline(context.Background(), config(dir, db, a))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		err := <-done
		p.Close(context.Background())
		return err
	}
	t.Cleanup(func() { stop() })

	// Acknowledged, not only in the monthly buckets: a batch still
	// writing its site totals when MongoDB goes would stay in flight, and
	// the 40 hits never be sealed.
	waitFor(t, "the first 10 hits in MongoDB, acknowledged", func() bool {
		var b *buffer.Batch
		err := p.Buffer().View(func(tx *buffer.ReadTx) error { b = tx.Sealed(); return nil })
		return err == nil && b == nil && bucketcheck.Read(t, db).MonthTotal == 10
	})
	srv.Stop()
	a.appendLines(t, 10, 40)
	// The tailer may read the 40 lines in more than one chunk, and the
	// flusher seal the first ones alone: the sealed batch holds some of
	// them, the pending counts the rest.
	var sealed *buffer.Batch
	waitFor(t, "a sealed batch in flight and the 50 hits committed", func() bool {
		err := p.Buffer().View(func(tx *buffer.ReadTx) error { sealed = tx.Sealed(); return nil })
		if err != nil {
			t.Fatal(err)
		}
		return sealed != nil && p.Stats().Aggregator.Measures[measure.Views] == 50
	})
	if st := p.Stats(); st.PendingHits != 40 || st.PendingKeys == 0 {
		t.Errorf("Stats() pending %d keys, %d hits with a sealed batch of %d hits in flight, want 40 hits", st.PendingKeys, st.PendingHits, sealed.Hits)
	}
	srv.Resume()
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want, got := countAll(t, a), bucketcheck.Read(t, db)
	if res := bucketcheck.CompareAll(t, want, got); !res.Exact() || got.MonthTotal != 50 {
		t.Errorf("after the shutdown drain: %d hits, %v", got.MonthTotal, res)
	}
}

// waitFor waits until cond holds, for at most pipeline.WaitLimit.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Wait(t, pipeline.WaitLimit, what, cond)
}

// Alive is nil while the pipeline makes its rounds and names the stage
// that has not made one for too long.
func TestAlive(t *testing.T) {
	dir := t.TempDir()
	db := mongotest.Start(t).Database(t)
	a := site{"a.test", filepath.Join(dir, "a.log")}
	a.appendLines(t, 0, 5)
	p, err := openPipeline(context.Background(), config(dir, db, a))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Alive(clock.Real{}.Now()); err == nil {
		t.Error("Alive before Run: nil, want an error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() { cancel(); <-done; p.Close(context.Background()) }()
	waitFor(t, "the pipeline to be alive", func() bool { return p.Alive(clock.Real{}.Now()) == nil })
	if err := p.Alive(clock.Real{}.Now().Add(10 * time.Minute)); err == nil || !strings.Contains(err.Error(), "aggregator") {
		t.Errorf("Alive ten minutes on: %v, want the aggregator named", err)
	}
}

// openPipeline makes a Pipeline and opens it.
func openPipeline(ctx context.Context, cfg pipeline.Config) (*pipeline.Pipeline, error) {
	p, err := pipeline.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := p.Open(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// Before each seal the flusher has the aggregator commit what it holds:
// with a commit interval of an hour, the hits still reach MongoDB within
// a few flush intervals while the pipeline runs, and exactly.
func TestSealCommitsWhatIsHeldFirst(t *testing.T) {
	dir := t.TempDir()
	db := mongotest.Start(t).Database(t)
	a := site{"a.test", filepath.Join(dir, "a.log")}
	a.appendLines(t, 0, 40)
	cfg := config(dir, db, a)
	cfg.CommitInterval = time.Hour
	runUntil(t, cfg, db, 40) // waits for the hits while the pipeline runs
	a.appendLines(t, 40, 25)
	runUntil(t, cfg, db, 65)
	if res := bucketcheck.CompareAll(t, countAll(t, a), bucketcheck.Read(t, db)); !res.Exact() {
		t.Errorf("%v", res)
	}
}
