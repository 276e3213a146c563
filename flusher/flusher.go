package flusher

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/visitor"
	"go.mongodb.org/mongo-driver/v2/mongo"
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
)

// Recorder keeps the database's own record of the batch in flight, from
// which a lost buffer is rebuilt (package record, wired by pipeline).
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
	// Numbers, when not nil, gives the buffer its writer number before
	// the first batch is sealed (record.Store.ClaimNumber): batches are
	// then numbered and their guard entries short (bucket.NumberedGuard).
	// Nil: the buffer's batches keep random ids and the 47-byte guard
	// unless it has a number already.
	Numbers Numbers
	// Barrier, when not nil, is called by Run before it seals a new
	// batch, and returns once what was read before the call is in the
	// buffer (nil), or why it is not (then, or when ctx ends first, Run
	// seals what is there: the rest goes into the next batch). So the
	// batch holds every line read so far.
	Barrier func(ctx context.Context) error
	// Recorder, when not nil, records each batch before its bucket
	// updates begin.
	Recorder Recorder
	// User is the connection string's user (never its password), named
	// in the log when MongoDB refuses the credentials.
	User string
	// Collections names the bucket collections; empty names get their
	// defaults.
	Collections bucket.Collections
	// Interval is how often Run seals pending counts and sends them.
	// Default DefaultInterval.
	Interval time.Duration
	// CoarseInterval, when not zero, writes the daily and monthly buckets
	// only every CoarseInterval: the batches in between go to the minute
	// buckets only, and their counts wait in the buffer for the next full
	// batch (buffer.Seal.MinuteOnly). Daily and monthly buckets then lag by
	// up to CoarseInterval + Interval, and a fleet sends them a fraction
	// of the updates (docs/scaling.md). Zero: every batch is full.
	CoarseInterval time.Duration
	// VisitorPeriod is the salt period of the visitor sketches the
	// buffer holds (their documents' ids name it).
	VisitorPeriod visitor.Period
	// MaxOps is the number of bucket updates per bulk write. Default
	// DefaultMaxOps.
	MaxOps int
	// MaxBackoff caps the wait between retries. Default DefaultMaxBackoff.
	MaxBackoff time.Duration
	// Timeout bounds each database operation. Default DefaultTimeout.
	Timeout time.Duration
	// Retention is how long each level's buckets are kept after their
	// period ends; 0 keeps them. Run expires them by a TTL index, or by a
	// periodic deleteMany where the server refuses TTL indexes (expire.go).
	Retention bucket.Retention
	// ExpireEvery is how often the deleteMany fallback runs. Default
	// DefaultExpireEvery.
	ExpireEvery time.Duration
	// Preallocate makes Run create, ahead of time, the next period's
	// buckets of the pages active in the current one (prealloc.go), so
	// that their first write is a small update instead of the insert of
	// a whole document at the period's start.
	Preallocate bool
	// PreallocateRate bounds preallocation, in buckets per second.
	// Default DefaultPreallocateRate.
	PreallocateRate float64
	// PreallocateMinHits, when not 0, is the hits a page needs in an hour
	// (day, month) to be hot in the next: its next hour's minute buckets
	// (next day's, next month's bucket) are its own, preallocated; a cold
	// page's counts go to its site's tails. 0: each level's break-even
	// (bucket.Level.BreakEven: 1,257 hits an hour, 331 a day, 72 a
	// month), where a page's own buckets cost no more bytes than its tail
	// entries. It holds whether Preallocate is on or not.
	PreallocateMinHits int
	// PreallocateMaxPages bounds the pages tracked per level and period;
	// pages past it are not proposed hot. Default
	// DefaultPreallocateMaxPages.
	PreallocateMaxPages int
	// Clock drives Run's timing. Default clock.Real{}.
	Clock clock.Clock
	// Logger receives the flusher's messages; nil discards them.
	Logger *slog.Logger
}

