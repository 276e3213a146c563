package record

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/clock"
)

// DefaultCollection is the collection holding the records.
const DefaultCollection = "progress"

// DefaultLeaseTTL is how long a lease lasts without renewal. A running
// daemon renews it every third of that, so it lapses within a TTL of the
// daemon's death.
const DefaultLeaseTTL = 30 * time.Second

// ErrInstanceInUse is returned by Acquire when another live daemon holds
// this instance's lease and keeps renewing it: two daemons use the same
// instance name.
var ErrInstanceInUse = errors.New("another running logtally uses this instance name")

// ErrLeaseLost is returned by Begin and Renew when the lease is no longer
// this Store's: another daemon took it over after it expired.
var ErrLeaseLost = errors.New("the instance's lease was taken over by another logtally")

// Checkpoint is one stored checkpoint: its buffer key and encoded value
// (stream.Checkpoint's binary form), opaque here.
type Checkpoint struct {
	Key   string `bson:"key"`
	Value []byte `bson:"value"`
}

// Lease says which run of logtally writes this instance's batches.
type Lease struct {
	// Holder is a random id of the holding run (one per Store).
	Holder string `bson:"holder"`
	// Until is when the lease expires unless renewed.
	Until time.Time `bson:"until"`
}

// Record is one instance's progress document: the latest batch whose
// bucket updates may have begun (Current), the batch before it (Previous)
// and the position of the daily and monthly counts (Coarse). Its stored
// form is flat, as logtally has always written it (see document.go).
type Record struct {
	// Instance is the instance name (config instance): the document id.
	Instance string
	// BufferID is the buffer whose batches the record describes: the key
	// of the buckets' applied marks.
	BufferID string
	// Current is the latest batch whose bucket updates may have begun:
	// its counts are the lines between Previous's checkpoints and its
	// own. Its MinuteOnly says it goes to the minute buckets only (its
	// counts wait in the buffer for a full batch: flush.coarse_interval).
	Current Snapshot
	// Acked reports that every bucket update of Current was acknowledged.
	Acked bool
	// Previous is where the counts of the batch before Current end. Only
	// its Batch, SealedAt and Checkpoints are kept.
	Previous Snapshot
	// Coarse is where the counts of the daily and monthly buckets end when
	// Current began: the last acknowledged full batch's position, with the
	// files finished and the archives' parts counted by the minute-only
	// batches acknowledged since (their daily and monthly counts wait).
	// Empty when the buffer knew none (then they end where the minute
	// buckets' do). Its MinuteOnly is not kept.
	Coarse Snapshot
	// Lease is the running daemon's lease.
	Lease Lease
	// Updated is when the record was last written.
	Updated time.Time
}

// Snapshot is one batch's position as the record keeps it.
type Snapshot struct {
	// Batch is the batch's id, sealed at SealedAt.
	Batch    string
	SealedAt time.Time
	// Checkpoints are where the batch's counts end.
	Checkpoints []Checkpoint
	// MinuteOnly: the batch goes to the minute buckets only.
	MinuteOnly bool
	// Layout is how the batch's counts are laid out in the buckets
	// (buffer.Layout): 0 for a batch of a logtally before layouts (every
	// page its own buckets). Only Current's is kept, stored with the
	// batch id it belongs to ("layout": {batch, n}; left out for 0), so
	// that a record of before, or a value an earlier batch left, reads
	// as 0.
	Layout int
	// Finished are the files the batch finished (their checkpoints
	// deleted within it, so Checkpoints does not name them).
	Finished Finished
	// Archives are the parts of replayed archives the batch counts, at
	// most MaxFinished; ArchivesLeftOut counts those left out.
	Archives        []Archive
	ArchivesLeftOut int
}

// Store reads and writes one instance's record.
type Store struct {
	coll     *mongo.Collection
	instance string
	holder   string
	timeout  time.Duration
	ttl      time.Duration
	clock    clock.Clock
	log      *slog.Logger
}

