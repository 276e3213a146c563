package recovery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/record"
	"github.com/logtally/logtally/tailer"
	"github.com/logtally/logtally/visitor"
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
	Unrecorded    int    // files finished within the batch that the record could not list (record.MaxFinished)
	Archives      int    // replayed archives whose part of the batch in flight was read again
	LostArchives  int    // of them, those that could not be (gone, changed)
	Hits          uint64 // hits of the rebuilt batch
	CoarseHits    uint64 // hits re-read for the daily and monthly buckets only (flush.coarse_interval)
	WaitedOnLease bool
}

// loadRecord reads the instance's record, waiting while MongoDB cannot be
// reached: without it, a new buffer could only guess where to start.
func loadRecord(ctx context.Context, store *record.Store, clk clock.Clock, log *slog.Logger) (rec *record.Record, err error) {
	err = whileUnreachable(ctx, clk, log, "no buffer file: waiting for MongoDB to read this instance's progress record; "+
		"reading starts once it is known whether and where this instance counted before", func() error {
		rec, err = store.Load(ctx)
		return err
	})
	return rec, err
}

// acquire takes the instance's lease for the rebuild of bufferID's state,
// waiting while MongoDB cannot be reached. A take whose reply was lost may
// have been applied: the next attempt finds the lease its holder's and
// takes it again. Another daemon keeping the lease alive is returned.
func acquire(ctx context.Context, store *record.Store, bufferID string, clk clock.Clock, log *slog.Logger) error {
	var inUse error
	err := whileUnreachable(ctx, clk, log, "no buffer file: waiting for MongoDB to take this instance's lease before the rebuild", func() error {
		// Not own: a daemon that lost its state dir while running still
		// holds the lease with the same buffer id; wait for it to lapse.
		_, err := store.Acquire(ctx, bufferID, false, acquirePoll)
		if errors.Is(err, record.ErrInstanceInUse) {
			inUse = err
			return nil
		}
		return err
	})
	return cmp.Or(inUse, err)
}

