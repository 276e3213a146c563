package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/dryrun"
	"github.com/logtally/logtally/parser"
)

// DefaultMaxSums is how many (site, page, second) sums a verification
// holds at most before it reads the files again for the days it could
// not hold: about 300 bytes each at the peak, with the buckets made from
// them (a heap of some 300 MB; BenchmarkVerify's million sums).
const DefaultMaxSums = 1 << 20

// expiryMargin is added to the clock's time when deciding which buckets
// are past their retention: a bucket that expires within it may be
// deleted while it is read, and is not judged.
const expiryMargin = time.Hour

// Options are what a verification reads and how it judges.
type Options struct {
	// Parser parses every file (the source's parser, filters, page
	// rules, max_sites and max_pages_per_minute); its Since and Until
	// must be zero (From and To bound the range instead).
	Parser parser.Config
	// MaxLine is max_line_bytes; Jobs the dry run's goroutines (0: every
	// core).
	MaxLine, Jobs int
	// From and To bound the range judged [From, To); zero: the files'
	// first hit, and the second after their last.
	From, To time.Time
	// AllHosts says the files are every host's logs: MongoDB holding more
	// than the files is then a difference, not other hosts' hits.
	AllHosts bool
	// DB, Collections and Retention are the buckets' database, their
	// collections and retention ([buckets]).
	DB          *mongo.Database
	Collections bucket.Collections
	Retention   bucket.Retention
	// Clock tells which buckets are past their retention.
	Clock clock.Clock
	// MaxSums bounds the sums held (0: DefaultMaxSums); MaxDiffs the
	// differences listed (0: DefaultMaxDiffs).
	MaxSums, MaxDiffs int
	// Log gets the dry run's messages (malformed lines, by file, line
	// number and reason); nil discards them.
	Log io.Writer
}

// ErrFiles wraps the errors of the files themselves (one missing,
// unreadable, damaged or holding no hit): bad input, where a difference
// is not.
var ErrFiles = errors.New("files")