// Config configures NewStore.
type Config struct {
	// DB holds the collection. Required.
	DB *mongo.Database
	// Collection defaults to DefaultCollection.
	Collection string
	// Instance is the instance name. Required.
	Instance string
	// Holder is this run's random id (see NewHolder). Required.
	Holder string
	// Timeout bounds each operation. Default 10s.
	Timeout time.Duration
	// LeaseTTL is how long a lease lasts without renewal. Default
	// DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Clock defaults to clock.Real.
	Clock clock.Clock
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// NewStore returns a Store for cfg.
func NewStore(cfg Config) (*Store, error) {
	if cfg.DB == nil || cfg.Instance == "" || cfg.Holder == "" {
		return nil, errors.New("new record store: DB, Instance and Holder are required")
	}
	if cfg.Collection == "" {
		cfg.Collection = DefaultCollection
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Store{
		coll: cfg.DB.Collection(cfg.Collection), instance: cfg.Instance, holder: cfg.Holder,
		timeout: cfg.Timeout, ttl: cfg.LeaseTTL, clock: cfg.Clock, log: log.With("component", "progress"),
	}, nil
}

// RenewEvery is how often the lease holder renews the lease: a third of
// its TTL.
func (s *Store) RenewEvery() time.Duration { return s.ttl / 3 }

// Holder returns the lease holder id of this Store.
func (s *Store) Holder() string { return s.holder }

// Load returns the instance's record, or nil when there is none.
func (s *Store) Load(ctx context.Context) (*Record, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var r Record
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: s.instance}}).Decode(&r)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read progress record of %q: %w", s.instance, err)
	}
	return &r, nil
}

// Begin records that the bucket updates of current may begin, the batch
// before it ending at previous and the daily and monthly counts at
// coarse. The files finished and the archives' parts of current and
// coarse are kept up to MaxFinished each, the rest counted (LeftOut,
// ArchivesLeftOut); a Finished not Known is kept as not known. It fails
// with ErrLeaseLost when another run holds the lease.
func (s *Store) Begin(ctx context.Context, bufferID string, current, previous, coarse Snapshot) error {
	r := Record{BufferID: bufferID, Current: bounded(current), Previous: bounded(previous), Coarse: bounded(coarse)}
	var set bson.D
	for _, f := range r.batchFields() {
		if !f.sparse || !f.empty() {
			set = append(set, bson.E{Key: f.key, Value: f.get()})
		}
	}
	return s.update(ctx, "begin batch", set)
}

// MaxFinished bounds the finished files (and the archives' parts) a
// record lists per snapshot, to keep it small; the rest are counted
// (Finished.LeftOut, Snapshot.ArchivesLeftOut).
const MaxFinished = 256

// Finished is a set of finished files.
type Finished struct {
	// Known is false when the buffer did not keep them (a batch sealed by
	// an older logtally), and in a record of an older logtally: then
	// which files the batch finished is not known.
	Known bool
	// Files are their last checkpoints; at most MaxFinished are recorded,
	// LeftOut counts those left out.
	Files   []Checkpoint
	LeftOut int
}

// Archive is the part of a replayed archive's decompressed stream a batch
// counts: the lines in [From, To) of the file at Path, whose first FPLen
// bytes hash (FNV-1a 64) to FPSum, parsed with Parser (the replay source's
// parser settings, opaque here) as source Source.
type Archive struct {
	Source string `bson:"source"`
	Path   string `bson:"path"`
	FPLen  int    `bson:"fp_len"`
	FPSum  int64  `bson:"fp_sum"` // the uint64 sum's bits
	From   int64  `bson:"from"`
	To     int64  `bson:"to"`
	Parser []byte `bson:"parser,omitempty"`
}

// Renew extends the lease by its TTL. When acked is the record's batch,
// it also marks that batch acknowledged. It fails with ErrLeaseLost when
// another run holds the lease.
func (s *Store) Renew(ctx context.Context, acked string) error {
	set := bson.D{{Key: "lease.until", Value: s.clock.Now().Add(s.ttl)}}
	filter := bson.D{{Key: "_id", Value: s.instance}, {Key: "lease.holder", Value: s.holder}}
	if acked == "" {
		return s.updateWhere(ctx, "renew lease", filter, set)
	}
	// Two steps: the ack only applies to the batch it names.
	if err := s.updateWhere(ctx, "renew lease", filter, set); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	_, err := s.coll.UpdateOne(ctx, append(filter, bson.E{Key: "batch", Value: acked}),
		bson.D{{Key: "$set", Value: bson.D{{Key: "acked", Value: true}}}})
	if err != nil {
		return fmt.Errorf("mark batch acknowledged: %w", err)
	}
	return nil
}

// Release ends the lease now (a clean stop), so a successor need not wait.
func (s *Store) Release(ctx context.Context) error {
	return s.update(ctx, "release lease", bson.D{{Key: "lease.until", Value: time.Time{}}})
}

func (s *Store) update(ctx context.Context, what string, set bson.D) error {
	return s.updateWhere(ctx, what, bson.D{{Key: "_id", Value: s.instance}, {Key: "lease.holder", Value: s.holder}}, set)
}

func (s *Store) updateWhere(ctx context.Context, what string, filter, set bson.D) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	set = append(set, bson.E{Key: "updated", Value: s.clock.Now()})
	res, err := s.coll.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: set}})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("%s: %w", what, ErrLeaseLost)
	}
	return nil
}