// TailStats counts the writes of the cold pages' tails.
type TailStats struct {
	// Writes counts the tail documents written (one per tail and batch;
	// in Stats.BucketWrites too).
	Writes uint64
	// Spills counts the tails' shares of a batch written to spill
	// documents instead (the tail full, or the share more than one
	// update carries; docs/buckets.md), resends included; SpillDocs the
	// spill documents sent (in Stats.Inserts or InsertDups too).
	Spills, SpillDocs uint64
}

// Stats are counters since New, read atomically.
type Stats struct {
	Batches     uint64 // batches written and acknowledged
	Hits        uint64 // hits in those batches
	BulkWrites  uint64 // bulk writes sent
	Updates     uint64 // bucket updates sent, resends included
	Finds       uint64 // finds for missing buckets
	Inserts     uint64 // buckets this flusher created: whole, or zero-filled (the three-step path)
	InsertDups  uint64 // documents sent in an insert that met an existing one (duplicate key)
	InsertCalls uint64 // InsertMany calls sent
	// BucketWrites counts the documents written: one per bucket (site
	// total, visitors document) and batch, however many operations it
	// took; resends included.
	BucketWrites uint64
	Retries      uint64 // failed attempts retried by Run or Drain
	// FlushDurations counts the batches written per FlushBuckets bound
	// (not cumulative), the last entry past the last bound.
	FlushDurations []uint64
	// FlushCount and FlushSeconds are the batches written and the time
	// they took in all.
	FlushCount   uint64
	FlushSeconds float64
	// FailedFlushes counts attempts to write a batch that failed.
	FailedFlushes uint64
	// LastAck is when a batch was last acknowledged; zero before.
	LastAck time.Time
	// Prealloc counts preallocation's work (zero when it is off). Its
	// inserts are not in Inserts or InsertCalls.
	Prealloc PreallocStats
	// PlanFinds counts the finds of plans, PlanInserts the plans proposed
	// (each a document inserted), PlanInsertCalls the insertMany calls
	// they went in (one round trip each) and PlanDups the proposals that
	// met another writer's plan (then read by a find); the
	// preallocator's included.
	PlanFinds, PlanInserts, PlanInsertCalls, PlanDups uint64
	// Tails counts the cold pages' writes (TailStats).
	Tails TailStats
	// SourcesFolded counts the site days whose counts by dimension of a
	// batch went under (other): the day past bucket.SiteSourcesLimit.
	SourcesFolded uint64
	// Expiry is the expiry of the minute, daily and monthly buckets (by
	// level), then of the site totals, then of the visitors documents of
	// day and month salt periods (ExpiryStats).
	Expiry []ExpiryStats
	// LateBuckets counts buckets this flusher created for counts whose
	// period had already expired (a batch written later than the
	// retention): the counts land, and the next expiry deletes them.
	LateBuckets uint64
	// ExpiredHits counts hits not written to a bucket (minute, daily or
	// monthly) or to a site total because it was past its retention when
	// their batch was written: a replay of old logs, a long outage. The
	// levels kept still take them. A hit dropped from several levels (or
	// a level and the site totals) counts once for each.
	ExpiredHits uint64
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
	numbers    Numbers
	barrier    func(ctx context.Context) error
	user       string
	colls      [3]*mongo.Collection // by pass
	sites      siteDest             // the sites' daily totals (sitePass)
	visitors   visitorDest          // the visitor registers (writeVisitors)
	interval   time.Duration
	cadence    cadence   // which batches are full (under mu)
	chunk      chunkSize // updates per chunk
	maxBackoff time.Duration
	timeout    time.Duration
	clock      clock.Clock
	log        *slog.Logger

	mu sync.Mutex // one Flush at a time
	ch Chunker

	stats counters       // behind Stats
	beat  atomic.Int64   // Unix nanoseconds, see LastBeat
	prog  progressRecord // see Progress

	maint maintenance   // retention, expiry, preallocation and the buckets known to exist
	kick  chan struct{} // Kick: flush now

	spillWarned spillWarnings // the tails whose spill was logged

	hooks *hooks // test seams, nil in production
}