// Verify reads files as the daemon would count them (replay's dry run,
// in parallel) and compares their sums with the buckets in MongoDB over
// the range: every counter and measure of every minute, daily and monthly
// bucket and site day (see the package doc). Its error is about reading
// (ErrFiles, MongoDB); differences are in the Report.
func Verify(ctx context.Context, files []string, opts Options) (*Report, error) {
	if opts.MaxSums <= 0 {
		opts.MaxSums = DefaultMaxSums
	}
	if opts.MaxDiffs <= 0 {
		opts.MaxDiffs = DefaultMaxDiffs
	}
	if opts.Jobs <= 0 {
		opts.Jobs = runtime.GOMAXPROCS(0)
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if !opts.Parser.Since.IsZero() || !opts.Parser.Until.IsZero() {
		return nil, errors.New("verify: the parser has a window: give From and To instead")
	}
	rep := &Report{AllHosts: opts.AllHosts, Files: len(files)}
	r := all
	if !opts.From.IsZero() {
		r.from = opts.From.Unix()
	}
	if !opts.To.IsZero() {
		r.to = opts.To.Unix()
	}
	rep.Dims.On = opts.Parser.Dims != nil
	v := &verifier{opts: opts, now: opts.Clock.Now().Add(expiryMargin), rep: rep, cut: map[siteDay]struct{}{}}
	var (
		spans []fileSpan
		sites []string
		reads = files
		every bool // a bound folded hits: every pass reads every file, in order
		j     *judge
	)
	for lo := r.from; ; {
		p := newPass(rep.Passes == 0, r, lo)
		rep.Passes++
		shards, st, err := v.read(p, reads)
		if err != nil {
			return rep, err
		}
		if p.first {
			rep.Lines, rep.Malformed, rep.Filtered, rep.TooLong = st.Lines+st.TooLong, st.Malformed, st.Filtered, st.TooLong
			every = st.SitesFolded > 0 || st.Other > 0
			spans = make([]fileSpan, len(files))
			siteSet := map[string]struct{}{}
			for _, s := range shards {
				for i, sp := range s.spans {
					if sp.any {
						spans[i].add(sp.min)
						spans[i].add(sp.max)
					}
				}
				maps.Copy(siteSet, s.sites)
				maps.Copy(v.cut, s.cut)
				rep.Hits += s.inRange
				rep.Outside += s.outside
			}
			sites = slices.Sorted(maps.Keys(siteSet))
			if len(sites) == 0 {
				return rep, fmt.Errorf("%w: no hits in %d files (%d lines)", ErrFiles, len(files), rep.Lines)
			}
			if r.from == all.from || r.to == all.to {
				first, last := spans[0], spans[0]
				for _, sp := range spans {
					if sp.any && (!first.any || sp.min < first.min) {
						first = sp
					}
					if sp.any && (!last.any || sp.max > last.max) {
						last = sp
					}
				}
				if r.from == all.from {
					r.from = first.min
				}
				if r.to == all.to {
					r.to = last.max + 1
				}
			}
			if r.from >= r.to {
				return rep, fmt.Errorf("%w: no hits in the range", ErrFiles)
			}
			rep.From, rep.To = time.Unix(r.from, 0).UTC(), time.Unix(r.to, 0).UTC()
			j = newJudge(r, opts.AllHosts, opts.MaxDiffs, rep)
		}
		hi := min(p.hi.Load(), r.to)
		w := span{max(lo, r.from), hi}
		j.w = w
		if err := v.compare(ctx, j, sites, window(shards, w), windowDims(shards, w)); err != nil {
			return rep, err
		}
		if hi >= r.to {
			break
		}
		lo = hi
		if !every {
			reads = reads[:0:0]
			for i, sp := range spans {
				if sp.any && sp.max >= lo && sp.min < r.to {
					reads = append(reads, files[i])
				}
			}
		}
	}
	j.finish()
	return rep, nil
}

// verifier is one verification's state.
type verifier struct {
	opts Options
	now  time.Time // for retention, with expiryMargin
	rep  *Report
	cut  map[siteDay]struct{} // site days with hits outside the range: their counts by dimension are not judged
}

// firstDay returns the earliest of days.
func (v *verifier) firstDay(days map[int64]int) int64 {
	first := int64(math.MaxInt64)
	for d := range days {
		first = min(first, d)
	}
	return first
}

// read reads files in a dry run whose sinks keep p's window, and returns
// them and the dry run's Stats.
func (v *verifier) read(p *pass, files []string) ([]*shard, aggregate.Stats, error) {
	budget := v.opts.MaxSums
	log := v.opts.Log
	if !p.first {
		log = io.Discard // said once
	}
	d, err := dryrun.NewParallel(v.opts.Parser, v.opts.MaxLine, v.opts.Jobs, log)
	if err != nil {
		return nil, aggregate.Stats{}, fmt.Errorf("%w: %w", ErrFiles, err)
	}
	d.SumsTo(func() dryrun.Sink { return p.newShard() })
	p.budget = max(budget/max(len(d.Sinks()), 1), 1) // per worker
	if err := d.ReadFiles(files); err != nil {
		return nil, aggregate.Stats{}, fmt.Errorf("%w: %w", ErrFiles, err)
	}
	st, err := d.Drain()
	if err != nil {
		return nil, aggregate.Stats{}, err
	}
	var shards []*shard
	days := map[int64]int{}
	for _, s := range d.Sinks() {
		sh := s.(*shard)
		if sh.err != nil {
			return nil, aggregate.Stats{}, sh.err
		}
		shards = append(shards, sh)
		for d, n := range sh.days() {
			days[d] += n
		}
	}
	// The shards shed their days by their own share of the budget, each
	// seeing its own days: the window is cut again over all of them, so
	// that it holds at most MaxSums sums (or its first day) however the
	// files were shared between the workers.
	if hi := cut(days, v.firstDay(days), v.opts.MaxSums); hi < p.hi.Load() {
		p.hi.Store(hi)
	}
	return shards, st, nil
}
