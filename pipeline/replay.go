package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/replay"
	"github.com/logtally/logtally/tailer"
)

// ErrReplayRunning is returned by Replay while another replay runs in the
// same Pipeline.
var ErrReplayRunning = errors.New("another replay is running in this logtally")

// replayPoll is how often Replay reports progress and looks at the ledger
// while it waits for its counts to be acknowledged.
const replayPoll = 200 * time.Millisecond

// ReplayRequest asks a running Pipeline to count archived log files.
type ReplayRequest struct {
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
	ReplayCounted = "counted"         // read from its start
	ReplayResumed = "resumed"         // read from where the ledger said it was counted
	ReplaySkipped = "already counted" // nothing new in it
	ReplayEmpty   = "empty"
	ReplayStopped = "stopped" // the replay was stopped while reading it
)

// ReplayFile is what a replay did with one file.
type ReplayFile struct {
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

// ReplaySummary is a replay's outcome.
type ReplaySummary struct {
	// Files, oldest first by their first hit.
	Files []ReplayFile `json:"files"`
	// Lines and Hits are the replay's totals; Malformed and Filtered its
	// lines not counted.
	Lines, Hits uint64
	// Outcomes counts lines per parser outcome name (malformed and
	// filtered reasons).
	Outcomes map[string]uint64 `json:"outcomes,omitempty"`
	// Database operations during the replay (with the daemon's own
	// traffic when it runs inside one): bucket updates, zero-filled
	// inserts, finds, bulk writes.
	Updates, Inserts, Finds, BulkWrites uint64
	// ExpiredHits are hits not written to a level whose bucket was past
	// its retention (minute buckets of logs older than minute_retention).
	ExpiredHits uint64
	// Elapsed is the replay's wall time.
	Elapsed time.Duration
	// Stopped is true when the replay was stopped before its end: what it
	// counted is kept, and running it again resumes.
	Stopped bool
}

// replayFile is a file being replayed.
type replayFile struct {
	ReplayFile
	source string // the aggregator's source name for it
	head   []byte
	size   int64 // on disk
	counts replay.Counters
}

// Replay reads req.Files into the running pipeline, each from where the
// ledger (this buffer's, and the database's, which other hosts and lost
// state dirs share) says it is counted, and returns once every count it
// made is acknowledged by MongoDB, or ctx ends. report, when not nil, gets
// the progress every 200 ms. Run must be running.
//
// Before reading anything it checks every file: a file this logtally
// follows (or holds a checkpoint for) is refused, since the tailer counts
// it; a file no source matches needs Site and Format.
func (p *Pipeline) Replay(ctx context.Context, req ReplayRequest, report func(replay.Progress)) (*ReplaySummary, error) {
	if !p.replaying.TryLock() {
		return nil, ErrReplayRunning
	}
	defer p.replaying.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(p.readCtx, cancel)() // Run stops reading
	clk := p.cfg.Clock
	started := clk.Now()
	files, names, err := p.prepareReplay(req)
	if err != nil {
		return nil, err
	}
	agg0, fl0 := p.agg.Stats(), p.flush.Stats()
	log := p.log.With("replay", len(files))
	log.Info("replay started", "files", len(files))

	var total int64
	for _, f := range files {
		total += f.size
	}
	progress := func(phase string) replay.Progress {
		pr := replay.Progress{Started: started, TotalBytes: total, FilesTotal: len(files), Phase: phase}
		for _, f := range files {
			read := f.counts.Read.Load()
			pr.Lines += f.counts.Lines.Load()
			p.replayMu.Lock()
			st := f.Status
			p.replayMu.Unlock()
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
	phase := replay.PhaseReading
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

	readErr := p.readReplay(ctx, req.Jobs, files)
	stopped := errors.Is(readErr, context.Canceled) || errors.Is(readErr, context.DeadlineExceeded)
	if readErr != nil && !stopped {
		return nil, readErr
	}
	phaseMu.Lock()
	phase = replay.PhaseFlushing
	phaseMu.Unlock()
	var waitErr error
	if !stopped {
		waitErr = p.waitAcked(ctx, files)
		stopped = waitErr != nil && ctx.Err() != nil
	}
	agg1, fl1 := p.agg.Stats(), p.flush.Stats()
	sum := &ReplaySummary{
		Updates: fl1.Updates - fl0.Updates, Inserts: fl1.Inserts - fl0.Inserts,
		Finds: fl1.Finds - fl0.Finds, BulkWrites: fl1.BulkWrites - fl0.BulkWrites,
		ExpiredHits: fl1.ExpiredHits - fl0.ExpiredHits,
		Elapsed:     clk.Now().Sub(started), Stopped: stopped, Outcomes: map[string]uint64{},
	}
	for _, n := range names {
		sum.Lines += agg1.BySource[n].Lines - agg0.BySource[n].Lines
		sum.Hits += agg1.BySource[n].Hits - agg0.BySource[n].Hits
	}
	if p.cfg.NoTail { // nothing else is parsed: the outcomes are the replay's
		for o := range agg1.Outcomes {
			if n := agg1.Outcomes[o] - agg0.Outcomes[o]; n > 0 && parser.Outcome(o) != parser.OK {
				sum.Outcomes[parser.Outcome(o).String()] = n
			}
		}
	}
	p.replayMu.Lock()
	for _, f := range files {
		if f.Status == "" {
			f.Status = ReplayStopped
		}
		sum.Files = append(sum.Files, f.ReplayFile)
	}
	p.replayMu.Unlock()
	slices.SortStableFunc(sum.Files, func(a, b ReplayFile) int { return a.First.Compare(b.First) })
	if report != nil {
		report(progress(replay.PhaseDone))
	}
	log.Info("replay finished", "lines", sum.Lines, "hits", sum.Hits, "stopped", stopped, "took", sum.Elapsed)
	if waitErr != nil && !stopped {
		return sum, waitErr
	}
	return sum, nil
}

// prepareReplay checks every file and makes the parsers, before anything
// is read. It returns the files and the aggregator source names added.
func (p *Pipeline) prepareReplay(req ReplayRequest) ([]*replayFile, []string, error) {
	if len(req.Files) == 0 {
		return nil, nil, errors.New("no files to replay")
	}
	followed := map[tailer.FileID]string{}
	for _, t := range p.tailers {
		for _, f := range t.Followed() {
			followed[f.ID] = f.Path
		}
	}
	stored, err := p.buf.Checkpoints()
	if err != nil {
		return nil, nil, err
	}
	held := map[tailer.FileID]tailer.Checkpoint{} // by the stored checkpoints
	for _, v := range stored {
		var cp tailer.Checkpoint
		if cp.UnmarshalBinary(v) == nil {
			held[cp.File] = cp
		}
	}
	var errs []error
	var files []*replayFile
	configs := map[string]parser.Config{} // aggregator source name -> parser config
	seen := map[string]bool{}
	for _, path := range req.Files {
		if seen[path] {
			continue
		}
		seen[path] = true
		fi, err := os.Stat(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !fi.Mode().IsRegular() {
			errs = append(errs, fmt.Errorf("%s: not a regular file", path))
			continue
		}
		if id, ok := tailer.IDOf(fi); ok {
			at := followed[id]
			if cp, ok := held[id]; ok && at == "" {
				// A stored checkpoint names it unless the inode was
				// reused: then the first bytes differ.
				if same, _ := tailer.HasFingerprint(path, cp.FPLen, cp.FPSum); same {
					at = cp.Path
				}
			}
			if at != "" {
				errs = append(errs, fmt.Errorf("%s: this logtally follows it (as %s): it is counted as it is written, not replayed", path, at))
				continue
			}
		}
		name, pc, err := p.replayConfig(req, path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, ok := configs[name]; !ok {
			configs[name] = pc
		}
		head, kind, err := replay.Head(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f := &replayFile{ReplayFile: ReplayFile{Path: path, Compression: string(kind)}, source: name, head: head, size: fi.Size()}
		if len(head) == 0 {
			f.Status = ReplayEmpty
		}
		files = append(files, f)
	}
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("nothing was read: %w", errors.Join(errs...))
	}
	var names []string
	for name, pc := range configs {
		pr, err := parser.New(pc)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", strings.TrimPrefix(name, "replay:"), err)
		}
		if err := p.agg.AddSource(name, pr, parser.NewPageLimiter(pc.Page.MaxPagesPerMinute)); err != nil {
			return nil, nil, err
		}
		names = append(names, name)
		// First hit times, with a parser of its own (the aggregator's is
		// its goroutine's).
		first, _ := parser.New(pc)
		for _, f := range files {
			if f.source == name {
				f.First = firstHit(first, f.head)
			}
		}
	}
	return files, names, nil
}

// replayConfig returns the aggregator source name and parser settings of a
// replayed file.
func (p *Pipeline) replayConfig(req ReplayRequest, path string) (string, parser.Config, error) {
	var src *Source
	if req.Source != "" {
		for i := range p.cfg.Sources {
			if p.cfg.Sources[i].Name == req.Source {
				src = &p.cfg.Sources[i]
			}
		}
		if src == nil {
			return "", parser.Config{}, fmt.Errorf("no source named %q in the config", req.Source)
		}
	} else {
		var err error
		if src, err = p.sourceOf(path); err != nil {
			return "", parser.Config{}, err
		}
	}
	var pc parser.Config
	name := "replay:"
	if src != nil {
		pc, name = src.Parser, name+src.Name
	} else if req.Site == "" || req.Format == "" {
		return "", pc, fmt.Errorf("%s: no source's globs or rotated names match it: give -site and -format (or -source NAME)", path)
	}
	if req.Site != "" {
		pc.Site, name = req.Site, name+"@"+req.Site
	}
	if req.Format != "" {
		pc.Format, name = req.Format, name+"/"+req.Format
	}
	if req.LogFormat != "" {
		pc.LogFormat = req.LogFormat
	}
	pc.Since, pc.Until = req.Since, req.Until
	return name, pc, nil
}

// sourceOf returns the source whose globs match path, or the rotated names
// of their matches (path.* and path-*, compressed ones too); else the one
// source whose globs match it by base name alone (archives kept in another
// directory). Several sources matching by base name is an error.
func (p *Pipeline) sourceOf(path string) (*Source, error) {
	var byName []*Source
	for i, s := range p.cfg.Sources {
		for _, g := range s.Paths {
			for _, suffix := range []string{"", ".*", "-*"} {
				if ok, _ := filepath.Match(g+suffix, path); ok {
					return &p.cfg.Sources[i], nil
				}
				if ok, _ := filepath.Match(filepath.Base(g)+suffix, filepath.Base(path)); ok {
					if !slices.Contains(byName, &p.cfg.Sources[i]) {
						byName = append(byName, &p.cfg.Sources[i])
					}
				}
			}
		}
	}
	switch len(byName) {
	case 0:
		return nil, nil
	case 1:
		return byName[0], nil
	}
	names := make([]string, len(byName))
	for i, s := range byName {
		names[i] = s.Name
	}
	return nil, fmt.Errorf("%s: its name matches the globs of sources %s: choose one with -source NAME", path, strings.Join(names, ", "))
}

// firstHit returns the time of the first line in head that parses, or
// zero.
func firstHit(p *parser.Parser, head []byte) time.Time {
	var h parser.Hit
	for line := range bytes.SplitSeq(head, []byte("\n")) {
		if p.Parse(line, &h) == parser.OK {
			return time.Unix(h.Time, 0).UTC()
		}
	}
	return time.Time{}
}

// readReplay reads the files with jobs workers. Files that may be copies
// of one another (one's first bytes begin the other's) are read one after
// the other in one worker, each from where the one before left the
// ledger, so two copies are never counted at once.
func (p *Pipeline) readReplay(ctx context.Context, jobs int, files []*replayFile) error {
	groups := groupCopies(files)
	jobs = min(cmp.Or(jobs, runtime.GOMAXPROCS(0)), len(groups))
	work := make(chan []*replayFile)
	errc := make(chan error, jobs)
	var wg sync.WaitGroup
	for range jobs {
		wg.Go(func() {
			for g := range work {
				for _, f := range g {
					if err := p.replayOne(ctx, f); err != nil {
						errc <- err
						return
					}
				}
			}
		})
	}
	var err error
feed:
	for _, g := range groups {
		select {
		case work <- g:
		case err = <-errc:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(errc)
	for e := range errc {
		err = cmp.Or(err, e)
	}
	return err
}

// groupCopies groups files whose heads are prefixes of one another.
func groupCopies(files []*replayFile) [][]*replayFile {
	var groups [][]*replayFile
next:
	for _, f := range files {
		if len(f.head) == 0 {
			continue
		}
		for i, g := range groups {
			for _, o := range g {
				if bytes.HasPrefix(f.head, o.head) || bytes.HasPrefix(o.head, f.head) {
					groups[i] = append(g, f)
					continue next
				}
			}
		}
		groups = append(groups, []*replayFile{f})
	}
	return groups
}

// replayOne reads one file from where it is counted.
func (p *Pipeline) replayOne(ctx context.Context, f *replayFile) error {
	from, err := p.countedUpTo(ctx, f.head)
	if err != nil {
		return err
	}
	end, err := replay.Stream(ctx, f.Path, f.source, f.head, from, p.maxLine(), p.chunks, &f.counts)
	p.replayMu.Lock()
	defer p.replayMu.Unlock()
	f.From, f.End, f.Lines = from, end, f.counts.Lines.Load()
	if err != nil {
		return err
	}
	switch {
	case end <= from:
		f.Status = ReplaySkipped
	case from > 0:
		f.Status = ReplayResumed
	default:
		f.Status = ReplayCounted
	}
	return nil
}

// maxLine is the longest line counted.
func (p *Pipeline) maxLine() int {
	for _, s := range p.cfg.Sources {
		if s.Tailer.MaxLineBytes > 0 {
			return s.Tailer.MaxLineBytes
		}
	}
	return tailer.DefaultMaxLineBytes
}

// countedLocally returns how far this buffer's ledger says a stream
// beginning with head is counted: the tailers ask it about a file they
// find without a checkpoint. A ledger that cannot be read says 0 (and the
// file is read from its start), logged.
func (p *Pipeline) countedLocally(head []byte) int64 {
	got, err := p.buf.Ledger(buffer.LedgerCandidates(head, tailer.FingerprintSize))
	if err != nil {
		p.log.Error("cannot read the ledger: a file found without a checkpoint is read from its start", "err", err)
		return 0
	}
	var best int64
	for _, e := range got {
		best = max(best, e.Offset)
	}
	return best
}

// countedUpTo returns how far a stream beginning with head is counted:
// the most of what this buffer's ledger holds (committed, maybe not yet
// acknowledged) and what the database's holds (acknowledged, by any host
// or an earlier state dir). It waits while MongoDB cannot be reached.
func (p *Pipeline) countedUpTo(ctx context.Context, head []byte) (int64, error) {
	keys := buffer.LedgerCandidates(head, tailer.FingerprintSize)
	local, err := p.buf.Ledger(keys)
	if err != nil {
		return 0, err
	}
	var best int64
	for _, e := range local {
		best = max(best, e.Offset)
	}
	for attempt := 0; ; attempt++ {
		remote, err := p.flush.ReadLedger(ctx, keys)
		if err == nil {
			for _, off := range remote {
				best = max(best, off)
			}
			return best, nil
		}
		if attempt == 0 {
			p.log.Warn("cannot read MongoDB's ledger: waiting for it before replaying", "err", err)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-p.cfg.Clock.After(min(time.Second<<min(attempt, 5), 30*time.Second)):
		}
	}
}

// waitAcked waits until the ledger says every file is counted as far as
// this replay read it, and everything this buffer's ledger holds of it
// (what an earlier run, stopped or killed, committed too) is acknowledged
// by MongoDB.
func (p *Pipeline) waitAcked(ctx context.Context, files []*replayFile) error {
	for {
		done := true
		for _, f := range files {
			if len(f.head) == 0 {
				continue
			}
			got, err := p.buf.Ledger(buffer.LedgerCandidates(f.head, tailer.FingerprintSize))
			if err != nil {
				return err
			}
			var best buffer.LedgerEntry
			for _, e := range got {
				if e.Offset > best.Offset {
					best = e
				}
			}
			read := int64(0)
			if f.End > f.From {
				read = f.End
			}
			if best.Offset < read || best.Acked < best.Offset {
				done = false
				break
			}
		}
		if done {
			return nil
		}
		p.flush.Kick() // what is left is ours: no need to wait for the interval
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.cfg.Clock.After(replayPoll):
		}
	}
}