// cadence says which batches are sealed full and which minute-only
// (Config.CoarseInterval; see seal).
type cadence struct {
	coarse   time.Duration // Config.CoarseInterval
	lastFull time.Time     // when the last full batch was sealed
	draining bool          // Drain: every batch is full
}

// minuteOnly reports whether a batch sealed at now is minute-only: with a
// coarse interval, until it has passed since the last full batch (the
// first batch of a run, and every batch while draining, are full).
func (c *cadence) minuteOnly(now time.Time) bool {
	return c.coarse > 0 && !c.draining && !c.lastFull.IsZero() && now.Sub(c.lastFull) < c.coarse
}

// chunkSize is the number of updates per chunk of the write path: halved
// after a chunk timed out, doubled again (up to max) after regrowAfter
// chunks written in a row.
type chunkSize struct {
	max int // Config.MaxOps
	ops int // current chunk size
	ok  int // chunks written since ops last changed
}

// shrink halves the chunk size after a timed-out chunk and reports
// whether it did: not below one update.
func (c *chunkSize) shrink() bool {
	if c.ops <= 1 {
		return false
	}
	c.ops /= 2
	c.ok = 0
	return true
}

// written counts a chunk written, doubling the chunk size (up to max)
// after regrowAfter in a row.
func (c *chunkSize) written() {
	if c.ok++; c.ok >= regrowAfter && c.ops < c.max {
		c.ops, c.ok = min(c.ops*2, c.max), 0
	}
}

// maintenance is the work beside the batches' writes: the buckets'
// retention and expiry, preallocation, and the cache of buckets known to
// exist that writes and preallocation share.
type maintenance struct {
	retention bucket.Retention
	known     *known // the buckets written or preallocated lately (applyOnce)
	expirer   *expirer
	prealloc  *preallocator // nil when off
	act       *activity     // the pages seen, for plans and preallocation
	plans     *planner      // the plans the writes follow
}

// counters are the flusher's counters behind Stats, read atomically.
type counters struct {
	batches, hits, bulkWrites, updates, finds, inserts, insertCalls, retries   atomic.Uint64
	insertDups, bucketWrites, tailWrites, tailSpills, spillDocs, sourcesFolded atomic.Uint64
	timing                                                                     timing

	late       atomic.Uint64 // Stats.LateBuckets
	lateLogged atomic.Int64  // Unix nanoseconds of the last late-bucket warning
	expired    atomic.Uint64 // Stats.ExpiredHits
	expiredLog atomic.Int64  // when expiredHits last logged, Unix nanoseconds
}

