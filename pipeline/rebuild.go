package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/progress"
	"github.com/logtally/logtally/tailer"
)

// rebuildReadSize is the read size of the re-read of a batch in flight.
const rebuildReadSize = 256 << 10

// rebuildStats says what a rebuild did, for its log line and tests.
type rebuildStats struct {
	Batch         string // the batch re-applied, "" when none was in flight
	Files         int    // checkpoints restored
	Remapped      int    // of them, found under another identity (a copy, a rebuilt host)
	Missing       int    // checkpoints whose file was not found
	ReadBytes     int64  // bytes re-read to rebuild the batch in flight
	LostBytes     int64  // bytes of the batch in flight that could not be re-read
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

// rebuild makes a new buffer file at cfg.BufferPath from the instance's
// progress record, when there is one: the checkpoints where the
// acknowledged counts end, and, when a batch was in flight, that batch
// rebuilt by re-reading its lines and sealed under its own id, so that
// writing it again counts only what the buckets lack. It takes the lease
// first, waiting for a live one to expire. It returns false when there is
// no record (a genuine first start): the caller creates the buffer as
// usual.
func rebuild(ctx context.Context, cfg Config, store *progress.Store, log *slog.Logger) (bool, rebuildStats, error) {
	var st rebuildStats
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

	globs := map[string][]string{}
	for _, s := range cfg.Sources {
		globs[s.Name] = s.Paths
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
	// Find every file again; on a rebuilt host its identity may differ.
	located := map[string]tailer.Located{}
	for _, set := range []map[string]tailer.Checkpoint{to, from, coarseAt} {
		for k, cp := range set {
			if _, done := located[k]; done {
				continue
			}
			// A logrotate run renaming files while we look can hide one:
			// look again a few times before giving it up.
			for try := 0; try < 5; try++ {
				if loc, ok := tailer.Locate(globs[cp.Source], cp); ok {
					located[k] = loc
					break
				}
				<-cfg.Clock.After(20 * time.Millisecond)
			}
		}
	}

	var counts map[string]uint64
	inFlight := rec.Batch != "" && !rec.Acked
	if inFlight {
		counts, err = reread(cfg, to, from, located, &st, log)
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
		if inFlight {
			ackedAt, ackedBatch = from, rec.FromBatch
		}
		if rec.CoarseBatch != ackedBatch {
			before := st.Hits
			if co.Counts, err = reread(cfg, ackedAt, coarseAt, located, &st, log); err != nil {
				return false, st, err
			}
			st.CoarseHits, st.Hits = st.Hits-before, before
		}
		enc, _, _, err := encodeLocated(coarseAt, located)
		if err != nil {
			return false, st, err
		}
		co.Snapshot = buffer.Snapshot{Batch: rec.CoarseBatch, SealedAt: rec.CoarseSealedAt, Checkpoints: enc}
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
	toEnc, n, missing, err := encodeLocated(to, located)
	if err != nil {
		b.Close()
		return false, st, err
	}
	st.Files, st.Remapped, st.Missing = len(to), n, missing
	fromEnc, _, _, err := encodeLocated(from, located)
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
	}
	err = b.RebuildCoarse(acked, toEnc, counts, rec.Batch, rec.SealedAt, co)
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
		"batch_in_flight", st.Batch, "reread_bytes", st.ReadBytes, "rebuilt_hits", st.Hits, "coarse_hits", st.CoarseHits}
	if st.LostBytes > 0 || st.Missing > 0 {
		log.Error("state rebuilt from MongoDB's record, but some files were not found: lines in them not yet counted are lost",
			append(args, "lost_bytes_of_batch_in_flight", st.LostBytes)...)
	} else {
		log.Warn("state rebuilt from MongoDB's record: reading resumes where the counts end", args...)
	}
	return true, st, nil
}

// decodeRecord decodes the record's checkpoints, by buffer key.
func decodeRecord(cps []progress.Checkpoint) (map[string]tailer.Checkpoint, error) {
	out := make(map[string]tailer.Checkpoint, len(cps))
	for _, c := range cps {
		var cp tailer.Checkpoint
		if err := cp.UnmarshalBinary(c.Value); err != nil {
			return nil, fmt.Errorf("progress record: checkpoint %q: %w", c.Key, err)
		}
		out[c.Key] = cp
	}
	return out, nil
}

// encodeLocated encodes cps for the buffer, each with the identity and
// path its file was found under; one not found keeps its own (the tailer
// then finds it gone).
func encodeLocated(cps map[string]tailer.Checkpoint, located map[string]tailer.Located) (map[string][]byte, int, int, error) {
	out := make(map[string][]byte, len(cps))
	remapped, missing := 0, 0
	for k, cp := range cps {
		if loc, ok := located[k]; ok {
			if loc.ID != cp.File {
				remapped++
			}
			cp.File, cp.Path = loc.ID, loc.Path
		} else {
			missing++
		}
		b, err := cp.MarshalBinary()
		if err != nil {
			return nil, 0, 0, err
		}
		out[cp.Key()] = b
	}
	return out, remapped, missing, nil
}

// reread rebuilds the counts of the batch in flight: the lines between
// from and to of every file. A file in from but not in to was finished
// during the batch: it is read to its end.
func reread(cfg Config, to, from map[string]tailer.Checkpoint, located map[string]tailer.Located, st *rebuildStats, log *slog.Logger) (map[string]uint64, error) {
	parsers := map[string]*parser.Parser{}
	limiters := map[string]*parser.PageLimiter{}
	maxLine := map[string]int{}
	for _, s := range cfg.Sources {
		p, err := parser.New(s.Parser)
		if err != nil {
			return nil, fmt.Errorf("source %q: %w", s.Name, err)
		}
		parsers[s.Name] = p
		limiters[s.Name] = parser.NewPageLimiter(s.Parser.Page.MaxPagesPerMinute)
		maxLine[s.Name] = cmp.Or(s.Tailer.MaxLineBytes, tailer.DefaultMaxLineBytes)
	}
	// An aggregator only for its sums (add): it is never run or committed.
	agg := &Aggregator{
		cfg: AggregatorConfig{Parsers: parsers, Limiters: limiters, Clock: cfg.Clock}, log: log,
		index: map[string]int32{}, cps: map[string][]byte{}, marks: map[string]buffer.Mark{}, malformedByFile: map[tailer.FileID]*malformedLog{},
	}
	readRange := func(cp tailer.Checkpoint, key string, start, end int64) error {
		if end <= start {
			return nil
		}
		loc, ok := located[key]
		if !ok || loc.Size < end {
			st.LostBytes += end - start
			log.Error("file of the batch in flight not found: its lines are not counted", "path", cp.Path,
				"file", fmt.Sprintf("%d:%d", cp.File.Dev, cp.File.Ino), "from", start, "to", end,
				"found_at", loc.Path, "found_size", loc.Size)
			return nil
		}
		if _, known := parsers[cp.Source]; !known {
			st.LostBytes += end - start
			log.Error("source of the batch in flight no longer configured: its lines are not counted", "source", cp.Source, "path", cp.Path)
			return nil
		}
		n, err := feedRange(agg, cp, loc.Path, start, end, maxLine[cp.Source])
		st.ReadBytes += n
		return err
	}
	for k, tcp := range to {
		start := int64(0)
		if fcp, ok := from[k]; ok {
			if !truncated(fcp, tcp) {
				start = fcp.Offset // else truncated in between: the batch holds its new lines from 0
			}
		} else if loc, ok := located[k]; ok {
			start = copiedFrom(loc.Path, tcp, to, from)
		}
		if err := readRange(tcp, k, start, tcp.Offset); err != nil {
			return nil, err
		}
	}
	for k, fcp := range from {
		if _, ok := to[k]; ok {
			continue
		}
		if loc, ok := located[k]; ok {
			if err := readRange(fcp, k, fcp.Offset, loc.Size); err != nil {
				return nil, err
			}
		}
	}
	counts := make(map[string]uint64, len(agg.index))
	for k, i := range agg.index {
		counts[k] = agg.counts[i]
		st.Hits += agg.counts[i]
	}
	return counts, nil
}

// truncated reports whether a file's checkpoint went from fcp to tcp
// through a truncation (copytruncate): its offset went back, or its first
// bytes changed.
func truncated(fcp, tcp tailer.Checkpoint) bool {
	return tcp.Offset < fcp.Offset || (fcp.FPLen == tcp.FPLen && fcp.FPSum != tcp.FPSum)
}

// copiedFrom returns where the batch's lines of a file new in to (tcp, at
// path) begin. A file new in the batch is usually read from 0, but a copy
// made by copytruncate continues the file it was copied from: the tailer
// read it from the offset the original had reached, and the lines before
// that were counted under the original's checkpoint. So when a file of
// from was truncated (or is gone) and its first bytes are this file's,
// the batch's lines of this file begin at that file's offset.
func copiedFrom(path string, tcp tailer.Checkpoint, to, from map[string]tailer.Checkpoint) int64 {
	start := int64(0)
	for fk, fcp := range from {
		if fcp.Source != tcp.Source || fcp.File == tcp.File || fcp.FPLen == 0 || fcp.Offset > tcp.Offset || fcp.Offset <= start {
			continue
		}
		if now, ok := to[fk]; ok && !truncated(fcp, now) {
			continue // the original goes on: this is no copy of it
		}
		if match, err := tailer.HasFingerprint(path, fcp.FPLen, fcp.FPSum); err == nil && match {
			start = fcp.Offset
		}
	}
	return start
}

// feedRange hands the lines in [start, end) of path to agg as chunks,
// skipping lines longer than maxLine as the tailer does, and returns the
// bytes read. start and end are line boundaries (checkpoint offsets).
func feedRange(agg *Aggregator, cp tailer.Checkpoint, path string, start, end int64, maxLine int) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("re-read %s: %w", path, err)
	}
	defer f.Close()
	r := io.NewSectionReader(f, start, end-start)
	buf := make([]byte, rebuildReadSize)
	var pend []byte // a partial line carried over
	var read int64
	pos := start // file offset of pend's first byte
	skipping := false
	var out []byte
	outStart := int64(0)
	emit := func() error { // out holds whole, contiguous lines from outStart
		if len(out) == 0 {
			return nil
		}
		c := tailer.Chunk{Checkpoint: cp, Start: outStart, Data: out}
		c.Checkpoint.Offset = outStart + int64(len(out))
		out = nil
		return agg.add(&c)
	}
	for {
		n, err := r.Read(buf)
		read += int64(n)
		data := append(pend, buf[:n]...)
		for {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			if skipping || i > maxLine { // the end of an overlong line
				if err := emit(); err != nil {
					return read, err
				}
			} else {
				if len(out) == 0 {
					outStart = pos
				}
				out = append(out, data[:i+1]...)
			}
			skipping = false
			pos += int64(i + 1)
			data = data[i+1:]
		}
		if err := emit(); err != nil {
			return read, err
		}
		if len(data) > maxLine {
			skipping, pos, data = true, pos+int64(len(data)), nil
		}
		pend = append([]byte(nil), data...)
		if err == io.EOF {
			return read, nil
		}
		if err != nil {
			return read, fmt.Errorf("re-read %s: %w", path, err)
		}
	}
}
