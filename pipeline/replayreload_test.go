package pipeline_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/replay"
)

// refusingRecorder refuses every batch: the flusher writes none, the
// counts wait in the buffer (MongoDB answers everything else: the ledger,
// the claims).
type refusingRecorder struct{}

func (refusingRecorder) Begin(context.Context, buffer.Snapshot, buffer.Snapshot) error {
	return errors.New("refused by the test")
}

// A reload (the pipeline stops reading, ErrReload) while a replay waits
// for MongoDB's acknowledgement, every file read. When the aggregator's
// final commit took every chunk, the replay reports every file counted,
// not stopped (issue 29: it said "stopped before the end … run the same
// command again", exit 1, with the counts exact); when it had not taken
// them (reading paused on a full buffer), the file is reported stopped.
// Either way the reloaded pipeline writes what the buffer holds, the same
// replay counts the rest, and every bucket equals the files.
func TestReplayReloadedAfterEveryFileRead(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxSize   int64  // buffer.Options.MaxSize
		status    string // the file's status in the replay stopped by the reload
		stopped   bool
		statusRun string // in the same replay after the reload
	}{
		{"every chunk committed", 0, replay.StatusCounted, false, replay.StatusSkipped},
		{"chunks not taken: buffer full", 1, replay.StatusStopped, true, replay.StatusCounted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db := mongotest.Start(t).Database(t)
			live := site{"live.test", filepath.Join(dir, "live.log")}
			live.appendLines(t, 0, 5)
			arch := site{"arch.test", filepath.Join(dir, "archive.log.1")}
			arch.appendLines(t, 1000, 400) // first bytes unlike the live file's
			req := replay.Request{Files: []string{arch.path}, Site: arch.name, Format: "combined"}

			cfg := config(dir, db, live)
			cfg.Flush.Recorder = refusingRecorder{}
			cfg.Buffer.MaxSize = tc.maxSize
			p, err := openPipeline(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			runCtx, stopRun := context.WithCancelCause(context.Background())
			defer stopRun(nil)
			ran := make(chan error, 1)
			go func() { ran <- p.Run(runCtx) }()

			if tc.maxSize > 0 {
				// The live file's first commit fills the buffer: the
				// replay's chunks wait in the aggregator's queue.
				waitFor(t, "reading paused on a full buffer", func() bool { return !p.Aggregator().BufferFull().IsZero() })
			}
			type result struct {
				sum *replay.Summary
				err error
			}
			replayed := make(chan result, 1)
			var phase atomic.Value
			phase.Store("")
			go func() {
				sum, err := replay.NewService(p).Replay(context.Background(), req, func(pr replay.Progress) { phase.Store(pr.Phase) })
				replayed <- result{sum, err}
			}()
			// Every file read: the replay waits for the acknowledgement,
			// with its hits committed, or held back by the full buffer.
			waitFor(t, "the replay waiting for MongoDB", func() bool {
				select {
				case r := <-replayed:
					t.Fatalf("the replay ended with no batch written: %+v, %v", r.sum, r.err)
				default:
				}
				return phase.Load() == replay.PhaseFlushing && (tc.maxSize > 0 || p.Stats().PendingHits == 405)
			})
			stopRun(pipeline.ErrReload)
			var r result
			select {
			case r = <-replayed:
			case <-time.After(60 * time.Second):
				t.Fatal("the replay did not return after the reload")
			}
			if err := <-ran; err != nil {
				t.Fatalf("Run stopped for a reload: %v", err)
			}
			p.Close(context.Background())
			if r.err != nil || r.sum == nil || len(r.sum.Files) != 1 {
				t.Fatalf("replay stopped by the reload: %+v, %v", r.sum, r.err)
			}
			if s := r.sum; s.Stopped != tc.stopped || s.Unacknowledged == tc.stopped || s.Files[0].Status != tc.status {
				t.Errorf("replay stopped by the reload: %+v, want the file %s, stopped %v, unacknowledged %v", s, tc.status, tc.stopped, !tc.stopped)
			}

			// The reloaded pipeline writes what the buffer holds; the same
			// replay counts what is left.
			p, err = openPipeline(context.Background(), config(dir, db, live))
			if err != nil {
				t.Fatal(err)
			}
			runCtx, stopRun = context.WithCancelCause(context.Background())
			defer stopRun(nil)
			go func() { ran <- p.Run(runCtx) }()
			sum, err := replay.NewService(p).Replay(context.Background(), req, nil)
			if err != nil || sum.Stopped || sum.Unacknowledged || len(sum.Files) != 1 || sum.Files[0].Status != tc.statusRun {
				t.Errorf("the same replay after the reload: %+v, %v; want the file %s", sum, err, tc.statusRun)
			}
			waitFor(t, "405 hits in MongoDB", func() bool { return bucketcheck.Read(t, db).MonthTotal >= 405 })
			stopRun(nil)
			if err := <-ran; err != nil {
				t.Fatal(err)
			}
			p.Close(context.Background())
			want, got := countAll(t, live, arch), bucketcheck.Read(t, db)
			if res := bucketcheck.CompareAll(t, want, got); !res.Exact() || got.MonthTotal != 405 {
				t.Errorf("after the reload: %d hits in MongoDB, %v", got.MonthTotal, res)
			}
		})
	}
}
