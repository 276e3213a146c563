package recovery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/progress"
	"github.com/logtally/logtally/tailer"
)

// rebuildReadSize is the read size of the re-read of a batch in flight.
const rebuildReadSize = 256 << 10

// Stats says what a rebuild did, for its log line and tests.
type Stats struct {
	Batch         string // the batch re-applied, "" when none was in flight
	Files         int    // checkpoints restored
	Remapped      int    // of them, found under another identity (a copy, a rebuilt host)
	Missing       int    // checkpoints whose file was not found
	ReadBytes     int64  // bytes re-read to rebuild the batch in flight
	LostBytes     int64  // bytes of the batch in flight that could not be re-read
	Unrecorded    int    // files finished within the batch that the record could not list (progress.MaxFinished)
	Archives      int    // replayed archives whose part of the batch in flight was read again
	LostArchives  int    // of them, those that could not be (gone, changed)
	Hits          uint64 // hits of the rebuilt batch
	CoarseHits    uint64 // hits re-read for the daily and monthly buckets only (flush.coarse_interval)
	WaitedOnLease bool
}

// loadRecord reads the instance's record, waiting while MongoDB cannot be
// reached: without it, a new buffer could only guess where to start.
func loadRecord(ctx context.Context, store *progress.Store, clk clock.Clock, log *slog.Logger) (*progress.Record, error) {
	backoff := time.Second
	for {
		rec, err := store.Load(ctx)
		if err == nil {
			return rec, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		log.Warn("no buffer file: waiting for MongoDB to read this instance's progress record; "+
			"reading starts once it is known whether and where this instance counted before", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-clk.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// Rebuild makes a new buffer file at cfg.BufferPath from the instance's
// progress record, when there is one: the checkpoints where the
// acknowledged counts end, and, when a batch was in flight, that batch
// rebuilt by re-reading its lines and sealed under its own id, so that
// writing it again counts only what the buckets lack. It takes the lease
// first, waiting for a live one to expire. It returns false when there is
// no record (a genuine first start): the caller creates the buffer as
// usual.
func Rebuild(ctx context.Context, cfg Config, store *progress.Store, log *slog.Logger) (bool, Stats, error) {
	var st Stats
	rec, err := loadRecord(ctx, store, cfg.Clock, log)
	if err != nil || rec == nil {
		return false, st, err
	}
	st.WaitedOnLease = rec.Lease.Until.After(cfg.Clock.Now())
	// Not own: a daemon that lost its state dir while running still
	// holds the lease with the same buffer id; wait for it to lapse.
	if _, err := store.Acquire(ctx, rec.BufferID, false, acquirePoll); err != nil {
		return false, st, err
	}
	// The record cannot change once the lease is ours: read it again, as
	// the previous holder may have written until its lease lapsed.
	if rec, err = store.Load(ctx); err != nil || rec == nil {
		return false, st, cmp.Or(err, errors.New("progress record vanished"))
	}
	log.Warn("no buffer file: rebuilding the state from this instance's progress record in MongoDB",
		"buffer_id", rec.BufferID, "batch", rec.Batch, "acknowledged", rec.Acked, "sealed_at", rec.SealedAt)

	globs := map[string]tailer.SourceFiles{}
	for _, s := range cfg.Sources {
		globs[s.Name] = s.Files
	}
	to, err := decodeRecord(rec.To)
	if err != nil {
		return false, st, err
	}
	from, err := decodeRecord(rec.From)
	if err != nil {
		return false, st, err
	}
	coarseAt, err := decodeRecord(rec.Coarse)
	if err != nil {
		return false, st, err
	}
	finished, err := decodeFinished(rec.Finished)
	if err != nil {
		return false, st, err
	}
	coarseFinished, err := decodeFinished(rec.CoarseFinished)
	if err != nil {
		return false, st, err
	}
	// Find every file again; on a rebuilt host its identity may differ.
	loc := &locator{globs: globs, clock: cfg.Clock, found: map[locKey]locResult{}}

	var counts map[string]uint64
	var marks []buffer.Mark
	inFlight := rec.Batch != "" && !rec.Acked
	if inFlight {
		st.Unrecorded += rec.FinishedLeftOut + rec.ArchivesLeftOut
		counts, marks, err = reread(ctx, cfg, window{to: to, finished: finished, known: rec.FinishedKnown, from: from, archives: rec.Archives}, loc, &st, log)
		if err != nil {
			return false, st, err
		}
		st.Batch = rec.Batch
	}
	// With flush.coarse_interval, the daily and monthly buckets end
	// earlier than the minute ones: at the last acknowledged full batch.
	// The counts after it that the minute buckets acknowledged wait again
	// in the coarse counts (a full batch in flight takes them, as its seal
	// did). A full batch acknowledged is where both end.
	var co buffer.Coarse
	if rec.CoarseBatch != "" && (inFlight || rec.MinuteOnly) {
		ackedAt, ackedBatch := to, rec.Batch
		ackedFinished, ackedKnown := coarseFinished, rec.CoarseFinishedKnown
		ackedArchives := rec.CoarseArchives
		if inFlight {
			ackedAt, ackedBatch = from, rec.FromBatch
		} else {
			// The minute-only batch acknowledged: its own finished files
			// and archives are part of the coarse window too.
			ackedFinished = append(ackedFinished, finished...)
			ackedKnown = ackedKnown && rec.FinishedKnown
			ackedArchives = append(slices.Clone(ackedArchives), rec.Archives...)
		}
		if rec.CoarseBatch != ackedBatch {
			before := st.Hits
			st.Unrecorded += rec.CoarseFinishedLeftOut + rec.CoarseArchivesLeftOut
			var cmarks []buffer.Mark
			co.Counts, cmarks, err = reread(ctx, cfg, window{to: ackedAt, finished: ackedFinished, known: ackedKnown, from: coarseAt, archives: ackedArchives}, loc, &st, log)
			if err != nil {
				return false, st, err
			}
			marks = append(marks, cmarks...)
			st.CoarseHits, st.Hits = st.Hits-before, before
		}
		enc, _, _, err := encodeLocated(coarseAt, loc, true)
		if err != nil {
			return false, st, err
		}
		co.Snapshot = buffer.Snapshot{Batch: rec.CoarseBatch, SealedAt: rec.CoarseSealedAt, Checkpoints: enc}
		if rec.CoarseFinishedKnown {
			// The minute-only batches acknowledged since it finished these;
			// a minute-only batch in flight adds its own once acknowledged.
			co.Snapshot.Finished = map[string][]byte{}
			for _, c := range rec.CoarseFinished {
				co.Snapshot.Finished[c.Key] = c.Value
			}
			if !inFlight && rec.MinuteOnly {
				for _, c := range rec.Finished {
					co.Snapshot.Finished[c.Key] = c.Value
				}
			}
		}
		// Likewise the archives' parts waiting for a full batch.
		for _, a := range ackedArchives {
			co.Snapshot.Archives = append(co.Snapshot.Archives, buffer.ArchiveRange{Source: a.Source, Path: a.Path,
				FPLen: a.FPLen, FPSum: uint64(a.FPSum), From: a.From, To: a.To})
		}
		co.MinuteOnly = inFlight && rec.MinuteOnly
	}
	tmp := cfg.BufferPath + ".rebuild"
	os.Remove(tmp)
	if err := os.MkdirAll(filepath.Dir(tmp), 0o750); err != nil {
		return false, st, fmt.Errorf("rebuild buffer: %w", err)
	}
	bopts := cfg.Buffer
	bopts.Logger, bopts.InstanceID = log, rec.BufferID
	b, err := buffer.Open(tmp, bopts)
	if err != nil {
		return false, st, fmt.Errorf("rebuild buffer: %w", err)
	}
	toEnc, n, missing, err := encodeLocated(to, loc, false)
	if err != nil {
		b.Close()
		return false, st, err
	}
	st.Files, st.Remapped, st.Missing = len(to), n, missing
	fromEnc, _, _, err := encodeLocated(from, loc, true)
	if err != nil {
		b.Close()
		return false, st, err
	}
	acked := buffer.Snapshot{Batch: rec.Batch, SealedAt: rec.SealedAt, Checkpoints: toEnc}
	if len(counts) > 0 || inFlight && !co.MinuteOnly && len(co.Counts) > 0 {
		// The batch in flight, rebuilt under its own id (a full one may
		// hold only the coarse counts).
		acked = buffer.Snapshot{Batch: rec.FromBatch, SealedAt: rec.FromSealedAt, Checkpoints: fromEnc}
		if counts == nil {
			counts = map[string]uint64{}
		}
	} else {
		counts = nil
	}
	if !rec.MinuteOnly && rec.Acked && rec.Batch != "" {
		co.Snapshot = acked // a full batch acknowledged: the daily and monthly counts end there too
		co.Snapshot.Finished = map[string][]byte{}
	}
	var fin map[string][]byte
	if rec.FinishedKnown {
		fin = map[string][]byte{}
		for _, c := range rec.Finished {
			fin[c.Key] = c.Value
		}
	}
	var arcs []buffer.ArchiveRange
	sources := map[string][]byte{}
	for _, a := range rec.CoarseArchives {
		if len(a.Parser) > 0 {
			sources[a.Source] = a.Parser
		}
	}
	for _, a := range rec.Archives {
		arcs = append(arcs, buffer.ArchiveRange{Source: a.Source, Path: a.Path, FPLen: a.FPLen, FPSum: uint64(a.FPSum), From: a.From, To: a.To})
		if len(a.Parser) > 0 {
			sources[a.Source] = a.Parser
		}
	}
	err = b.RebuildWith(buffer.Rebuilt{Acked: acked, Checkpoints: toEnc, Counts: counts, Batch: rec.Batch,
		Since: rec.SealedAt, Finished: fin, Marks: marks, Archives: arcs, Sources: sources, Coarse: co})
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return false, st, fmt.Errorf("rebuild buffer: %w", err)
	}
	if err := os.Rename(tmp, cfg.BufferPath); err != nil {
		return false, st, fmt.Errorf("rebuild buffer: %w", err)
	}
	if d, err := os.Open(filepath.Dir(cfg.BufferPath)); err == nil {
		d.Sync()
		d.Close()
	}
	args := []any{"files", st.Files, "found_elsewhere", st.Remapped, "not_found", st.Missing,
		"batch_in_flight", st.Batch, "reread_bytes", st.ReadBytes, "rebuilt_hits", st.Hits, "coarse_hits", st.CoarseHits,
		"archives", st.Archives}
	if st.LostBytes > 0 || st.Missing > 0 || st.Unrecorded > 0 || st.LostArchives > 0 {
		log.Error("state rebuilt from MongoDB's record, but some files were not found: lines in them not yet counted are lost",
			append(args, "lost_bytes_of_batch_in_flight", st.LostBytes, "finished_files_not_recorded", st.Unrecorded,
				"archives_not_found", st.LostArchives)...)
	} else {
		log.Warn("state rebuilt from MongoDB's record: reading resumes where the counts end", args...)
	}
	return true, st, nil
}

// window is what a re-read covers: the lines counted between the
// checkpoints from and the ends (to, and the files finished within it).
type window struct {
	to       map[string]tailer.Checkpoint
	finished []tailer.Checkpoint
	// known: finished lists every file finished within the window. A
	// record of an older logtally does not say: a file of from that is
	// not in to was then finished within it, and is read to its end.
	known bool
	from  map[string]tailer.Checkpoint
	// archives are the replayed archives' parts of the window.
	archives []progress.Archive
}

// stream is one stream of lines read within a window: one generation of
// one log, which copytruncate may have spread over several files (the
// log itself up to the truncation, then its copy from there), and so
// over several checkpoints, all beginning with the same bytes.
type stream struct {
	end   tailer.Checkpoint // the furthest end: its file holds the stream up to it
	loc   tailer.Located
	found bool
	start int64 // where the window's lines of it begin: its furthest checkpoint in from, else 0
}

// holds reports whether cp (an end or a from checkpoint) is of the
// stream: same source, not further, and its fingerprinted bytes begin
// the stream's file (looked for again when it moved: see openLocated).
func (s *stream) holds(cp tailer.Checkpoint, loc *locator) bool {
	e := s.end
	if cp.Source != e.Source || cp.FPLen == 0 || cp.FPLen > e.FPLen || cp.Offset > e.Offset {
		return false
	}
	if cp.FPLen == e.FPLen {
		return cp.FPSum == e.FPSum
	}
	if !s.found {
		return false
	}
	var f *os.File
	f, s.loc, s.found = openLocated(loc, s.end, s.loc)
	if f == nil {
		return false
	}
	defer f.Close()
	head := make([]byte, cp.FPLen)
	if n, _ := f.ReadAt(head, 0); n < len(head) {
		return false
	}
	return fnv1a.Extend(fnv1a.Offset, head) == cp.FPSum
}

// openLocated opens the file l located for cp. A rotation renaming files
// while the rebuild reads (logrotate shifting access.log.N to N+1) can
// put another file at l.Path: the file is then looked for again, a few
// times, rather than reading another file's bytes. It returns nil when the
// file is not found (or cannot be opened), with where it was last found.
func openLocated(loc *locator, cp tailer.Checkpoint, l tailer.Located) (*os.File, tailer.Located, bool) {
	for try := 0; try < 5; try++ {
		f, err := tailer.OpenLocated(loc.globs[cp.Source], l)
		if err == nil {
			return f, l, true
		}
		var found bool
		if l, found = loc.relocate(cp); !found {
			return nil, l, false
		}
	}
	return nil, l, true
}

// reread rebuilds the counts of a window (the batch in flight, or the
// coarse counts): the lines between from and its ends, and its ledger
// marks. The ends (to, and the files finished within the window) are
// grouped into streams by their first bytes; each stream is read once,
// from its furthest checkpoint in from (0 when it began within the
// window) to its furthest end, in the file holding that end. So a log
// truncated twice within the window (copytruncate) is read from its
// first copy, its second copy and itself, each part once.
func reread(ctx context.Context, cfg Config, w window, loc *locator, st *Stats, log *slog.Logger) (map[string]uint64, []buffer.Mark, error) {
	parsers := map[string]*parser.Parser{}
	limiters := map[string]*parser.PageLimiter{}
	maxLine := map[string]int{}
	for _, s := range cfg.Sources {
		p, err := parser.New(s.Parser)
		if err != nil {
			return nil, nil, fmt.Errorf("source %q: %w", s.Name, err)
		}
		parsers[s.Name] = p
		limiters[s.Name] = parser.NewPageLimiter(s.Parser.Page.MaxPagesPerMinute)
		maxLine[s.Name] = cmp.Or(s.MaxLineBytes, tailer.DefaultMaxLineBytes)
	}
	// An aggregator only for its sums: it is never run or committed.
	agg := aggregate.NewSummer(parsers, limiters, cfg.Clock, log)
	readRange := func(cp tailer.Checkpoint, l tailer.Located, found bool, start, end int64) error {
		if end <= start {
			return nil
		}
		var f *os.File
		if found {
			if f, l, _ = openLocated(loc, cp, l); f != nil {
				defer f.Close()
				if fi, err := f.Stat(); err == nil {
					l.Size = fi.Size()
				}
			}
		}
		if f == nil || l.Size < end {
			st.LostBytes += end - start
			log.Error("file of the batch in flight not found: its lines are not counted", "path", cp.Path,
				"file", fmt.Sprintf("%d:%d", cp.File.Dev, cp.File.Ino), "from", start, "to", end,
				"found_at", l.Path, "found_size", l.Size)
			return nil
		}
		if _, known := parsers[cp.Source]; !known {
			st.LostBytes += end - start
			log.Error("source of the batch in flight no longer configured: its lines are not counted", "source", cp.Source, "path", cp.Path)
			return nil
		}
		n, err := feedFile(agg.Add, cp, f, start, end, maxLine[cp.Source])
		st.ReadBytes += n
		return err
	}
	ends := make([]tailer.Checkpoint, 0, len(w.to)+len(w.finished))
	for _, k := range slices.Sorted(maps.Keys(w.to)) {
		ends = append(ends, w.to[k])
	}
	ends = append(ends, w.finished...)
	// Furthest first: a stream's first end is the one its file holds all
	// of.
	slices.SortStableFunc(ends, func(a, b tailer.Checkpoint) int { return cmp.Compare(b.Offset, a.Offset) })
	var streams []*stream
next:
	for _, e := range ends {
		if e.Offset == 0 {
			continue // nothing read of it yet
		}
		for _, s := range streams {
			if s.holds(e, loc) {
				continue next
			}
		}
		s := &stream{end: e}
		s.loc, s.found = loc.locate(e)
		streams = append(streams, s)
	}
	used := map[string]bool{} // keys of from whose stream was read
	for _, k := range slices.Sorted(maps.Keys(w.from)) {
		f := w.from[k]
		for _, s := range streams {
			if s.holds(f, loc) {
				s.start = max(s.start, f.Offset)
				used[k] = true
			}
		}
	}
	if beforeRead != nil {
		beforeRead()
	}
	for _, s := range streams {
		if err := readRange(s.end, s.loc, s.found, s.start, s.end.Offset); err != nil {
			return nil, nil, err
		}
	}
	if !w.known {
		// An older logtally's record: a file of from not in to was
		// finished within the window; read it to its end.
		for _, k := range slices.Sorted(maps.Keys(w.from)) {
			f := w.from[k]
			if _, ok := w.to[k]; ok || used[k] {
				continue
			}
			if l, ok := loc.locate(f); ok {
				if err := readRange(f, l, true, f.Offset, l.Size); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	lost, err := rereadArchives(ctx, cfg, w.archives, agg, st, log)
	if err != nil {
		return nil, nil, err
	}
	counts, marks := agg.Sums()
	for _, n := range counts {
		st.Hits += n
	}
	return counts, append(lost, marks...), nil
}

// feedRange hands the lines in [start, end) of path to add as chunks, cut
// by tailer.Cutter exactly as the follower cut them (an overlong line is a
// skip chunk), and returns the bytes read. start and end are line
// boundaries (checkpoint offsets): the range has no unterminated last line.
func feedRange(add func(*tailer.Chunk) error, cp tailer.Checkpoint, path string, start, end int64, maxLine int) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("re-read %s: %w", path, err)
	}
	defer f.Close()
	return feedFile(add, cp, f, start, end, maxLine)
}

// beforeRead, when set (tests), is called once the window's files are
// located, before they are read.
var beforeRead func()

// feedFile is feedRange for an open file.
func feedFile(add func(*tailer.Chunk) error, cp tailer.Checkpoint, f *os.File, start, end int64, maxLine int) (int64, error) {
	path := f.Name()
	r := io.NewSectionReader(f, start, end-start)
	buf := make([]byte, rebuildReadSize)
	n := 0      // bytes of buf: the partial line carried over
	at := start // file offset of buf[0]
	var read int64
	cut := tailer.Cutter{MaxLine: maxLine, Off: start}
	send := func(c tailer.Chunk, _ bool) error {
		off := c.Checkpoint.Offset
		c.Checkpoint = cp
		c.Checkpoint.Offset = off
		return add(&c)
	}
	for {
		if len(buf)-n < rebuildReadSize { // a long line carried over
			buf = append(buf[:n], make([]byte, rebuildReadSize)...)
		}
		m, err := r.Read(buf[n : n+rebuildReadSize])
		read += int64(m)
		data := buf[:n+m]
		var carry []byte
		// Never final: a followed file's last line is not a line before
		// its '\n' (and end is a line end).
		if cerr := cut.Cut(data, at, false, func(p []byte) { carry = p }, send); cerr != nil {
			return read, cerr
		}
		if cut.Skipping {
			at += int64(len(data))
		} else {
			at = cut.Off
		}
		n = copy(buf, carry)
		if err == io.EOF {
			return read, nil
		}
		if err != nil {
			return read, fmt.Errorf("re-read %s: %w", path, err)
		}
	}
}
