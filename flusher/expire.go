package flusher

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Expiry modes, one per collection, in ExpiryStats.Mode.
const (
	// ExpiryOff: the retention is 0, the buckets are kept.
	ExpiryOff = "off"
	// ExpiryPending: the retention is set, but Run has not yet found out
	// whether the server takes a TTL index (or was never started).
	ExpiryPending = "pending"
	// ExpiryTTL: the server deletes expired buckets itself, by the TTL
	// index ExpiryIndexName on the bucket's time field.
	ExpiryTTL = "ttl"
	// ExpiryDeleteMany: the server refused the TTL index; Run deletes the
	// expired buckets with a deleteMany every ExpireEvery.
	ExpiryDeleteMany = "deletemany"
)

// ExpiryIndexName names the TTL index the flusher creates. An index of
// that name is the flusher's: it is changed when the retention changes
// and dropped when the retention is 0.
const ExpiryIndexName = "logtally_expiry"

// DefaultExpireEvery is how often the deleteMany fallback runs.
const DefaultExpireEvery = 5 * time.Minute

// ExpiryStats is the expiry of one bucket collection.
type ExpiryStats struct {
	// Level is "minute", "daily" or "monthly"; Collection its name.
	Level, Collection string
	// Retention is the configured retention; 0 keeps the buckets.
	Retention time.Duration
	// Mode is ExpiryOff, ExpiryPending, ExpiryTTL or ExpiryDeleteMany.
	Mode string
	// Runs and Failures count the deleteMany rounds and the failed ones;
	// Deleted the buckets they deleted. All 0 in the other modes.
	Runs, Failures, Deleted uint64
}

// expiry is the expiry state of one collection.
type expiry struct {
	retention               time.Duration
	mode                    atomic.Pointer[string]
	ready                   atomic.Bool // ensureExpiry succeeded
	runs, failures, deleted atomic.Uint64
}

func (e *expiry) setMode(m string) { e.mode.Store(&m) }

func (e *expiry) getMode() string {
	if m := e.mode.Load(); m != nil {
		return *m
	}
	return ExpiryOff
}

// retryFunc calls fn until it succeeds (true) or ctx is done (false),
// logging the failures as what (Flusher.retry).
type retryFunc func(ctx context.Context, what string, fn func(context.Context) error) bool

// expirer keeps the bucket collections' indexes and their expiry: in Run,
// beside the flushes, it creates the query indexes and sets up each
// collection's expiry (and the ledger's), retrying, then runs the
// deleteMany rounds where the server refused a TTL index (the ledger's
// expiry runs whatever the buckets' retention). It holds no lock the
// flushes take: its deleteMany never holds up a batch, and a batch that
// meets a bucket it deleted creates it again.
type expirer struct {
	colls     [3]*mongo.Collection // by pass
	ledger    *mongo.Collection
	retention bucket.Retention
	every     time.Duration // Config.ExpireEvery
	timeout   time.Duration
	clock     clock.Clock
	log       *slog.Logger
	retry     retryFunc // the flusher's: its attempts count in Stats.Retries
	hooks     *hooks    // test seams, nil in production

	levels       [3]expiry // by pass
	ledgerExp    expiry
	indexesReady atomic.Bool   // ensure succeeded
	expiryReady  chan struct{} // closed once every collection's expiry is set up
	readyOnce    sync.Once
}

// newExpirer returns the expirer of cfg (with its defaults set,
// Config.withDefaults) for colls and their database's ledger collection.
func newExpirer(cfg Config, colls [3]*mongo.Collection, retry retryFunc) *expirer {
	e := &expirer{
		colls: colls, ledger: colls[minutePass].Database().Collection(LedgerCollection),
		retention: cfg.Retention, every: cfg.ExpireEvery, timeout: cfg.Timeout,
		clock: cfg.Clock, log: cfg.Logger, retry: retry,
		expiryReady: make(chan struct{}),
	}
	for p := range e.levels {
		r := cfg.Retention.Of(bucket.Level(p))
		e.levels[p].retention = r
		e.levels[p].setMode(ExpiryOff)
		if r > 0 {
			e.levels[p].setMode(ExpiryPending)
		}
	}
	return e
}

// Run ensures the indexes and the expiry (ensure), retrying until they
// are set up; meanwhile, once the expiry of every collection is set up
// and while any is in the deleteMany mode, it deletes their expired
// buckets at once and every ExpireEvery. It returns when ctx is done, or
// sooner once everything is set up and no collection needs deleteMany.
func (x *expirer) Run(ctx context.Context) {
	// Indexes help readers, not the exactly-once writes (updates find
	// buckets by _id): a missing privilege or a conflicting index must
	// not hold back the counts, nor the expiry.
	idxDone := make(chan struct{})
	go func() {
		defer close(idxDone)
		if x.retry(ctx, "ensure indexes (counts are written meanwhile)", x.ensure) {
			x.indexesReady.Store(true)
		}
	}()
	defer func() { <-idxDone }()
	select {
	case <-ctx.Done():
		return
	case <-x.expiryReady:
	}
	deleting := x.ledgerExp.getMode() == ExpiryDeleteMany
	for p := range x.levels {
		deleting = deleting || x.levels[p].getMode() == ExpiryDeleteMany
	}
	if !deleting {
		return
	}
	for {
		x.expireOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-x.clock.After(x.every):
		}
	}
}

