package flusher

import (
	"bytes"
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
	"github.com/logtally/logtally/visitor"
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

// ExpiryIndexName names the TTL index the flusher creates in each bucket
// collection and in the site totals' (and the ledger's). An index of that
// name, or of a name it starts (the visitors collection's, one per salt
// period: VisitorExpiryIndexName), is the flusher's: it is changed when
// the retention changes and dropped when the retention is 0.
const ExpiryIndexName = "logtally_expiry"

// VisitorExpiryIndexName names the TTL index of the visitors documents of
// salt period p: "logtally_expiry_day", "logtally_expiry_month". The
// visitors collection holds both periods, each with its level's retention
// (bucket.VisitorLevel), so each has its own partial TTL index.
func VisitorExpiryIndexName(p visitor.Period) string { return ExpiryIndexName + "_" + p.String() }

// DefaultExpireEvery is how often the deleteMany fallback runs.
const DefaultExpireEvery = 5 * time.Minute

// ExpiryStats is the expiry of one set of documents: a bucket collection,
// the site totals, or the visitors documents of one salt period.
type ExpiryStats struct {
	// Level is the level whose retention applies, "minute", "daily" or
	// "monthly"; Collection the collection. The site totals have the
	// daily one (bucket.SiteLevel); the visitors collection is listed
	// twice, "daily" for its day-period documents and "monthly" for its
	// month-period ones (bucket.VisitorLevel).
	Level, Collection string
	// Retention is the configured retention; 0 keeps the documents.
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

// target is one set of documents that expire with one level's retention
// (bucket.Retention: Cutoff for the deleteMany, TTLSeconds for the TTL
// index, so the one retention rule): a bucket collection, the site totals
// (bucket.SiteLevel), or the visitors documents of one salt period
// (bucket.VisitorLevel). Each has its own TTL index, or deleteMany.
type target struct {
	level bucket.Level
	coll  *mongo.Collection
	field string // the time field: the start of a document's period
	index string // the TTL index's name
	// only selects the target's documents in a collection it shares:
	// the TTL index's partialFilterExpression and part of the
	// deleteMany's filter. Nil: every document of coll.
	only bson.D
	expiry
}

// expiryTargets returns the targets of colls (by pass), the site totals'
// collection and the visitors': the three levels first, by pass.
func expiryTargets(colls [3]*mongo.Collection, sites, visitors *mongo.Collection) []*target {
	ts := make([]*target, 0, len(colls)+3)
	for p, coll := range colls {
		l := bucket.Level(p)
		ts = append(ts, &target{level: l, coll: coll, field: l.TimeField(), index: ExpiryIndexName})
	}
	ts = append(ts, &target{level: bucket.SiteLevel, coll: sites, field: bucket.FieldMetadata + "." + bucket.FieldDate, index: ExpiryIndexName})
	for p := visitor.Day; p <= visitor.Month; p++ {
		ts = append(ts, &target{level: bucket.VisitorLevel(p), coll: visitors, field: bucket.FieldMetadata + "." + bucket.FieldDate,
			index: VisitorExpiryIndexName(p), only: bucket.VisitorPeriodFilter(p)})
	}
	return ts
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

// expirer keeps the bucket collections' indexes and the expiry of the
// buckets, the site totals and the visitors documents: in Run, beside the
// flushes, it creates the query indexes and sets up each target's expiry
// (and the ledger's), retrying, then runs the deleteMany rounds where the
// server refused a TTL index (the ledger's expiry runs whatever the
// buckets' retention). It holds no lock the flushes take: its deleteMany
// never holds up a batch, and a batch that meets a bucket it deleted
// creates it again.
type expirer struct {
	colls     [3]*mongo.Collection // by pass
	targets   []*target            // the levels by pass, then the site totals and the visitors documents
	ledger    *mongo.Collection
	retention bucket.Retention
	every     time.Duration // Config.ExpireEvery
	timeout   time.Duration
	clock     clock.Clock
	log       *slog.Logger
	retry     retryFunc // the flusher's: its attempts count in Stats.Retries
	hooks     *hooks    // test seams, nil in production

	ledgerExp    expiry
	indexesReady atomic.Bool   // ensure succeeded
	expiryReady  chan struct{} // closed once every collection's expiry is set up
	readyOnce    sync.Once
}

// newExpirer returns the expirer of cfg (with its defaults set,
// Config.withDefaults) for colls, the site totals' and the visitors'
// collections and their database's ledger collection.
func newExpirer(cfg Config, colls [3]*mongo.Collection, sites, visitors *mongo.Collection, retry retryFunc) *expirer {
	e := &expirer{
		colls: colls, targets: expiryTargets(colls, sites, visitors),
		ledger:    colls[minutePass].Database().Collection(LedgerCollection),
		retention: cfg.Retention, every: cfg.ExpireEvery, timeout: cfg.Timeout,
		clock: cfg.Clock, log: cfg.Logger, retry: retry,
		expiryReady: make(chan struct{}),
	}
	for _, t := range e.targets {
		t.retention = cfg.Retention.Of(t.level)
		t.setMode(ExpiryOff)
		if t.retention > 0 {
			t.setMode(ExpiryPending)
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
	for _, t := range x.targets {
		deleting = deleting || t.getMode() == ExpiryDeleteMany
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
// the expiry of every target: its TTL index where a retention is set and
// the server takes it, else the deleteMany mode; without a retention, the
// TTL index an earlier run created is dropped. It is
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

// ensureAllExpiry runs ensureExpiry for each target not set up yet, and
// closes expiryReady once all are.
func (x *expirer) ensureAllExpiry(ctx context.Context) error {
	for i, t := range x.targets {
		if t.ready.Load() {
			continue
		}
		if err := x.ensureExpiry(ctx, i); err != nil {
			return err
		}
		t.ready.Store(true)
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

// ensureExpiry makes target i (x.targets) expire as its retention says:
// with a retention, its TTL index (created, or replaced when its
// expireAfterSeconds, key or partial filter differ), or the deleteMany
// mode when the server refuses it; without, no index of that name
// (dropped if an earlier run created it). It returns an error only for
// failures worth retrying (network, timeouts). The hook h.expiry sees the
// bucket levels by pass, and the others as the passes after them.
func (x *expirer) ensureExpiry(ctx context.Context, i int) error {
	t := x.targets[i]
	coll := t.coll
	if h := x.hooks; h != nil && h.expiry != nil {
		if err := h.expiry(pass(i)); err != nil {
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
			if name, _ := s.Lookup("name").StringValueOK(); name == t.index {
				ours = s
			}
		}
	}
	if err != nil && !refused(err) {
		return fmt.Errorf("list indexes of %s: %w", coll.Name(), err)
	}
	// A refused listIndexes (no privilege, no collection yet) goes on as
	// if there were none.
	if t.retention == 0 {
		t.setMode(ExpiryOff)
		if ours != nil {
			if err := coll.Indexes().DropOne(ctx, t.index); err != nil {
				if !refused(err) {
					return fmt.Errorf("drop index %s of %s: %w", t.index, coll.Name(), err)
				}
				x.log.Warn("retention is 0 but the TTL index an earlier run created cannot be dropped: the server still expires these documents",
					"collection", coll.Name(), "index", t.index, "err", err)
				return nil
			}
			x.log.Info("retention is 0: dropped the TTL index an earlier run created", "collection", coll.Name(), "index", t.index)
		}
		return nil
	}
	want := x.retention.TTLSeconds(t.level)
	var only bson.Raw
	if t.only != nil {
		if only, err = bson.Marshal(t.only); err != nil {
			return fmt.Errorf("TTL index %s of %s: %w", t.index, coll.Name(), err)
		}
	}
	if ours != nil {
		secs, ok := ours.Lookup("expireAfterSeconds").AsInt64OK()
		key, _ := ours.Lookup("key").DocumentOK()
		first, _ := key.IndexErr(0)
		partial, _ := ours.Lookup("partialFilterExpression").DocumentOK()
		if ok && secs == int64(want) && len(mustElements(key)) == 1 && first.Key() == t.field && bytes.Equal(partial, only) {
			t.setMode(ExpiryTTL)
			x.log.Info("expiry by TTL index", "collection", coll.Name(), "retention", t.retention, "index", t.index, "expire_after_seconds", want)
			return nil
		}
		// Another retention (or not ours as we would make it): replace it.
		if err := coll.Indexes().DropOne(ctx, t.index); err != nil && !refused(err) {
			return fmt.Errorf("drop index %s of %s: %w", t.index, coll.Name(), err)
		}
	}
	opts := options.Index().SetName(t.index).SetExpireAfterSeconds(want)
	if t.only != nil {
		opts.SetPartialFilterExpression(t.only)
	}
	_, err = coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: t.field, Value: 1}}, Options: opts})
	switch {
	case err == nil:
		t.setMode(ExpiryTTL)
		x.log.Info("expiry by TTL index", "collection", coll.Name(), "retention", t.retention, "index", t.index, "expire_after_seconds", want)
	case refused(err):
		t.setMode(ExpiryDeleteMany)
		x.log.Info("the server refuses the TTL index: expired documents are deleted by a periodic deleteMany instead",
			"collection", coll.Name(), "retention", t.retention, "index", t.index, "every", x.every, "err", err)
	default:
		return fmt.Errorf("create TTL index %s on %s: %w", t.index, coll.Name(), err)
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

// expireOnce deletes, in every target in the deleteMany mode, the
// documents whose period ended at least the retention ago
// (bucket.Retention.Cutoff of the target's level). Failures are logged
// and counted; the next round tries again.
func (x *expirer) expireOnce(ctx context.Context) {
	now := x.clock.Now()
	if x.ledgerExp.getMode() == ExpiryDeleteMany {
		x.expireLedger(ctx, now)
	}
	for _, t := range x.targets {
		if t.getMode() != ExpiryDeleteMany {
			continue
		}
		coll := t.coll
		cutoff := x.retention.Cutoff(t.level, now)
		filter := append(bson.D{{Key: t.field, Value: bson.D{{Key: "$lt", Value: bson.NewDateTimeFromTime(cutoff)}}}}, t.only...)
		// A large backlog (retention just set on years of buckets) may
		// take longer than one operation's timeout; what was deleted
		// stays deleted and the next round goes on.
		dctx, cancel := context.WithTimeout(ctx, max(x.timeout, time.Minute))
		res, err := coll.DeleteMany(dctx, filter)
		cancel()
		t.runs.Add(1)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			t.failures.Add(1)
			x.log.Warn("deleting expired documents failed; next round in "+x.every.String(), "collection", coll.Name(), "index", t.index, "err", err)
			continue
		}
		t.deleted.Add(uint64(res.DeletedCount))
		if res.DeletedCount > 0 {
			x.log.Info("deleted expired documents", "collection", coll.Name(), "level", t.level.String(), "documents", res.DeletedCount, "started_before", cutoff)
		}
	}
}

// stats returns the expiry of each target: the bucket levels by pass,
// then the site totals, then the visitors documents of each salt period.
func (x *expirer) stats() []ExpiryStats {
	out := make([]ExpiryStats, len(x.targets))
	for i, t := range x.targets {
		out[i] = ExpiryStats{
			Level: t.level.String(), Collection: t.coll.Name(), Retention: t.retention, Mode: t.getMode(),
			Runs: t.runs.Load(), Failures: t.failures.Load(), Deleted: t.deleted.Load(),
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
