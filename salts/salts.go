// Package salts keeps the salts of the visitor keys (package visitor):
// one random 16-byte key per salt period, shared by every host through
// MongoDB, held locally in the buffer so that lines are keyed while
// MongoDB is away, and deleted from both a grace after its period ends so
// that a stored register can no longer be linked to an address.
//
// The first host that needs a period's salt inserts a random one under the
// period's id; an insert that meets a duplicate reads the one another host
// inserted first: every host keys a period's visitors alike. The Keeper
// fetches the current period's salt and the next one's ahead of time.
//
// Caveats: a period whose salt the host could not fetch (MongoDB away at
// the period's start, and no salt held) has no visitors on this host until
// it can; lines of a period whose salt is deleted (a replay of old
// archives) add no visitors. Both are counted (Keeper.Missing). Salts are
// deleted by the hosts, not by a TTL index (FerretDB refuses them): a salt
// that expires while every host is stopped stays in MongoDB until one
// starts.
package salts

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/visitor"
)

// Collection is the MongoDB collection of the salts.
const Collection = "salts"

// Defaults of Config.
const (
	DefaultGrace = 2 * time.Hour
	DefaultEvery = time.Minute
)

// Config configures a Keeper.
type Config struct {
	// DB holds the salts collection.
	DB *mongo.Database
	// Buffer holds the salts locally.
	Buffer *buffer.Buffer
	// Period is the salt period.
	Period visitor.Period
	// Grace is how long after its period ends a salt is kept (late lines,
	// a restart after midnight); DefaultGrace if 0.
	Grace time.Duration
	// Every is how often Run fetches and expires; DefaultEvery if 0.
	Every time.Duration
	// Timeout bounds one MongoDB operation (default 10s).
	Timeout time.Duration
	Clock   clock.Clock
	Logger  *slog.Logger
}

// Keeper fetches, holds and expires the salts.
type Keeper struct {
	cfg     Config
	log     *slog.Logger
	mu      sync.Mutex // one fetch or expiry at a time
	held    atomic.Pointer[map[int64]visitor.Salt]
	missing atomic.Uint64
}

// New returns a Keeper of cfg; it does no I/O (Load, Run).
func New(cfg Config) (*Keeper, error) {
	if cfg.DB == nil || cfg.Buffer == nil {
		return nil, errors.New("salts: no database or buffer")
	}
	if cfg.Grace < 0 || cfg.Every < 0 {
		return nil, errors.New("salts: negative grace or interval")
	}
	cfg.Grace = cmp.Or(cfg.Grace, DefaultGrace)
	cfg.Every = cmp.Or(cfg.Every, DefaultEvery)
	cfg.Timeout = cmp.Or(cfg.Timeout, 10*time.Second)
	cfg.Clock = cmp.Or[clock.Clock](cfg.Clock, clock.Real{})
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	k := &Keeper{cfg: cfg, log: log.With("component", "salts")}
	k.held.Store(&map[int64]visitor.Salt{})
	return k, nil
}

