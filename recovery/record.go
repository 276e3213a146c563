package recovery

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/record"
)

// acquirePoll is how often a start waiting for another run's lease looks
// at the record again.
const acquirePoll = 2 * time.Second

// Recorder keeps this instance's progress record in MongoDB: it holds the
// lease while the pipeline runs, and records each batch before its bucket
// updates begin (flusher.Recorder).
type Recorder struct {
	store    *record.Store
	buf      *buffer.Buffer
	clock    clock.Clock
	log      *slog.Logger
	user     string        // the connection string's user, for refused credentials
	acquired chan struct{} // closed once the lease is held
	held     sync.Once     // closes acquired
	// writing serializes the writes to the record from the flusher
	// (Begin) and from Keep (renew, release). MongoDB applies each
	// update atomically, and a renew's "acknowledged" only matches the
	// batch it names, so concurrent writes are safe there; a server that
	// does not (FerretDB: two updates of one document at once can lose
	// one) could let a renew write back the record as it was before a
	// Begin, naming the previous batch acknowledged while the next one's
	// updates begin: a rebuild would then count that batch again.
	writing sync.Mutex
}

// NewRecorder returns the Recorder of store's instance for buf; user is
// the connection string's user, named when MongoDB refuses the credentials.
func NewRecorder(store *record.Store, buf *buffer.Buffer, clk clock.Clock, log *slog.Logger, user string) *Recorder {
	return &Recorder{store: store, buf: buf, clock: clk, log: log, user: user, acquired: make(chan struct{})}
}

// LeaseHeld tells r that the lease is held: Begin records batches from
// now on. Keep calls it once it has taken the lease; a tool or test that
// took it itself (record.Store.Acquire) and does not run Keep calls it
// instead.
func (r *Recorder) LeaseHeld() { r.held.Do(func() { close(r.acquired) }) }

// Begin records the batch in flight, once the lease is held.
func (r *Recorder) Begin(ctx context.Context, sealed, acked buffer.Snapshot) error {
	select {
	case <-r.acquired:
	case <-ctx.Done():
		return ctx.Err()
	}
	var cur, coarse record.Snapshot
	err := r.buf.View(func(tx *buffer.ReadTx) error {
		cur, coarse = snapshot(tx, sealed), snapshot(tx, tx.Snapshot(buffer.AckedFullBatch))
		return nil
	})
	if err != nil {
		return err
	}
	r.writing.Lock()
	defer r.writing.Unlock()
	return r.store.Begin(ctx, r.buf.InstanceID(), cur,
		record.Snapshot{Batch: acked.Batch, SealedAt: acked.SealedAt, Checkpoints: toRecord(acked.Checkpoints)}, coarse)
}

// snapshot turns a buffer snapshot into the record's form, with its
// finished files and archives' parts (their sources' settings read in tx).
func snapshot(tx *buffer.ReadTx, s buffer.Snapshot) record.Snapshot {
	return record.Snapshot{Batch: s.Batch, SealedAt: s.SealedAt, Checkpoints: toRecord(s.Checkpoints), MinuteOnly: s.MinuteOnly,
		Layout: int(s.Layout), Finished: record.Finished{Known: s.Finished != nil, Files: toRecord(s.Finished)}, Archives: archives(tx, s.Archives)}
}

// Keep takes the lease (a restart of the same buffer takes it at once;
// another buffer's live lease is waited for), renews it every
// r.store.RenewEvery(), marking the last acknowledged batch, and when ctx
// ends renews it once more and releases it. Losing the lease, or finding
// it kept alive by another daemon, is returned: the pipeline must stop.
// Other errors (MongoDB unreachable) are logged and retried; credentials
// MongoDB refuses are logged at ERROR once, then rate-limited
// (flusher.AuthReport), as the flusher's retries do.
func (r *Recorder) Keep(ctx context.Context) error {
	backoff := time.Second
	var refused flusher.AuthReport
	for attempt := 1; ; attempt++ {
		_, err := r.store.Acquire(ctx, r.buf.InstanceID(), true, acquirePoll)
		if err == nil {
			refused.Succeeded(r.log, "take the instance's lease")
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, record.ErrInstanceInUse) {
			return err
		}
		if flusher.AuthFailure(err) {
			refused.Failed(r.log, r.clock.Now(), "take the instance's lease", attempt, err, r.user)
		} else {
			r.log.Warn("cannot take the instance's lease in MongoDB: retrying", "err", err, "retry_in", backoff)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.clock.After(backoff):
		}
		backoff = min(2*backoff, r.store.RenewEvery())
	}
	r.LeaseHeld()
	for attempt := 1; ; {
		select {
		case <-ctx.Done():
			r.release()
			return nil
		case <-r.clock.After(r.store.RenewEvery()):
		}
		err := r.renew(ctx)
		switch {
		case err == nil:
			refused.Succeeded(r.log, "renew the instance's lease")
			attempt = 1
		case errors.Is(err, record.ErrLeaseLost):
			return err
		case flusher.AuthFailure(err):
			refused.Failed(r.log, r.clock.Now(), "renew the instance's lease", attempt, err, r.user)
			attempt++
		default:
			r.log.Warn("cannot renew the instance's lease in MongoDB", "err", err)
			attempt++
		}
	}
}

func (r *Recorder) renew(ctx context.Context) error {
	var acked buffer.Snapshot
	err := r.buf.View(func(tx *buffer.ReadTx) error {
		acked = tx.Snapshot(buffer.AckedBatch)
		return nil
	})
	if err != nil {
		return err
	}
	r.writing.Lock()
	defer r.writing.Unlock()
	return r.store.Renew(ctx, acked.Batch)
}

// release marks the last batch acknowledged and ends the lease, so that a
// successor (a rebuilt state dir) need not wait for it to expire.
func (r *Recorder) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.renew(ctx); err != nil {
		r.log.Warn("cannot record the last batch as acknowledged", "err", err)
		return
	}
	r.writing.Lock()
	err := r.store.Release(ctx)
	r.writing.Unlock()
	if err != nil {
		r.log.Warn("cannot release the instance's lease: a rebuilt state dir waits for it to expire", "err", err)
	}
}

// archives turns a batch's archive ranges into the record's form, each
// with its replay source's parser settings.
func archives(tx *buffer.ReadTx, ranges []buffer.ArchiveRange) []record.Archive {
	out := make([]record.Archive, 0, len(ranges))
	for _, a := range ranges {
		out = append(out, record.Archive{Source: a.Source, Path: a.Path, FPLen: a.FPLen, FPSum: int64(a.FPSum),
			From: a.From, To: a.To, Parser: tx.ArchiveSource(a.Source)})
	}
	return out
}

// toRecord turns buffer checkpoints into the record's form, sorted.
func toRecord(cps map[string][]byte) []record.Checkpoint {
	out := make([]record.Checkpoint, 0, len(cps))
	for _, k := range slices.Sorted(maps.Keys(cps)) {
		out = append(out, record.Checkpoint{Key: k, Value: cps[k]})
	}
	return out
}
