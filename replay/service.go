package replay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/logtally/logtally/archive"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/ledger"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
)

// Target is the running pipeline a replay counts into, as a replay sees
// it (*pipeline.Pipeline is one): a replay is a source of chunks beside
// the tailers. It takes its settings (ReplayConfig), consults what the
// pipeline holds to decide which files it may read and where each starts
// (ReplayState), then opens a feed of its sources and sends their chunks
// (OpenReplay); it never sees the pipeline's parts. (The names say
// Replay: on *pipeline.Pipeline, Open opens the buffer and Status is its
// own.)
type Target interface {
	// ReplayConfig returns the settings a replay reads, with MongoDB's
	// ledger.
	ReplayConfig() Config
	// ReplayState returns what the pipeline holds, read-only.
	ReplayState() State
	// OpenReplay makes the pipeline count chunks of each source
	// (aggregator source name -> parser settings), keeps their settings
	// in the state dir (a rebuild of a batch holding them parses the
	// archive again with them), and returns the feed they are sent on.
	OpenReplay(sources map[string]parser.Config) (Feed, error)
}

// State is what a running pipeline holds, as a replay consults it: the
// tailers' files and checkpoints, which a replay refuses, and the state
// dir's ledger, which says where a stream is counted and how far MongoDB
// acknowledged it.
type State interface {
	// Followed returns the files the tailers follow now, Checkpoints the
	// checkpoints the state dir holds: a replay refuses them and their
	// copies while the tailers run.
	Followed() []tailer.File
	Checkpoints() ([]stream.Checkpoint, error)
	// Counted returns the state dir's ledger entries of every stream
	// beginning with head (stream.LedgerCandidates); Entries those under
	// keys (stream.EntryKey) held.
	Counted(head []byte) ([]stream.Entry, error)
	Entries(keys []string) (map[string]stream.Entry, error)
}

// Feed is a replay's way into a running pipeline (Target.OpenReplay), as
// a source's: how its chunks are sent, the writes hurried, the pipeline's
// signals to stop and that what was sent is in the state dir, and the
// totals its summary is made of.
type Feed interface {
	// Sender returns how one reader goroutine sends chunks of source (one
	// of the feed's) to the aggregator (returning ctx's error if it ends
	// first), parsing their lines on the reader's core while chunks wait.
	Sender(source string) func(ctx context.Context, ch stream.Chunk) error
	// Kick asks the pipeline to write what it holds to MongoDB now rather
	// than at its next interval: a replay that has read everything waits
	// for its acknowledgement.
	Kick()
	// Reading is done when the pipeline stops reading: a replay then
	// stops. FinalCommit is closed once the aggregator's final commit is
	// made, after that: what it had taken is then in the state dir.
	Reading() context.Context
	FinalCommit() <-chan struct{}
	// Totals returns the running totals a replay's summary is the
	// difference of, its lines and hits those of the feed's sources.
	Totals() Totals
}

// Totals are a pipeline's running totals: a replay's summary subtracts
// those at its start from those at its end.
type Totals struct {
	// Lines and Hits are of the feed's sources.
	Lines, Hits uint64
	// ParsedAhead is the lines parsed on a reader's core (Feed.Sender).
	ParsedAhead uint64
	// Outcomes counts lines per parser outcome name, but "ok".
	Outcomes map[string]uint64
	// The database figures of Summary.
	Updates, Inserts, Finds, BulkWrites, InsertCalls, BucketWrites, Plans, PlanCalls, ExpiredHits uint64
}

// Claims is MongoDB's ledger as a replay uses it (*ledger.Store is one):
// how far streams are counted there, and the claims that let one replay
// at a time read a stream, whatever its host or state dir.
type Claims interface {
	Read(ctx context.Context, keys []string) ([]stream.Entry, error)
	Claim(ctx context.Context, key string, c ledger.Claim, now time.Time) (cur ledger.Claim, ok bool, err error)
	Release(ctx context.Context, key, holder string) error
}