// ensure creates the query indexes of the three collections and sets up
// their expiry: the TTL index ExpiryIndexName where a retention is set
// and the server takes it, else the deleteMany mode; without a
// retention, the TTL index an earlier run created is dropped. It is
// idempotent. A query index the server refuses (a conflicting one) does
// not stop the expiry from being set up; the error is returned all the
// same.
func (x *expirer) ensure(ctx context.Context) error {
	if h := x.hooks; h != nil && h.index != nil {
		if err := h.index(); err != nil {
			return err
		}
	}
	var refusedErr error
	for p, coll := range x.colls {
		ctx, cancel := context.WithTimeout(ctx, x.timeout)
		_, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bucket.Level(p).Index()})
		cancel()
		if err != nil {
			err = fmt.Errorf("create index on %s: %w", coll.Name(), err)
			if !refused(err) || authFailure(err) {
				return err
			}
			refusedErr = cmp.Or(refusedErr, err)
		}
	}
	if err := x.ensureAllExpiry(ctx); err != nil {
		return err
	}
	return refusedErr
}

// ensureAllExpiry runs ensureExpiry for each collection not set up yet,
// and closes expiryReady once all are.
func (x *expirer) ensureAllExpiry(ctx context.Context) error {
	for p := range x.levels {
		if x.levels[p].ready.Load() {
			continue
		}
		if err := x.ensureExpiry(ctx, pass(p)); err != nil {
			return err
		}
		x.levels[p].ready.Store(true)
	}
	if !x.ledgerExp.ready.Load() {
		if err := x.ensureLedgerExpiry(ctx); err != nil {
			return err
		}
		x.ledgerExp.ready.Store(true)
	}
	x.readyOnce.Do(func() { close(x.expiryReady) })
	return nil
}

// ensureExpiry makes pass p's collection expire as its retention says:
// with a retention, the TTL index ExpiryIndexName (created, or changed
// when its expireAfterSeconds differs), or the deleteMany mode when the
// server refuses it; without, no index of that name (dropped if an
// earlier run created it). It returns an error only for failures worth
// retrying (network, timeouts).
func (x *expirer) ensureExpiry(ctx context.Context, p pass) error {
	e, coll := &x.levels[p], x.colls[p]
	if h := x.hooks; h != nil && h.expiry != nil {
		if err := h.expiry(p); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	var ours bson.Raw
	cur, err := coll.Indexes().List(ctx)
	if err == nil {
		var specs []bson.Raw
		err = cur.All(ctx, &specs)
		for _, s := range specs {
			if name, _ := s.Lookup("name").StringValueOK(); name == ExpiryIndexName {
				ours = s
			}
		}
	}
	if err != nil && !refused(err) {
		return fmt.Errorf("list indexes of %s: %w", coll.Name(), err)
	}
	// A refused listIndexes (no privilege) goes on as if there were none.
	if e.retention == 0 {
		e.setMode(ExpiryOff)
		if ours != nil {
			if err := coll.Indexes().DropOne(ctx, ExpiryIndexName); err != nil {
				if !refused(err) {
					return fmt.Errorf("drop index %s of %s: %w", ExpiryIndexName, coll.Name(), err)
				}
				x.log.Warn("retention is 0 but the TTL index an earlier run created cannot be dropped: the server still expires these buckets",
					"collection", coll.Name(), "index", ExpiryIndexName, "err", err)
				return nil
			}
			x.log.Info("retention is 0: dropped the TTL index an earlier run created", "collection", coll.Name(), "index", ExpiryIndexName)
		}
		return nil
	}
	want := x.retention.TTLSeconds(p.level())
	if ours != nil {
		secs, ok := ours.Lookup("expireAfterSeconds").AsInt64OK()
		key, _ := ours.Lookup("key").DocumentOK()
		first, _ := key.IndexErr(0)
		if ok && secs == int64(want) && len(mustElements(key)) == 1 && first.Key() == p.level().TimeField() {
			e.setMode(ExpiryTTL)
			x.log.Info("expiry by TTL index", "collection", coll.Name(), "retention", e.retention, "index", ExpiryIndexName, "expire_after_seconds", want)
			return nil
		}
		// Another retention (or not ours as we would make it): replace it.
		if err := coll.Indexes().DropOne(ctx, ExpiryIndexName); err != nil && !refused(err) {
			return fmt.Errorf("drop index %s of %s: %w", ExpiryIndexName, coll.Name(), err)
		}
	}
	_, err = coll.Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys:    bson.D{{Key: p.level().TimeField(), Value: 1}},
		Options: options.Index().SetName(ExpiryIndexName).SetExpireAfterSeconds(want),
	})
	switch {
	case err == nil:
		e.setMode(ExpiryTTL)
		x.log.Info("expiry by TTL index", "collection", coll.Name(), "retention", e.retention, "index", ExpiryIndexName, "expire_after_seconds", want)
	case refused(err):
		e.setMode(ExpiryDeleteMany)
		x.log.Info("the server refuses the TTL index: expired buckets are deleted by a periodic deleteMany instead",
			"collection", coll.Name(), "retention", e.retention, "every", x.every, "err", err)
	default:
		return fmt.Errorf("create TTL index on %s: %w", coll.Name(), err)
	}
	return nil
}

