package flusher

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Defaults of Config's fields, used when a field is zero.
const (
	// DefaultInterval is how often Run seals pending counts and sends
	// them.
	DefaultInterval = 10 * time.Second
	// DefaultMaxOps is the number of bucket updates per bulk write.
	DefaultMaxOps = 1000
	// DefaultMaxBackoff caps the wait between retries.
	DefaultMaxBackoff = time.Minute
	// DefaultTimeout bounds each database operation.
	DefaultTimeout = 10 * time.Second
	// DefaultMinuteCollection is the collection of the per-minute buckets.
	DefaultMinuteCollection = "minutes"
	// DefaultDailyCollection is the collection of the per-day buckets.
	DefaultDailyCollection = "daily"
	// DefaultMonthlyCollection is the collection of the per-month buckets.
	DefaultMonthlyCollection = "monthly"
)

// Collections names the three bucket collections. An empty name gets its
// default: DefaultMinuteCollection, DefaultDailyCollection,
// DefaultMonthlyCollection.
type Collections struct {
	// Minute holds the per-minute buckets.
	Minute string
	// Daily holds the per-day buckets.
	Daily string
	// Monthly holds the per-month buckets.
	Monthly string
}

// Recorder keeps the database's own record of the batch in flight, from
// which a lost buffer is rebuilt (package progress, wired by pipeline).
type Recorder interface {
	// Begin records that the bucket updates of the sealed batch may
	// begin: its counts are the lines between acked (the last
	// acknowledged batch's position) and sealed. It is called before a
	// batch's first bucket update, and again when a batch is resumed; the
	// batch is not written until it succeeds.
	Begin(ctx context.Context, sealed, acked buffer.Snapshot) error
}

// Config configures New.
type Config struct {
	// Buffer holds the counts to write. Required.
	Buffer *buffer.Buffer
	// DB receives the buckets. Write concern and the like are set by the
	// caller on the client or database; it must be acknowledged. Required.
	DB *mongo.Database
	// Recorder, when not nil, records each batch before its bucket
	// updates begin.
	Recorder Recorder
	// Collections names the bucket collections; empty names get their
	// defaults.
	Collections Collections
	// Interval is how often Run seals pending counts and sends them.
	// Default DefaultInterval.
	Interval time.Duration
	// MaxOps is the number of bucket updates per bulk write. Default
	// DefaultMaxOps.
	MaxOps int
	// MaxBackoff caps the wait between retries. Default DefaultMaxBackoff.
	MaxBackoff time.Duration
	// Timeout bounds each database operation. Default DefaultTimeout.
	Timeout time.Duration
	// Clock drives Run's timing. Default clock.Real{}.
	Clock clock.Clock
	// Logger receives the flusher's messages; nil discards them.
	Logger *slog.Logger
}

// Stats are counters since New, read atomically.
type Stats struct {
	Batches     uint64 // batches written and acknowledged
	Hits        uint64 // hits in those batches
	BulkWrites  uint64 // bulk writes sent
	Updates     uint64 // bucket updates sent, resends included
	Finds       uint64 // finds for missing buckets
	Inserts     uint64 // zero-filled buckets this flusher created
	InsertCalls uint64 // InsertMany calls sent
	Retries     uint64 // failed attempts retried by Run or Drain
}

// regrowAfter is how many chunks must be written in a row after a timeout
// before the chunk size doubles again.
const regrowAfter = 16

// baseBackoff is the first retry's backoff ceiling; it doubles per failure.
const baseBackoff = 500 * time.Millisecond

// Flusher writes the buffer's sealed batches to MongoDB exactly once.
type Flusher struct {
	buf        *buffer.Buffer
	recorder   Recorder
	colls      [3]*mongo.Collection // by pass
	applied    string               // "applied.<instance>"
	interval   time.Duration
	maxOps     int
	chunkOps   int // current chunk size: halved after a timed-out chunk, doubled after regrowAfter written ones
	chunksOK   int // chunks written since chunkOps last changed
	maxBackoff time.Duration
	timeout    time.Duration
	clock      clock.Clock
	log        *slog.Logger

	mu sync.Mutex // one Flush at a time
	ch chunker

	batches, hits, bulkWrites, updates, finds, inserts, insertCalls, retries atomic.Uint64

	// Test hooks, nil in production.
	afterChunk   func(p pass, chunk int) error // after a chunk's progress is saved
	afterUpdate  func(p pass, ids []string)    // after step 1, when some bucket did not match
	beforeInsert func(p pass, ids []string)    // between steps 1 and 2
	beforeBulk   func(updates int) error       // before each bulk write; an error stands for the server's
}

