package flusher

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/logtally/logtally/bucket"
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

// runExpiry waits until EnsureIndexes has set up the expiry of every
// collection, then, while any is in the deleteMany mode, deletes its
// expired buckets at once and every ExpireEvery until ctx is done. It
// runs beside the flushes and holds no lock they take.
func (f *Flusher) runExpiry(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-f.expiryReady:
	}
	deleting := f.ledgerExp.getMode() == ExpiryDeleteMany
	for p := range f.expiry {
		deleting = deleting || f.expiry[p].getMode() == ExpiryDeleteMany
	}
	if !deleting {
		return
	}
	for {
		f.expireOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-f.clock.After(f.expireEvery):
		}
	}
}

// ensureAllExpiry runs ensureExpiry for each collection not set up yet,
// and closes expiryReady once all are.
func (f *Flusher) ensureAllExpiry(ctx context.Context) error {
	for p := range f.expiry {
		if f.expiry[p].ready.Load() {
			continue
		}
		if err := f.ensureExpiry(ctx, pass(p)); err != nil {
			return err
		}
		f.expiry[p].ready.Store(true)
	}
	if !f.ledgerExp.ready.Load() {
		if err := f.ensureLedgerExpiry(ctx); err != nil {
			return err
		}
		f.ledgerExp.ready.Store(true)
	}
	f.readyOnce.Do(func() { close(f.expiryReady) })
	return nil
}

// ensureExpiry makes pass p's collection expire as its retention says:
// with a retention, the TTL index ExpiryIndexName (created, or changed
// when its expireAfterSeconds differs), or the deleteMany mode when the
// server refuses it; without, no index of that name (dropped if an
// earlier run created it). It returns an error only for failures worth
// retrying (network, timeouts).
func (f *Flusher) ensureExpiry(ctx context.Context, p pass) error {
	e, coll := &f.expiry[p], f.colls[p]
	if h := f.hooks; h != nil && h.expiry != nil {
		if err := h.expiry(p); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
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
				f.log.Warn("retention is 0 but the TTL index an earlier run created cannot be dropped: the server still expires these buckets",
					"collection", coll.Name(), "index", ExpiryIndexName, "err", err)
				return nil
			}
			f.log.Info("retention is 0: dropped the TTL index an earlier run created", "collection", coll.Name(), "index", ExpiryIndexName)
		}
		return nil
	}
	want := f.retention.TTLSeconds(p.level())
	if ours != nil {
		secs, ok := ours.Lookup("expireAfterSeconds").AsInt64OK()
		key, _ := ours.Lookup("key").DocumentOK()
		first, _ := key.IndexErr(0)
		if ok && secs == int64(want) && len(mustElements(key)) == 1 && first.Key() == p.level().TimeField() {
			e.setMode(ExpiryTTL)
			f.log.Info("expiry by TTL index", "collection", coll.Name(), "retention", e.retention, "index", ExpiryIndexName, "expire_after_seconds", want)
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
		f.log.Info("expiry by TTL index", "collection", coll.Name(), "retention", e.retention, "index", ExpiryIndexName, "expire_after_seconds", want)
	case refused(err):
		e.setMode(ExpiryDeleteMany)
		f.log.Info("the server refuses the TTL index: expired buckets are deleted by a periodic deleteMany instead",
			"collection", coll.Name(), "retention", e.retention, "every", f.expireEvery, "err", err)
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
func (f *Flusher) expireOnce(ctx context.Context) {
	now := f.clock.Now()
	if f.ledgerExp.getMode() == ExpiryDeleteMany {
		f.expireLedger(ctx, now)
	}
	for p := range f.expiry {
		e := &f.expiry[p]
		if e.getMode() != ExpiryDeleteMany {
			continue
		}
		coll := f.colls[p]
		cutoff := f.retention.Cutoff(bucket.Level(p), now)
		// A large backlog (retention just set on years of buckets) may
		// take longer than one operation's timeout; what was deleted
		// stays deleted and the next round goes on.
		dctx, cancel := context.WithTimeout(ctx, max(f.timeout, time.Minute))
		res, err := coll.DeleteMany(dctx, bson.D{{Key: bucket.Level(p).TimeField(), Value: bson.D{{Key: "$lt", Value: bson.NewDateTimeFromTime(cutoff)}}}})
		cancel()
		e.runs.Add(1)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			e.failures.Add(1)
			f.log.Warn("deleting expired buckets failed; next round in "+f.expireEvery.String(), "collection", coll.Name(), "err", err)
			continue
		}
		e.deleted.Add(uint64(res.DeletedCount))
		if res.DeletedCount > 0 {
			f.log.Info("deleted expired buckets", "collection", coll.Name(), "buckets", res.DeletedCount, "started_before", cutoff)
		}
	}
}

// expiredHits counts n hits of pass p not written because their buckets
// were past the retention, and logs it at most every 10 minutes.
func (f *Flusher) expiredHits(p pass, n uint64) {
	total := f.expired.Add(n)
	now := f.clock.Now()
	if last := f.expiredLog.Load(); last == 0 || now.Sub(time.Unix(0, last)) >= 10*time.Minute {
		f.expiredLog.Store(now.UnixNano())
		f.log.Info("counts for buckets past their retention not written (the other levels take them)",
			"collection", f.colls[p].Name(), "retention", f.expiry[p].retention, "hits", n, "expired_hits_total", total)
	}
}

// expiryStats returns the expiry of each collection.
func (f *Flusher) expiryStats() []ExpiryStats {
	out := make([]ExpiryStats, len(f.expiry))
	for p := range f.expiry {
		e := &f.expiry[p]
		out[p] = ExpiryStats{
			Level: pass(p).String(), Collection: f.colls[p].Name(), Retention: e.retention, Mode: e.getMode(),
			Runs: e.runs.Load(), Failures: e.failures.Load(), Deleted: e.deleted.Load(),
		}
	}
	return out
}