func mustElements(d bson.Raw) []bson.RawElement {
	els, _ := d.Elements()
	return els
}

// refused reports whether err is the server's answer (a command or write
// error with a code), rather than a network failure or a timeout: asking
// again would get the same answer.
func refused(err error) bool {
	if mongo.IsNetworkError(err) || mongo.IsTimeout(err) || errors.Is(err, context.Canceled) {
		return false
	}
	var se mongo.ServerError
	if !errors.As(err, &se) {
		return false
	}
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		return ce.Code != 0
	}
	return true
}

// expireOnce deletes, in every collection in the deleteMany mode, the
// buckets whose period ended at least the retention ago. Failures are
// logged and counted; the next round tries again.
func (x *expirer) expireOnce(ctx context.Context) {
	now := x.clock.Now()
	if x.ledgerExp.getMode() == ExpiryDeleteMany {
		x.expireLedger(ctx, now)
	}
	for p := range x.levels {
		e := &x.levels[p]
		if e.getMode() != ExpiryDeleteMany {
			continue
		}
		coll := x.colls[p]
		cutoff := x.retention.Cutoff(bucket.Level(p), now)
		// A large backlog (retention just set on years of buckets) may
		// take longer than one operation's timeout; what was deleted
		// stays deleted and the next round goes on.
		dctx, cancel := context.WithTimeout(ctx, max(x.timeout, time.Minute))
		res, err := coll.DeleteMany(dctx, bson.D{{Key: bucket.Level(p).TimeField(), Value: bson.D{{Key: "$lt", Value: bson.NewDateTimeFromTime(cutoff)}}}})
		cancel()
		e.runs.Add(1)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			e.failures.Add(1)
			x.log.Warn("deleting expired buckets failed; next round in "+x.every.String(), "collection", coll.Name(), "err", err)
			continue
		}
		e.deleted.Add(uint64(res.DeletedCount))
		if res.DeletedCount > 0 {
			x.log.Info("deleted expired buckets", "collection", coll.Name(), "buckets", res.DeletedCount, "started_before", cutoff)
		}
	}
}

// stats returns the expiry of each collection.
func (x *expirer) stats() []ExpiryStats {
	out := make([]ExpiryStats, len(x.levels))
	for p := range x.levels {
		e := &x.levels[p]
		out[p] = ExpiryStats{
			Level: pass(p).String(), Collection: x.colls[p].Name(), Retention: e.retention, Mode: e.getMode(),
			Runs: e.runs.Load(), Failures: e.failures.Load(), Deleted: e.deleted.Load(),
		}
	}
	return out
}

// ensureLedgerExpiry makes the ledger collection forget entries not moved
// for buffer.DefaultLedgerRetention (the buffer's own retention): a TTL
// index ExpiryIndexName on updated, or the deleteMany mode where the
// server refuses it. It returns an error only for failures worth retrying.
func (x *expirer) ensureLedgerExpiry(ctx context.Context) error {
	coll := x.ledger
	ctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	want := int32(buffer.DefaultLedgerRetention / time.Second)
	_, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys:    bson.D{{Key: "updated", Value: 1}},
		Options: options.Index().SetName(ExpiryIndexName).SetExpireAfterSeconds(want),
	})
	switch {
	case err == nil:
		x.ledgerExp.setMode(ExpiryTTL)
	case refused(err):
		// Also an index of that name with another expiry, which this
		// version never makes: the deleteMany keeps the retention.
		x.ledgerExp.setMode(ExpiryDeleteMany)
		x.log.Info("the server refuses the ledger's TTL index: old entries are deleted by a periodic deleteMany instead",
			"collection", coll.Name(), "retention", buffer.DefaultLedgerRetention, "err", err)
	default:
		return fmt.Errorf("create TTL index on %s: %w", coll.Name(), err)
	}
	return nil
}

// expireLedger deletes the ledger entries not moved for the retention.
func (x *expirer) expireLedger(ctx context.Context, now time.Time) {
	coll := x.ledger
	e := &x.ledgerExp
	dctx, cancel := context.WithTimeout(ctx, max(x.timeout, time.Minute))
	res, err := coll.DeleteMany(dctx, bson.D{{Key: "updated", Value: bson.D{{Key: "$lt", Value: now.Add(-buffer.DefaultLedgerRetention)}}}})
	cancel()
	e.runs.Add(1)
	if err != nil {
		if ctx.Err() == nil {
			e.failures.Add(1)
			x.log.Warn("deleting old ledger entries failed; next round in "+x.every.String(), "collection", coll.Name(), "err", err)
		}
		return
	}
	e.deleted.Add(uint64(res.DeletedCount))
}