// bounded returns sn as Begin records it: at most MaxFinished finished
// files and archives' parts (the rest counted), no nil lists, and no
// files when they are not known.
func bounded(sn Snapshot) Snapshot {
	sn.Checkpoints = nonNil(sn.Checkpoints)
	f := &sn.Finished
	switch {
	case !f.Known:
		f.Files, f.LeftOut = []Checkpoint{}, 0
	case len(f.Files) > MaxFinished:
		f.Files, f.LeftOut = f.Files[:MaxFinished], f.LeftOut+len(f.Files)-MaxFinished
	default:
		f.Files = nonNil(f.Files)
	}
	switch {
	case len(sn.Archives) > MaxFinished:
		sn.Archives, sn.ArchivesLeftOut = sn.Archives[:MaxFinished], sn.ArchivesLeftOut+len(sn.Archives)-MaxFinished
	case sn.Archives == nil:
		sn.Archives = []Archive{}
	}
	return sn
}

func nonNil(c []Checkpoint) []Checkpoint {
	if c == nil {
		return []Checkpoint{}
	}
	return c
}

// Acquire takes the instance's lease for this Store's holder, creating the
// record (for bufferID) when there is none. The lease is free when it was
// released or has expired, or when own is true and the record is
// bufferID's: the same buffer file's previous run (a restart after a
// crash). Otherwise it waits for the lease to expire, polling every poll;
// if the holder keeps renewing it meanwhile, two live daemons share the
// instance name, and it returns ErrInstanceInUse. It returns the record as
// it was before the lease was taken (nil when it created it).
func (s *Store) Acquire(ctx context.Context, bufferID string, own bool, poll time.Duration) (*Record, error) {
	var seen *Lease
	logged := false
	for {
		r, err := s.Load(ctx)
		if err != nil {
			return nil, err
		}
		now := s.clock.Now()
		if r == nil {
			if err := s.create(ctx, bufferID, now); err == nil {
				return nil, nil
			} else if !mongo.IsDuplicateKeyError(err) {
				return nil, err
			}
			continue // created meanwhile: look again
		}
		if r.Lease.Holder == s.holder || !r.Lease.Until.After(now) || (own && r.BufferID == bufferID) {
			ok, err := s.take(ctx, r.Lease, now)
			if err != nil {
				return nil, err
			}
			if ok {
				return r, nil
			}
			continue // taken meanwhile: look again
		}
		if seen != nil && seen.Holder == r.Lease.Holder && r.Lease.Until.After(seen.Until) {
			return nil, fmt.Errorf("%w: instance %q is leased to buffer %s, renewed until %s while this one waited",
				ErrInstanceInUse, s.instance, r.BufferID, r.Lease.Until.UTC().Format(time.RFC3339))
		}
		if seen == nil || seen.Holder != r.Lease.Holder {
			seen = &Lease{Holder: r.Lease.Holder, Until: r.Lease.Until}
		}
		if !logged {
			s.log.Warn("waiting for the instance's lease: another logtally held it recently", "instance", s.instance,
				"buffer_id", r.BufferID, "lease_until", r.Lease.Until.UTC().Format(time.RFC3339))
			logged = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.clock.After(poll):
		}
	}
}

func (s *Store) create(ctx context.Context, bufferID string, now time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	_, err := s.coll.InsertOne(ctx, Record{
		Instance: s.instance, BufferID: bufferID,
		Current: Snapshot{Checkpoints: []Checkpoint{}}, Previous: Snapshot{Checkpoints: []Checkpoint{}},
		Lease: Lease{Holder: s.holder, Until: now.Add(s.ttl)}, Updated: now,
	})
	if err != nil {
		return fmt.Errorf("create progress record of %q: %w", s.instance, err)
	}
	return nil
}

// take replaces the lease old by this holder's, if it is still old.
func (s *Store) take(ctx context.Context, old Lease, now time.Time) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	res, err := s.coll.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: s.instance}, {Key: "lease.holder", Value: old.Holder}, {Key: "lease.until", Value: old.Until}},
		bson.D{{Key: "$set", Value: bson.D{
			{Key: "lease", Value: Lease{Holder: s.holder, Until: now.Add(s.ttl)}},
			{Key: "updated", Value: now},
		}}})
	if err != nil {
		return false, fmt.Errorf("take the lease of %q: %w", s.instance, err)
	}
	return res.MatchedCount == 1, nil
}

// NewHolder returns a random lease holder id for one run.
func NewHolder() string { return rand.Text()[:16] }