// New returns a Flusher for cfg.
func New(cfg Config) (*Flusher, error) {
	if cfg.Buffer == nil {
		return nil, errors.New("new flusher: no buffer")
	}
	if cfg.DB == nil {
		return nil, errors.New("new flusher: no database")
	}
	if cfg.MaxOps < 0 || cfg.Interval < 0 || cfg.MaxBackoff < 0 || cfg.Timeout < 0 {
		return nil, errors.New("new flusher: negative MaxOps, Interval, MaxBackoff or Timeout")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &Flusher{
		buf: cfg.Buffer,
		colls: [3]*mongo.Collection{
			cfg.DB.Collection(cmp.Or(cfg.Collections.Minute, DefaultMinuteCollection)),
			cfg.DB.Collection(cmp.Or(cfg.Collections.Daily, DefaultDailyCollection)),
			cfg.DB.Collection(cmp.Or(cfg.Collections.Monthly, DefaultMonthlyCollection)),
		},
		recorder:   cfg.Recorder,
		applied:    "applied." + cfg.Buffer.InstanceID(),
		interval:   cmp.Or(cfg.Interval, DefaultInterval),
		maxOps:     cmp.Or(cfg.MaxOps, DefaultMaxOps),
		maxBackoff: cmp.Or(cfg.MaxBackoff, DefaultMaxBackoff),
		timeout:    cmp.Or(cfg.Timeout, DefaultTimeout),
		clock:      cmp.Or[clock.Clock](cfg.Clock, clock.Real{}),
		log:        log.With("component", "flusher"),
	}
	f.chunkOps = f.maxOps
	return f, nil
}

// Stats returns the counters.
func (f *Flusher) Stats() Stats {
	return Stats{
		Batches:     f.batches.Load(),
		Hits:        f.hits.Load(),
		BulkWrites:  f.bulkWrites.Load(),
		Updates:     f.updates.Load(),
		Finds:       f.finds.Load(),
		Inserts:     f.inserts.Load(),
		InsertCalls: f.insertCalls.Load(),
		Retries:     f.retries.Load(),
	}
}

// EnsureIndexes creates the query indexes of the three collections. It is
// idempotent.
func (f *Flusher) EnsureIndexes(ctx context.Context) error {
	meta := bson.D{{Key: "metadata.site", Value: 1}, {Key: "metadata.page", Value: 1}, {Key: "metadata.date", Value: 1}}
	keys := [3]bson.D{
		{{Key: "site", Value: 1}, {Key: "page", Value: 1}, {Key: "timestamp", Value: 1}},
		meta,
		meta,
	}
	for p, coll := range f.colls {
		ctx, cancel := context.WithTimeout(ctx, f.timeout)
		_, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys[p]})
		cancel()
		if err != nil {
			return fmt.Errorf("create index on %s: %w", coll.Name(), err)
		}
	}
	return nil
}

// Run ensures the indexes (retrying), then every Interval seals the pending
// counts and writes them, retrying failures with exponential backoff and
// full jitter capped at MaxBackoff. A batch left over from before (a
// failed or crashed write) is finished first, then the counts pending at
// that moment are sent. Run returns nil when ctx is cancelled; whatever is
// not yet written stays in the buffer.
func (f *Flusher) Run(ctx context.Context) error {
	if !f.retry(ctx, "ensure indexes", f.EnsureIndexes) {
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-f.clock.After(f.interval):
		}
		if !f.retry(ctx, "flush", f.tick) {
			return nil
		}
	}
}

// tick writes the batch in flight, if any, and then one freshly sealed
// batch of everything pending.
func (f *Flusher) tick(ctx context.Context) error {
	for {
		leftover, err := f.buf.Sealed()
		if err != nil {
			return fmt.Errorf("flush: %w", err)
		}
		sent, err := f.Flush(ctx)
		if err != nil || !sent || leftover == nil {
			return err
		}
	}
}

// Drain is for shutdown: it writes batches (retrying with backoff) until
// no batch is in flight and nothing is pending, or ctx is done, in which
// case it returns ctx's error and the buffer keeps everything not written.
// Do not call it while Run is running.
func (f *Flusher) Drain(ctx context.Context) error {
	more := true
	ok := f.retry(ctx, "drain", func(ctx context.Context) error {
		for more {
			sent, err := f.Flush(ctx)
			if err != nil {
				return err
			}
			more = sent
		}
		return nil
	})
	if !ok {
		return ctx.Err()
	}
	return nil
}