// fill copies the counters into st.
func (c *counters) fill(st *Stats) {
	st.Batches = c.batches.Load()
	st.Hits = c.hits.Load()
	st.BulkWrites = c.bulkWrites.Load()
	st.Updates = c.updates.Load()
	st.Finds = c.finds.Load()
	st.Inserts = c.inserts.Load()
	st.InsertDups = c.insertDups.Load()
	st.InsertCalls = c.insertCalls.Load()
	st.BucketWrites = c.bucketWrites.Load()
	st.Tails = TailStats{Writes: c.tailWrites.Load(), Spills: c.tailSpills.Load(), SpillDocs: c.spillDocs.Load()}
	st.Retries = c.retries.Load()
	st.SourcesFolded = c.sourcesFolded.Load()
	st.LateBuckets = c.late.Load()
	st.ExpiredHits = c.expired.Load()
	c.timing.fill(st)
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
	if cfg.Retention.Minute < 0 || cfg.Retention.Daily < 0 || cfg.Retention.Monthly < 0 || cfg.ExpireEvery < 0 {
		return nil, errors.New("new flusher: negative Retention or ExpireEvery")
	}
	if cfg.PreallocateRate < 0 || math.IsNaN(cfg.PreallocateRate) || cfg.PreallocateMinHits < 0 || cfg.PreallocateMaxPages < 0 {
		return nil, errors.New("new flusher: negative PreallocateRate, PreallocateMinHits or PreallocateMaxPages")
	}
	cfg = cfg.withDefaults()
	f := &Flusher{
		buf: cfg.Buffer,
		colls: [3]*mongo.Collection{
			cfg.DB.Collection(cfg.Collections.Name(bucket.Minute)),
			cfg.DB.Collection(cfg.Collections.Name(bucket.Daily)),
			cfg.DB.Collection(cfg.Collections.Name(bucket.Monthly)),
		},
		sites:      siteDest{coll: cfg.DB.Collection(cfg.Collections.SiteName())},
		visitors:   visitorDest{coll: cfg.DB.Collection(cfg.Collections.VisitorName()), period: cfg.VisitorPeriod},
		maint:      maintenance{retention: cfg.Retention},
		recorder:   cfg.Recorder,
		numbers:    cfg.Numbers,
		barrier:    cfg.Barrier,
		user:       cfg.User,
		interval:   cfg.Interval,
		cadence:    cadence{coarse: cfg.CoarseInterval},
		chunk:      chunkSize{max: cfg.MaxOps},
		maxBackoff: cfg.MaxBackoff,
		timeout:    cfg.Timeout,
		clock:      cfg.Clock,
		log:        cfg.Logger,
	}
	f.chunk.ops = f.chunk.max
	f.maint.known = newKnown()
	f.maint.act = newActivity(cfg.PreallocateMaxPages)
	f.maint.plans = newPlanner(cfg, f.colls, f.maint.act)
	f.maint.prealloc = newPreallocator(cfg, f.colls, f.maint.known, f.maint.act, f.maint.plans)
	f.maint.expirer = newExpirer(cfg, f.colls, f.sites.coll, f.visitors.coll, f.retry)
	f.kick = make(chan struct{}, 1)
	return f, nil
}

// withDefaults returns cfg with the defaults of its zero fields set and
// its logger (one that discards when nil) tagged with the component.
func (cfg Config) withDefaults() Config {
	cfg.Interval = cmp.Or(cfg.Interval, DefaultInterval)
	cfg.MaxOps = cmp.Or(cfg.MaxOps, DefaultMaxOps)
	cfg.MaxBackoff = cmp.Or(cfg.MaxBackoff, DefaultMaxBackoff)
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.ExpireEvery = cmp.Or(cfg.ExpireEvery, DefaultExpireEvery)
	cfg.PreallocateMaxPages = cmp.Or(cfg.PreallocateMaxPages, DefaultPreallocateMaxPages)
	cfg.Clock = cmp.Or[clock.Clock](cfg.Clock, clock.Real{})
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg.Logger = log.With("component", "flusher")
	return cfg
}

// IndexesReady reports whether Run has created the bucket indexes and set
// up their expiry.
func (f *Flusher) IndexesReady() bool { return f.maint.expirer.indexesReady.Load() }

// heartbeat records that Run is making its rounds.
func (f *Flusher) heartbeat() { f.beat.Store(f.clock.Now().UnixNano()) }

// LastBeat returns when the flusher last showed it is not stuck: Run
// woke for a round, an attempt began, or a chunk was written. While
// MongoDB is down it still beats once per attempt (at most MaxBackoff
// apart). It is zero before Run.
func (f *Flusher) LastBeat() time.Time {
	if n := f.beat.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// Stats returns the counters.
func (f *Flusher) Stats() Stats {
	st := Stats{
		Prealloc: f.maint.prealloc.stats(),
		Expiry:   f.maint.expirer.stats(),
	}
	f.stats.fill(&st)
	st.PlanFinds = f.maint.plans.finds.Load()
	st.PlanInserts = f.maint.plans.inserts.Load()
	st.PlanInsertCalls = f.maint.plans.insertCalls.Load()
	st.PlanDups = f.maint.plans.dups.Load()
	return st
}