// Load publishes the salts the buffer holds that have not expired, and
// forgets the others: call it before the first line is keyed.
func (k *Keeper) Load() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.cfg.Clock.Now()
	held := map[int64]visitor.Salt{}
	err := k.cfg.Buffer.Update(func(tx *buffer.Tx) error {
		es, err := tx.Salts()
		if err != nil {
			return err
		}
		for _, e := range es {
			start, ok := k.startOf(e.ID)
			if !ok || !now.Before(e.Expires) {
				if err := tx.DeleteSalt(e.ID); err != nil {
					return err
				}
				continue
			}
			held[start] = e.Salt
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("salts: %w", err)
	}
	k.held.Store(&held)
	return nil
}

// startOf returns the start of the period named id, if it is one of this
// Keeper's period.
func (k *Keeper) startOf(id string) (int64, bool) { return k.cfg.Period.ParseID(id) }

// For returns the salt of the period holding sec, if held. It never
// blocks: the aggregator calls it per period it meets.
func (k *Keeper) For(sec int64) (*visitor.Salt, bool) {
	start, _ := k.cfg.Period.Bounds(sec)
	s, ok := (*k.held.Load())[start]
	if !ok {
		k.missing.Add(1)
		return nil, false
	}
	return &s, true
}

// Holds reports whether the salt of the period holding sec is held,
// without counting a miss.
func (k *Keeper) Holds(sec int64) bool {
	start, _ := k.cfg.Period.Bounds(sec)
	_, ok := (*k.held.Load())[start]
	return ok
}

// Missing returns how many times For had no salt for a period.
func (k *Keeper) Missing() uint64 { return k.missing.Load() }

// Run fetches the current and next periods' salts and expires the old
// ones every Config.Every, until ctx ends. MongoDB errors are logged and
// retried at the next round.
func (k *Keeper) Run(ctx context.Context) error {
	for {
		if err := k.Round(ctx); err != nil && ctx.Err() == nil {
			k.log.Warn("salts not fetched or expired this round (visitor keys use the salts held)", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-k.cfg.Clock.After(k.cfg.Every):
		}
	}
}

// Round fetches the salts of the period holding now, of the next one, and
// of the previous one while its grace lasts (lines of yesterday read after
// midnight, a restart catching up), and deletes the expired ones from
// MongoDB and the buffer.
func (k *Keeper) Round(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.cfg.Clock.Now()
	start, end := k.cfg.Period.Bounds(now.Unix())
	periods := []int64{start, end}
	if prev, _ := k.cfg.Period.Bounds(start - 1); now.Before(k.expires(prev)) {
		periods = append(periods, prev)
	}
	var errs []error
	for _, s := range periods {
		if err := k.ensure(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, k.expire(ctx, now))
	return errors.Join(errs...)
}

// expires returns when the salt of the period starting at start expires:
// the grace after the period's end (period.Unit.Expires).
func (k *Keeper) expires(start int64) time.Time {
	return k.cfg.Period.Unit().Expires(start, k.cfg.Grace)
}

// ensure makes the salt of the period starting at start held: from the
// buffer if there, else MongoDB's (inserting a random one first if none).
func (k *Keeper) ensure(ctx context.Context, start int64) error {
	if _, ok := (*k.held.Load())[start]; ok {
		return nil
	}
	id := k.cfg.Period.ID(start)
	var fresh visitor.Salt
	if _, err := rand.Read(fresh[:]); err != nil {
		return fmt.Errorf("salt %s: %w", id, err)
	}
	coll := k.cfg.DB.Collection(Collection)
	expires := k.expires(start)
	ictx, cancel := context.WithTimeout(ctx, k.cfg.Timeout)
	_, err := coll.InsertOne(ictx, bson.D{{Key: "_id", Value: id}, {Key: "salt", Value: bson.Binary{Data: fresh[:]}},
		{Key: "expires", Value: bson.NewDateTimeFromTime(expires)}})
	cancel()
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("salt %s: insert: %w", id, err)
	}
	var doc struct {
		Salt bson.Binary `bson:"salt"`
	}
	fctx, cancel := context.WithTimeout(ctx, k.cfg.Timeout)
	err = coll.FindOne(fctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc)
	cancel()
	if err != nil {
		return fmt.Errorf("salt %s: read: %w", id, err)
	}
	var s visitor.Salt
	if len(doc.Salt.Data) != len(s) {
		return fmt.Errorf("salt %s: %d bytes, want %d", id, len(doc.Salt.Data), len(s))
	}
	copy(s[:], doc.Salt.Data)
	err = k.cfg.Buffer.Update(func(tx *buffer.Tx) error { return tx.PutSalt(buffer.SaltEntry{ID: id, Salt: s, Expires: expires}) })
	if err != nil {
		return err
	}
	held := map[int64]visitor.Salt{}
	for st, v := range *k.held.Load() {
		held[st] = v
	}
	held[start] = s
	k.held.Store(&held)
	k.log.Info("salt held", "period", id, "expires", expires.UTC().Format(time.RFC3339))
	return nil
}

// expire deletes the salts that expired at now: from MongoDB (any host's
// round does it) and from the buffer and the held set.
func (k *Keeper) expire(ctx context.Context, now time.Time) error {
	dctx, cancel := context.WithTimeout(ctx, k.cfg.Timeout)
	_, err := k.cfg.DB.Collection(Collection).DeleteMany(dctx, bson.D{{Key: "expires", Value: bson.D{{Key: "$lte", Value: bson.NewDateTimeFromTime(now)}}}},
		options.DeleteMany())
	cancel()
	if err != nil {
		err = fmt.Errorf("expire salts: %w", err)
	}
	held := map[int64]visitor.Salt{}
	changed := false
	for st, v := range *k.held.Load() {
		if !now.Before(k.expires(st)) {
			if derr := k.cfg.Buffer.Update(func(tx *buffer.Tx) error { return tx.DeleteSalt(k.cfg.Period.ID(st)) }); derr != nil {
				return errors.Join(err, derr)
			}
			changed = true
			k.log.Info("salt deleted", "period", k.cfg.Period.ID(st))
			continue
		}
		held[st] = v
	}
	if changed {
		k.held.Store(&held)
	}
	return err
}

// Lookup reads the salts from MongoDB only, for a re-read before any
// buffer exists (a state dir rebuilt): For asks MongoDB once per period
// and never inserts (a period without a salt had none when its lines were
// counted).
type Lookup struct {
	db      *mongo.Database
	period  visitor.Period
	timeout time.Duration
	cache   map[int64]*visitor.Salt
}

// NewLookup returns a Lookup of db's salts of period.
func NewLookup(db *mongo.Database, period visitor.Period, timeout time.Duration) *Lookup {
	return &Lookup{db: db, period: period, timeout: cmp.Or(timeout, 10*time.Second), cache: map[int64]*visitor.Salt{}}
}

// For returns the salt of the period holding sec, if MongoDB has it.
func (l *Lookup) For(sec int64) (*visitor.Salt, bool) {
	start, _ := l.period.Bounds(sec)
	s, ok := l.cache[start]
	if !ok {
		var doc struct {
			Salt bson.Binary `bson:"salt"`
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
		err := l.db.Collection(Collection).FindOne(ctx, bson.D{{Key: "_id", Value: l.period.ID(start)}}).Decode(&doc)
		cancel()
		if err == nil && len(doc.Salt.Data) == len(visitor.Salt{}) {
			s = new(visitor.Salt)
			copy(s[:], doc.Salt.Data)
		}
		l.cache[start] = s
	}
	return s, s != nil
}