// whileUnreachable runs try until it succeeds, logging msg and waiting
// with a backoff (1 s doubling to 30 s) after each error, or until ctx
// ends.
func whileUnreachable(ctx context.Context, clk clock.Clock, log *slog.Logger, msg string, try func() error) error {
	backoff := time.Second
	for {
		err := try()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		log.Warn(msg, "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
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
func Rebuild(ctx context.Context, cfg Config, store *record.Store, log *slog.Logger) (bool, Stats, error) {
	var st Stats
	rec, err := loadRecord(ctx, store, cfg.Clock, log)
	if err != nil || rec == nil {
		return false, st, err
	}
	st.WaitedOnLease = rec.Lease.Until.After(cfg.Clock.Now())
	if err := acquire(ctx, store, rec.BufferID, cfg.Clock, log); err != nil {
		return false, st, err
	}
	// The record cannot change once the lease is ours: read it again, as
	// the previous holder may have written until its lease lapsed.
	if rec, err = loadRecord(ctx, store, cfg.Clock, log); err != nil || rec == nil {
		return false, st, cmp.Or(err, errors.New("progress record vanished"))
	}
	log.Warn("no buffer file: rebuilding the state from this instance's progress record in MongoDB",
		"buffer_id", rec.BufferID, "batch", rec.Current.Batch, "acknowledged", rec.Acked, "sealed_at", rec.Current.SealedAt)

	globs := map[string]tailer.SourceFiles{}
	for _, s := range cfg.Sources {
		globs[s.Name] = s.Files
	}
	to, err := decodeRecord(rec.Current.Checkpoints)
	if err != nil {
		return false, st, err
	}
	from, err := decodeRecord(rec.Previous.Checkpoints)
	if err != nil {
		return false, st, err
	}
	coarseAt, err := decodeRecord(rec.Coarse.Checkpoints)
	if err != nil {
		return false, st, err
	}
	finished, err := decodeFinished(rec.Current.Finished.Files)
	if err != nil {
		return false, st, err
	}
	coarseFinished, err := decodeFinished(rec.Coarse.Finished.Files)
	if err != nil {
		return false, st, err
	}
	// Find every file again; on a rebuilt host its identity may differ.
	loc := &locator{globs: globs, clock: cfg.Clock, found: map[locKey]locResult{}}

	var counts map[string]measure.Vector
	var marks []buffer.Mark
	sketches := map[string]*visitor.Sketch{} // of every line re-read: $max makes re-sending harmless
	inFlight := rec.Current.Batch != "" && !rec.Acked
	var dimCounts []buffer.DimCount // of both windows: the next full batch's
	if inFlight {
		st.Unrecorded += rec.Current.Finished.LeftOut + rec.Current.ArchivesLeftOut
		var sk map[string]*visitor.Sketch
		var dc []buffer.DimCount
		counts, marks, sk, dc, err = reread(ctx, cfg, window{to: to, finished: finished, known: rec.Current.Finished.Known, from: from, archives: rec.Current.Archives}, loc, &st, log)
		dimCounts = append(dimCounts, dc...)
		if err != nil {
			return false, st, err
		}
		mergeSketches(sketches, sk)
		st.Batch = rec.Current.Batch
	}
	// With flush.coarse_interval, the daily and monthly buckets end
	// earlier than the minute ones: at the last acknowledged full batch.
	// The counts after it that the minute buckets acknowledged wait again
	// in the coarse counts (a full batch in flight takes them, as its seal
	// did). A full batch acknowledged is where both end.
	var co buffer.Coarse
	if rec.Coarse.Batch != "" && (inFlight || rec.Current.MinuteOnly) {
		ackedAt, ackedBatch := to, rec.Current.Batch
		ackedFinished, ackedKnown := coarseFinished, rec.Coarse.Finished.Known
		ackedArchives := rec.Coarse.Archives
		if inFlight {
			ackedAt, ackedBatch = from, rec.Previous.Batch
		} else {
			// The minute-only batch acknowledged: its own finished files
			// and archives are part of the coarse window too.
			ackedFinished = append(ackedFinished, finished...)
			ackedKnown = ackedKnown && rec.Current.Finished.Known
			ackedArchives = append(slices.Clone(ackedArchives), rec.Current.Archives...)
		}
		if rec.Coarse.Batch != ackedBatch {
			before := st.Hits
			st.Unrecorded += rec.Coarse.Finished.LeftOut + rec.Coarse.ArchivesLeftOut
			var cmarks []buffer.Mark
			var sk map[string]*visitor.Sketch
			var dc []buffer.DimCount
			co.Counts, cmarks, sk, dc, err = reread(ctx, cfg, window{to: ackedAt, finished: ackedFinished, known: ackedKnown, from: coarseAt, archives: ackedArchives}, loc, &st, log)
			dimCounts = append(dimCounts, dc...)
			if err != nil {
				return false, st, err
			}
			mergeSketches(sketches, sk)
			marks = append(marks, cmarks...)
			st.CoarseHits, st.Hits = st.Hits-before, before
		}
		enc, _, _, err := encodeLocated(coarseAt, loc, true)
		if err != nil {
			return false, st, err
		}
		co.Snapshot = buffer.Snapshot{Batch: rec.Coarse.Batch, SealedAt: rec.Coarse.SealedAt, Checkpoints: enc}
		if rec.Coarse.Finished.Known {
			// The minute-only batches acknowledged since it finished these;
			// a minute-only batch in flight adds its own once acknowledged.
			co.Snapshot.Finished = map[string][]byte{}
			for _, c := range rec.Coarse.Finished.Files {
				co.Snapshot.Finished[c.Key] = c.Value
			}
			if !inFlight && rec.Current.MinuteOnly {
				for _, c := range rec.Current.Finished.Files {
					co.Snapshot.Finished[c.Key] = c.Value
				}
			}
		}
		// Likewise the archives' parts waiting for a full batch.
		for _, a := range ackedArchives {
			co.Snapshot.Archives = append(co.Snapshot.Archives, buffer.ArchiveRange{Source: a.Source, Path: a.Path,
				FPLen: a.FPLen, FPSum: uint64(a.FPSum), From: a.From, To: a.To})
		}
		co.MinuteOnly = inFlight && rec.Current.MinuteOnly
	}
	tmp := cfg.BufferPath + ".rebuild"
	os.Remove(tmp)
	if err := os.MkdirAll(filepath.Dir(tmp), 0o750); err != nil {
		return false, st, fmt.Errorf("rebuild buffer: %w", err)
	}
	bopts := cfg.Buffer
	bopts.Logger, bopts.InstanceID, bopts.Clock = log, rec.BufferID, cfg.Clock
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
	acked := buffer.Snapshot{Batch: rec.Current.Batch, SealedAt: rec.Current.SealedAt, Checkpoints: toEnc}
	if len(counts) > 0 || inFlight && !co.MinuteOnly && len(co.Counts) > 0 {
		// The batch in flight, rebuilt under its own id (a full one may
		// hold only the coarse counts).
		acked = buffer.Snapshot{Batch: rec.Previous.Batch, SealedAt: rec.Previous.SealedAt, Checkpoints: fromEnc}
		if counts == nil {
			counts = map[string]measure.Vector{}
		}
	} else {
		counts = nil
	}
	if !rec.Current.MinuteOnly && rec.Acked && rec.Current.Batch != "" {
		co.Snapshot = acked // a full batch acknowledged: the daily and monthly counts end there too
		co.Snapshot.Finished = map[string][]byte{}
	}
	var fin map[string][]byte
	if rec.Current.Finished.Known {
		fin = map[string][]byte{}
		for _, c := range rec.Current.Finished.Files {
			fin[c.Key] = c.Value
		}
	}
	var arcs []buffer.ArchiveRange
	sources := map[string][]byte{}
	for _, a := range rec.Coarse.Archives {
		if len(a.Parser) > 0 {
			sources[a.Source] = a.Parser
		}
	}
	for _, a := range rec.Current.Archives {
		arcs = append(arcs, buffer.ArchiveRange{Source: a.Source, Path: a.Path, FPLen: a.FPLen, FPSum: uint64(a.FPSum), From: a.From, To: a.To})
		if len(a.Parser) > 0 {
			sources[a.Source] = a.Parser
		}
	}
	// The rebuilt batch keeps the lost one's layout: its first attempts
	// may have written part of it so (a record of before names none:
	// every page to its own buckets).
	err = b.Rebuild(buffer.Rebuilt{Acked: acked, Checkpoints: toEnc, Counts: counts, Batch: rec.Current.Batch,
		Layout: buffer.Layout(rec.Current.Layout), Since: rec.Current.SealedAt, Finished: fin, Marks: marks, Archives: arcs, Sources: sources, Coarse: co, Visitors: sketches,
		Dims: buffer.MergeDimCounts(dimCounts)})
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

// mergeSketches merges src into dst (register-wise maximum).
func mergeSketches(dst, src map[string]*visitor.Sketch) {
	for k, s := range src {
		if d := dst[k]; d != nil {
			d.Merge(s)
		} else {
			dst[k] = s
		}
	}
}
