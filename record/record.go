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
// (tailer.Checkpoint's binary form), opaque here.
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

// Record is one instance's progress document.
type Record struct {
	// Instance is the instance name (config instance): the document id.
	Instance string `bson:"_id"`
	// BufferID is the buffer whose batches the record describes: the key
	// of the buckets' applied marks.
	BufferID string `bson:"buffer_id"`
	// Batch is the latest batch whose bucket updates may have begun.
	Batch string `bson:"batch"`
	// Acked reports that every bucket update of Batch was acknowledged.
	Acked bool `bson:"acked"`
	// SealedAt is when Batch was sealed: To was the position then.
	SealedAt time.Time `bson:"sealed_at"`
	// From is where the counts of the batch before Batch end (FromBatch):
	// Batch's counts are the lines between From and To.
	From      []Checkpoint `bson:"from"`
	FromBatch string       `bson:"from_batch"`
	// FromSealedAt is when FromBatch was sealed.
	FromSealedAt time.Time `bson:"from_sealed_at"`
	// To is where Batch's counts end.
	To []Checkpoint `bson:"to"`
	// MinuteOnly: Batch goes to the minute buckets only; its counts wait
	// in the buffer for a full batch (flush.coarse_interval).
	MinuteOnly bool `bson:"minute_only,omitempty"`
	// Coarse is where the counts of the daily and monthly buckets end when
	// Batch began: the last acknowledged full batch's position
	// (CoarseBatch, sealed at CoarseSealedAt). Empty when the buffer knew
	// none (then they end where the minute buckets' do).
	Coarse         []Checkpoint `bson:"coarse,omitempty"`
	CoarseBatch    string       `bson:"coarse_batch,omitempty"`
	CoarseSealedAt time.Time    `bson:"coarse_sealed_at,omitzero"`
	// Finished are the last checkpoints of the files Batch finished
	// (their checkpoints deleted within it, so To does not name them),
	// at most MaxFinished; FinishedLeftOut counts those left out.
	// FinishedKnown is false in a record of an older logtally, or of a
	// batch sealed by one: then which files Batch finished is not known.
	Finished        []Checkpoint `bson:"finished,omitempty"`
	FinishedKnown   bool         `bson:"finished_known,omitempty"`
	FinishedLeftOut int          `bson:"finished_left_out,omitempty"`
	// CoarseFinished and the two fields after it are the same for the
	// minute-only batches acknowledged since CoarseBatch.
	CoarseFinished        []Checkpoint `bson:"coarse_finished,omitempty"`
	CoarseFinishedKnown   bool         `bson:"coarse_finished_known,omitempty"`
	CoarseFinishedLeftOut int          `bson:"coarse_finished_left_out,omitempty"`
	// Archives are the parts of replayed archives Batch counts, at most
	// MaxFinished; ArchivesLeftOut counts those left out.
	Archives        []Archive `bson:"archives,omitempty"`
	ArchivesLeftOut int       `bson:"archives_left_out,omitempty"`
	// CoarseArchives are those of the minute-only batches acknowledged
	// since CoarseBatch (their daily and monthly counts wait), at most
	// MaxFinished.
	CoarseArchives        []Archive `bson:"coarse_archives,omitempty"`
	CoarseArchivesLeftOut int       `bson:"coarse_archives_left_out,omitempty"`
	// Lease is the running daemon's lease.
	Lease Lease `bson:"lease"`
	// Updated is when the record was last written.
	Updated time.Time `bson:"updated"`
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

// Begin records that the bucket updates of batch (sealed at sealedAt, its
// counts ending at to) may begin, the batch before it (fromBatch, sealed
// at fromSealedAt) ending at from. It fails with ErrLeaseLost when another
// run holds the lease.
func (s *Store) Begin(ctx context.Context, bufferID, batch string, sealedAt time.Time, to []Checkpoint,
	fromBatch string, fromSealedAt time.Time, from []Checkpoint) error {
	return s.BeginCoarse(ctx, bufferID, batch, sealedAt, to, fromBatch, fromSealedAt, from, CoarseRecord{})
}

// MaxFinished bounds the finished files a record lists per set, to keep
// it small; the rest are counted (Record.FinishedLeftOut).
const MaxFinished = 256

// Finished is a set of finished files as Begin records it.
type Finished struct {
	// Known is false when the buffer did not keep them (a batch sealed by
	// an older logtally).
	Known bool
	// Files are their last checkpoints; at most MaxFinished are recorded.
	Files []Checkpoint
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

// Extra is what BeginWith records beyond BeginCoarse: the files finished
// within the batch, and within the minute-only batches since the coarse
// position, and the archives' parts of the batch.
type Extra struct {
	Finished, CoarseFinished Finished
	Archives, CoarseArchives []Archive
}

// CoarseRecord is what BeginCoarse records of the coarse counts (Record's
// MinuteOnly, Coarse, CoarseBatch and CoarseSealedAt).
type CoarseRecord struct {
	MinuteOnly bool
	Batch      string
	SealedAt   time.Time
	At         []Checkpoint
}

// BeginCoarse is Begin with the coarse counts' position.
func (s *Store) BeginCoarse(ctx context.Context, bufferID, batch string, sealedAt time.Time, to []Checkpoint,
	fromBatch string, fromSealedAt time.Time, from []Checkpoint, c CoarseRecord) error {
	return s.BeginWith(ctx, bufferID, batch, sealedAt, to, fromBatch, fromSealedAt, from, c, Extra{})
}

// BeginWith is BeginCoarse with the files finished within the batch (and
// since the coarse position). A record written without them (by Begin,
// BeginCoarse or an older logtally) says they are not known.
func (s *Store) BeginWith(ctx context.Context, bufferID, batch string, sealedAt time.Time, to []Checkpoint,
	fromBatch string, fromSealedAt time.Time, from []Checkpoint, c CoarseRecord, x Extra) error {
	fin, finLeft := bounded(x.Finished)
	cfin, cfinLeft := bounded(x.CoarseFinished)
	arcs, arcsLeft := boundedArchives(x.Archives)
	carcs, carcsLeft := boundedArchives(x.CoarseArchives)
	return s.update(ctx, "begin batch", bson.D{
		{Key: "archives", Value: arcs},
		{Key: "archives_left_out", Value: arcsLeft},
		{Key: "coarse_archives", Value: carcs},
		{Key: "coarse_archives_left_out", Value: carcsLeft},
		{Key: "finished", Value: fin},
		{Key: "finished_known", Value: x.Finished.Known},
		{Key: "finished_left_out", Value: finLeft},
		{Key: "coarse_finished", Value: cfin},
		{Key: "coarse_finished_known", Value: x.CoarseFinished.Known},
		{Key: "coarse_finished_left_out", Value: cfinLeft},
		{Key: "buffer_id", Value: bufferID},
		{Key: "batch", Value: batch},
		{Key: "acked", Value: false},
		{Key: "sealed_at", Value: sealedAt},
		{Key: "from", Value: nonNil(from)},
		{Key: "from_batch", Value: fromBatch},
		{Key: "from_sealed_at", Value: fromSealedAt},
		{Key: "to", Value: nonNil(to)},
		{Key: "minute_only", Value: c.MinuteOnly},
		{Key: "coarse", Value: nonNil(c.At)},
		{Key: "coarse_batch", Value: c.Batch},
		{Key: "coarse_sealed_at", Value: c.SealedAt},
	})
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

// bounded returns at most MaxFinished of f's files, and how many it left
// out.
func bounded(f Finished) ([]Checkpoint, int) {
	if !f.Known {
		return []Checkpoint{}, 0
	}
	if len(f.Files) > MaxFinished {
		return f.Files[:MaxFinished], len(f.Files) - MaxFinished
	}
	return nonNil(f.Files), 0
}

// boundedArchives returns at most MaxFinished of a, and how many it left
// out.
func boundedArchives(a []Archive) ([]Archive, int) {
	if len(a) > MaxFinished {
		return a[:MaxFinished], len(a) - MaxFinished
	}
	if a == nil {
		return []Archive{}, 0
	}
	return a, 0
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
		Instance: s.instance, BufferID: bufferID, From: []Checkpoint{}, To: []Checkpoint{},
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