// retry calls fn until it succeeds (true) or ctx is done (false), waiting
// a full-jitter exponential backoff between attempts.
func (f *Flusher) retry(ctx context.Context, what string, fn func(context.Context) error) bool {
	// MongoDB refusing the credentials is logged at ERROR, rate-limited
	// (autherr.go); other failures at WARN.
	var refused authReport
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil {
			refused.succeeded(f.log, what)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		f.retries.Add(1)
		if authFailure(err) {
			refused.failed(f.log, f.clock.Now(), what, attempt, err)
		} else {
			f.log.Warn(what+" failed", "attempt", attempt, "err", err)
		}
		ceiling := f.maxBackoff
		if attempt < 32 && baseBackoff<<(attempt-1) < ceiling {
			ceiling = baseBackoff << (attempt - 1)
		}
		select {
		case <-ctx.Done():
			return false
		case <-f.clock.After(rand.N(ceiling + 1)):
		}
	}
}

// Flush runs one round: it seals the pending counts (or takes the batch
// already in flight), writes the batch chunk by chunk, resuming after the
// last chunk written, and acknowledges it. sent reports whether there was
// a batch. On error the batch and its progress stay in the buffer.
func (f *Flusher) Flush(ctx context.Context) (sent bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	batch, err := f.buf.Seal()
	if err != nil {
		return false, fmt.Errorf("flush: %w", err)
	}
	if batch == nil {
		return false, nil
	}
	start := f.clock.Now()
	if f.recorder != nil {
		if err := f.record(ctx); err != nil {
			return true, fmt.Errorf("flush batch %s: %w", batch.ID, err)
		}
	}
	if err := f.writeBatch(ctx, batch); err != nil {
		return true, fmt.Errorf("flush batch %s: %w", batch.ID, err)
	}
	if err := f.buf.Ack(batch.ID); err != nil {
		return true, fmt.Errorf("flush batch %s: %w", batch.ID, err)
	}
	f.batches.Add(1)
	f.hits.Add(batch.Hits)
	f.log.Debug("batch written", "batch", batch.ID, "keys", batch.Keys, "hits", batch.Hits,
		"took", f.clock.Now().Sub(start))
	return true, nil
}

// record hands the recorder the snapshots of the batch in flight and of
// the last acknowledged one.
func (f *Flusher) record(ctx context.Context) error {
	sealed, err := f.buf.SealedSnapshot()
	if err != nil {
		return err
	}
	acked, err := f.buf.AckedSnapshot()
	if err != nil {
		return err
	}
	if err := f.recorder.Begin(ctx, sealed, acked); err != nil {
		return fmt.Errorf("record batch: %w", err)
	}
	return nil
}

// progress is where a batch's write resumes: a pass and the key starting
// the next chunk of it (nil: the pass's first key).
func decodeProgress(b []byte) (pass, []byte) {
	if len(b) == 0 || pass(b[0]) > donePass {
		return minutePass, nil
	}
	if len(b) == 1 {
		return pass(b[0]), nil
	}
	return pass(b[0]), b[1:]
}

func encodeProgress(p pass, next []byte) []byte {
	return append([]byte{byte(p)}, next...)
}