// Config is what a replay reads of the pipeline's settings, and the
// services it is given.
type Config struct {
	// Sources are the configured sources, in order.
	Sources []Source
	// NoTail: no tailer runs (`logtally replay` with no daemon).
	NoTail bool
	// Instance names this logtally in MongoDB's ledger claims.
	Instance string
	// Holder identifies this state dir in MongoDB's ledger claims (its
	// instance id).
	Holder string
	// MaxLineBytes is the longest line counted.
	MaxLineBytes int
	// Claims is MongoDB's ledger, read and claimed by replays.
	Claims Claims
	// Clock defaults to clock.Real.
	Clock clock.Clock
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// Source is a configured source, as a replay sees it: the globs whose
// files (and their rotated names) it parses as the source does.
type Source struct {
	Name   string
	Paths  []string
	Parser parser.Config
}

// Service runs replays into one running pipeline, one at a time, and
// answers the control socket (Serve).
type Service struct {
	p         Target
	state     State
	cfg       Config
	log       *slog.Logger
	replaying sync.Mutex // held by a Replay
	replayMu  sync.Mutex // guards the replayed files' outcomes
}

// NewService returns the replay service of p.
func NewService(p Target) *Service {
	cfg := p.ReplayConfig()
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{p: p, state: p.ReplayState(), cfg: cfg, log: log.With("component", "pipeline")}
}

// ErrRunning is returned by Replay while another replay runs in the
// same Service.
var ErrRunning = errors.New("another replay is running in this logtally")

// replayPoll is how often Replay reports progress and looks at the ledger
// while it waits for its counts to be acknowledged.
const replayPoll = 200 * time.Millisecond

// Request asks a running pipeline to count archived log files.
type Request struct {
	// Files are the files' paths, absolute.
	Files []string `json:"files"`
	// Source parses every file as this configured source; empty: each
	// file as the source whose globs (or their rotated names) match it.
	Source string `json:"source,omitempty"`
	// Site, Format and LogFormat override the source's; a file no source
	// matches needs Site and Format.
	Site      string `json:"site,omitempty"`
	Format    string `json:"format,omitempty"`
	LogFormat string `json:"log_format,omitempty"`
	// Since and Until, when not zero, keep only the hits in [Since, Until).
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// Jobs is how many files are read at once. Default GOMAXPROCS.
	Jobs int `json:"jobs,omitempty"`
}

// Replay file statuses.
const (
	StatusCounted = "counted"         // read from its start
	StatusResumed = "resumed"         // read from where the ledger said it was counted
	StatusSkipped = "already counted" // nothing new in it
	StatusEmpty   = "empty"
	StatusStopped = "stopped" // the replay was stopped while reading it
	// StatusDamaged: cut short or corrupt (archive.DamagedError): its
	// whole lines before the damage are counted; the intact file,
	// replayed, completes it.
	StatusDamaged = "damaged"
)

// File is what a replay did with one file.
type File struct {
	Path        string `json:"path"`
	Compression string `json:"compression"`
	// First is the time of its first hit, zero when none was found in its
	// first bytes.
	First time.Time `json:"first,omitzero"`
	// From is where reading began: the bytes already counted (by an
	// earlier replay, the daemon or another host).
	From int64 `json:"from"`
	// End is the decompressed length read to (where it stopped, when
	// stopped).
	End int64 `json:"end"`
	// Lines is the lines read.
	Lines  int64  `json:"lines"`
	Status string `json:"status"`
}

// Summary is a replay's outcome.
type Summary struct {
	// Files, oldest first by their first hit.
	Files []File `json:"files"`
	// Lines and Hits are the replay's totals; Malformed and Filtered its
	// lines not counted.
	Lines, Hits uint64
	// ParsedAhead is how many of the replay's lines its readers parsed,
	// on other cores than the aggregator's (aggregate.Preparser).
	ParsedAhead uint64
	// Outcomes counts lines per parser outcome name (malformed and
	// filtered reasons).
	Outcomes map[string]uint64 `json:"outcomes,omitempty"`
	// Database operations during the replay (with the daemon's own
	// traffic when it runs inside one): bucket updates, documents sent
	// to an insert (created or met), finds, bulk writes, insert calls,
	// and documents written (one per bucket and batch); Plans are the
	// plans' finds and documents inserted, PlanCalls their round trips.
	Updates, Inserts, Finds, BulkWrites, InsertCalls, BucketWrites, Plans, PlanCalls uint64
	// ExpiredHits are hits not written to a level whose bucket was past
	// its retention (minute buckets of logs older than minute_retention).
	ExpiredHits uint64
	// Elapsed is the replay's wall time.
	Elapsed time.Duration
	// Stopped is true when the replay was stopped before its end: what it
	// counted is kept, and running it again resumes.
	Stopped bool
	// Unacknowledged is true when every file was counted but the pipeline
	// stopped reading (the daemon reloaded or stopped) before MongoDB
	// acknowledged all of it: the counts are in the buffer, and the next
	// pipeline on it (the reloaded daemon, the next start) writes them.
	// Running the replay again counts nothing more.
	Unacknowledged bool
}

// replayFile is a file being replayed.
type replayFile struct {
	File
	source string // the aggregator's source name for it
	head   []byte
	// held is the furthest stored checkpoint of the same stream
	// (stream.Same), when live: a copy of a followed file, replayed
	// with the daemon stopped, starts no lower and leaves an unterminated
	// last line to the tailer.
	held   stream.Checkpoint
	live   bool
	damage error // a DamagedError, with Status StatusDamaged
	// waiting says who holds its stream's claim while it waits for it
	// (guarded by Service.replayMu).
	waiting string
	size    int64 // on disk
	counts  archive.Counters
	// stream is the ledger stream its chunks mark; watch the buffer's
	// ledger entries it waits to be acknowledged (guarded by
	// Service.replayMu).
	stream uint64
	watch  []ackWatch
	// before are the files of its group read before it (groupCopies);
	// last is where the last chunk sent of it ends, with its tail check.
	before []*replayFile
	last   tailer.Position
}

// Replay reads req.Files into the running pipeline, each from where the
// ledger (this buffer's, and the database's, which other hosts and lost
// state dirs share) says it is counted, and returns once every count it
// made is acknowledged by MongoDB, or ctx ends, or the pipeline stops
// reading (then, every file read and committed, the summary says so:
// Unacknowledged, not Stopped). report, when not nil, gets
// the progress every 200 ms. The pipeline must be running.
//
// Before reading anything it checks every file: a file this logtally
// follows, or a copy of one (the same first bytes as a checkpoint it holds:
// stream.Same), is refused while the tailers run, since the tailer
// counts it; with no tailers (Config.NoTail) it starts no lower than that
// checkpoint. A file no source matches needs Site and Format. A damaged
// file (archive.DamagedError) does not stop the others: its whole lines
// before the damage are counted, and the error names it.
func (s *Service) Replay(ctx context.Context, req Request, report func(Progress)) (*Summary, error) {
	if !s.replaying.TryLock() {
		return nil, ErrRunning
	}
	defer s.replaying.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	clk := s.cfg.Clock
	started := clk.Now()
	files, sources, err := s.prepareReplay(req)
	if err != nil {
		return nil, err
	}
	feed, err := s.p.OpenReplay(sources)
	if err != nil {
		return nil, err
	}
	reading := feed.Reading()
	defer context.AfterFunc(reading, cancel)() // the pipeline stops reading
	t0 := feed.Totals()
	log := s.log.With("replay", len(files))
	log.Info("replay started", "files", len(files))

	var total int64
	for _, f := range files {
		total += f.size
	}
	progress := func(phase string) Progress {
		pr := Progress{Started: started, TotalBytes: total, FilesTotal: len(files), Phase: phase}
		for _, f := range files {
			read := f.counts.Read.Load()
			pr.Lines += f.counts.Lines.Load()
			s.replayMu.Lock()
			st, waiting := f.Status, f.waiting
			s.replayMu.Unlock()
			if waiting != "" && pr.Waiting == "" {
				pr.Waiting = waiting
			}
			switch st {
			case "":
				if read > 0 && pr.Current == "" {
					pr.Current = f.Path
				}
			default:
				pr.FilesDone++
				read = f.size
			}
			pr.ReadBytes += min(read, f.size)
		}
		return pr
	}
	stopReport := make(chan struct{})
	reported := make(chan struct{})
	phase := PhaseReading
	var phaseMu sync.Mutex
	go func() {
		defer close(reported)
		for {
			select {
			case <-stopReport:
				return
			case <-clk.After(replayPoll):
				phaseMu.Lock()
				ph := phase
				phaseMu.Unlock()
				if report != nil {
					report(progress(ph))
				}
			}
		}
	}()
	defer func() { close(stopReport); <-reported }()

	// Each file's stream is claimed in MongoDB's ledger before it is read
	// and until its counts are acknowledged: a replay of the same files on
	// another host or state dir waits, then starts where this one left
	// them.
	claims := s.newReplayClaims()
	renewCtx, stopRenew := context.WithCancel(context.Background())
	renewed := make(chan struct{})
	go func() { defer close(renewed); claims.run(renewCtx) }()
	defer func() { stopRenew(); <-renewed }()

	readErr := s.readReplay(ctx, req.Jobs, files, claims, feed)
	stopped := errors.Is(readErr, context.Canceled) || errors.Is(readErr, context.DeadlineExceeded)
	if readErr != nil && !stopped {
		return nil, readErr
	}
	phaseMu.Lock()
	phase = PhaseFlushing
	phaseMu.Unlock()
	var waitErr error
	unacked := false
	if !stopped {
		waitErr = s.waitAcked(ctx, files, feed)
		stopped = waitErr != nil && ctx.Err() != nil
		if stopped && reading.Err() != nil {
			// The pipeline stopped reading (a reload, a stop) after every
			// file was read: if the aggregator's final commit took every
			// chunk, every file is counted, in the buffer, which the next
			// pipeline writes to MongoDB.
			counted, err := s.countedAtStop(files, feed)
			if err != nil {
				log.Warn("cannot tell whether the replay's files are counted: reported stopped", "err", err)
			}
			if counted {
				stopped, unacked, waitErr = false, true, nil
			}
		}
	}
	if !stopped && waitErr == nil && !unacked {
		claims.releaseAll()
	} // else counts may not be acknowledged yet: the claims expire by themselves

	t1 := feed.Totals()
	sum := &Summary{
		Updates: t1.Updates - t0.Updates, Inserts: t1.Inserts - t0.Inserts,
		Finds: t1.Finds - t0.Finds, BulkWrites: t1.BulkWrites - t0.BulkWrites,
		InsertCalls: t1.InsertCalls - t0.InsertCalls, BucketWrites: t1.BucketWrites - t0.BucketWrites,
		Plans: t1.Plans - t0.Plans, PlanCalls: t1.PlanCalls - t0.PlanCalls, ExpiredHits: t1.ExpiredHits - t0.ExpiredHits,
		Elapsed: clk.Now().Sub(started), Stopped: stopped, Unacknowledged: unacked, Outcomes: map[string]uint64{},
		ParsedAhead: t1.ParsedAhead - t0.ParsedAhead,
		Lines:       t1.Lines - t0.Lines, Hits: t1.Hits - t0.Hits,
	}
	if s.cfg.NoTail { // nothing else is parsed: the outcomes are the replay's
		for o, v := range t1.Outcomes {
			if n := v - t0.Outcomes[o]; n > 0 {
				sum.Outcomes[o] = n
			}
		}
	}
	var damaged []error
	s.replayMu.Lock()
	for _, f := range files {
		if f.Status == "" {
			f.Status = StatusStopped
		}
		if f.damage != nil {
			damaged = append(damaged, f.damage)
		}
		sum.Files = append(sum.Files, f.File)
	}
	s.replayMu.Unlock()
	slices.SortStableFunc(sum.Files, func(a, b File) int { return a.First.Compare(b.First) })
	if report != nil {
		report(progress(PhaseDone))
	}
	log.Info("replay finished", "lines", sum.Lines, "hits", sum.Hits, "stopped", stopped, "unacknowledged", unacked, "damaged", len(damaged), "took", sum.Elapsed)
	if waitErr != nil && !stopped {
		return sum, waitErr
	}
	if len(damaged) > 0 {
		return sum, fmt.Errorf("%w; their whole lines before the damage are counted: replaying the intact files counts the rest", errors.Join(damaged...))
	}
	return sum, nil
}
