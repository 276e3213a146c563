package pipeline_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/pipeline"
)

// TestLifecycle: New touches nothing (no state dir is made) and refuses a
// bad source; Run refuses to start before Open; Close stops a Run under
// way as a cancel does: Run returns nil, the final commit and the drain
// leave nothing pending in the buffer, which Close has closed (it opens
// again at once), and every bucket equals the file.
func TestLifecycle(t *testing.T) {
	dir := t.TempDir()
	db := mongotest.Start(t).Database(t)
	a := site{"a.test", filepath.Join(dir, "a.log")}
	a.appendLines(t, 0, 60)
	cfg := config(dir, db, a)

	bad := config(dir, db, a)
	bad.Sources[0].Parser.Format = "no-such-format"
	if _, err := pipeline.New(bad); err == nil {
		t.Fatal("New with an unknown parser format: no error")
	}
	p, err := pipeline.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(cfg.BufferPath)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("New touched the state dir: %v", err)
	}
	if err := p.Run(context.Background()); err == nil {
		t.Fatal("Run before Open: no error")
	}
	if err := p.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(context.Background()) }()
	waitFor(t, "60 hits in MongoDB", func() bool { return bucketcheck.Read(t, db).MonthTotal >= 60 })
	a.appendLines(t, 60, 30) // read or not when Close stops the run: the drain writes what was committed

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatalf("Close with Run under way: %v", err)
	}
	// Run has returned once Close has: its goroutine's send follows at
	// once (a second is room for a loaded machine under -race, not a wait
	// for Run to finish its work).
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run stopped by Close: %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Close returned before Run did")
	}
	buf := testenv.OpenBuffer(t, cfg.BufferPath, buffer.Options{LockTimeout: time.Second}) // Close released it
	var keys int
	var hits uint64
	err = buf.View(func(tx *buffer.ReadTx) error { keys, hits = tx.Unacked(); return nil })
	buf.Close()
	if err != nil {
		t.Fatal(err)
	}
	if keys != 0 || hits != 0 {
		t.Fatalf("after Close: %d keys, %d hits not acknowledged, want none", keys, hits)
	}

	// A new Pipeline reads the rest; then every bucket equals the file.
	runUntil(t, cfg, db, 90)
	if res := bucketcheck.CompareAll(t, countAll(t, a), bucketcheck.Read(t, db)); !res.Exact() {
		t.Errorf("%v", res)
	}
}