// writeBatch writes every chunk of every pass of batch from its saved
// progress on.
func (f *Flusher) writeBatch(ctx context.Context, batch *buffer.Batch) error {
	p, from := decodeProgress(batch.Progress)
	for chunk := 1; p < donePass; chunk++ {
		f.ch.reset(p, f.chunkOps)
		if err := f.buf.ScanBatch(batch.ID, from, f.ch.add); err != nil {
			return err
		}
		if f.ch.err != nil {
			return fmt.Errorf("%s pass: %w", p, f.ch.err)
		}
		if len(f.ch.buckets) > 0 {
			if err := f.writeChunk(ctx, p, batch.ID, f.ch.buckets); err != nil {
				if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil && f.chunkOps > 1 {
					// The server is slower than Timeout for this many
					// updates: try smaller chunks, so a slow server still
					// makes progress instead of timing out forever.
					f.chunkOps /= 2
					f.chunksOK = 0
					f.log.Warn("chunk timed out: smaller chunks from now on", "updates_per_chunk", f.chunkOps)
				}
				return fmt.Errorf("%s chunk %d: %w", f.colls[p].Name(), chunk, err)
			}
			if f.chunksOK++; f.chunksOK >= regrowAfter && f.chunkOps < f.maxOps {
				f.chunkOps, f.chunksOK = min(f.chunkOps*2, f.maxOps), 0
			}
		}
		from = f.ch.next
		if from == nil {
			p++
		}
		if err := f.buf.SaveProgress(batch.ID, encodeProgress(p, from)); err != nil {
			return err
		}
		if f.afterChunk != nil {
			if err := f.afterChunk(p, chunk); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeChunk applies buckets' counts to pass p's collection, each exactly
// once for batchID: update the existing ones, create the missing ones
// zero-filled, update those.
func (f *Flusher) writeChunk(ctx context.Context, p pass, batchID string, buckets []bucket) error {
	coll := f.colls[p]
	matched, err := f.bulkWrite(ctx, coll, updates(p, buckets, f.applied, batchID))
	if err != nil {
		return err
	}
	if matched == len(buckets) {
		return nil
	}

	ids := make([]string, len(buckets))
	for i := range buckets {
		ids[i] = buckets[i].id
	}
	if f.afterUpdate != nil {
		f.afterUpdate(p, ids)
	}
	// The buckets that did not match lack this batch: they were missing,
	// or (after a retry) took it in an earlier attempt. Ask which carry
	// it, not which exist: a bucket another writer created since step 1
	// exists but has not taken this batch.
	done, err := f.withBatch(ctx, coll, ids, batchID)
	if err != nil {
		return err
	}
	var missing []bucket
	for i := range buckets {
		if _, ok := done[buckets[i].id]; !ok {
			missing = append(missing, buckets[i])
		}
	}
	if len(missing) == 0 {
		return nil // the unmatched ones already took this batch
	}
	if f.beforeInsert != nil {
		f.beforeInsert(p, ids)
	}
	if err := f.insertZero(ctx, p, coll, missing); err != nil {
		return err
	}
	matched, err = f.bulkWrite(ctx, coll, updates(p, missing, f.applied, batchID))
	if err != nil {
		return err
	}
	if matched != len(missing) {
		return fmt.Errorf("%d of %d new buckets did not take the update", len(missing)-matched, len(missing))
	}
	return nil
}

func (f *Flusher) bulkWrite(ctx context.Context, coll *mongo.Collection, models []mongo.WriteModel) (matched int, err error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	f.bulkWrites.Add(1)
	f.updates.Add(uint64(len(models)))
	if f.beforeBulk != nil {
		if err := f.beforeBulk(len(models)); err != nil {
			return 0, fmt.Errorf("bulk write %d updates: %w", len(models), err)
		}
	}
	res, err := coll.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	if err != nil {
		return 0, fmt.Errorf("bulk write %d updates: %w", len(models), err)
	}
	if !res.Acknowledged {
		return 0, errors.New("bulk write not acknowledged: an acknowledged write concern is required")
	}
	return int(res.MatchedCount), nil
}

// withBatch returns which of ids are in coll and carry batchID in this
// instance's applied entry.
func (f *Flusher) withBatch(ctx context.Context, coll *mongo.Collection, ids []string, batchID string) (map[string]struct{}, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	f.finds.Add(1)
	cur, err := coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}, {Key: f.applied, Value: batchID}},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("find %d buckets: %w", len(ids), err)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("find %d buckets: %w", len(ids), err)
	}
	set := make(map[string]struct{}, len(docs))
	for _, d := range docs {
		set[d.ID] = struct{}{}
	}
	return set, nil
}

// insertZero creates buckets zero-filled. A bucket another host created
// first is left as it is.
func (f *Flusher) insertZero(ctx context.Context, p pass, coll *mongo.Collection, buckets []bucket) error {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	docs := make([]bson.D, len(buckets))
	for i := range buckets {
		docs[i] = zeroDoc(p, &buckets[i])
	}
	f.insertCalls.Add(1)
	_, err := coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	dups, err := ignoreDuplicates(err)
	if err != nil {
		return fmt.Errorf("insert %d buckets: %w", len(buckets), err)
	}
	f.inserts.Add(uint64(len(buckets) - dups))
	return nil
}

// ignoreDuplicates returns nil and the number of duplicate-key errors if
// err holds nothing else: those buckets exist, created by another host.
// Each write error is checked on its own: mongo.IsDuplicateKeyError of the
// whole BulkWriteException is true as soon as one of them is a duplicate.
func ignoreDuplicates(err error) (dups int, _ error) {
	if err == nil {
		return 0, nil
	}
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return 0, err
	}
	for _, we := range bwe.WriteErrors {
		if !mongo.IsDuplicateKeyError(we.WriteError) {
			return 0, err
		}
	}
	return len(bwe.WriteErrors), nil
}
