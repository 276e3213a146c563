package recovery

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/record"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
	"github.com/logtally/logtally/visitor"
)

// window is what a re-read covers: the lines counted between the
// checkpoints from and the ends (to, and the files finished within it).
type window struct {
	to       map[string]stream.Checkpoint
	finished []stream.Checkpoint
	// known: finished lists every file finished within the window. A
	// record of an older logtally does not say: a file of from that is
	// not in to was then finished within it, and is read to its end.
	known bool
	from  map[string]stream.Checkpoint
	// archives are the replayed archives' parts of the window.
	archives []record.Archive
}

// windowStream is one stream of lines read within a window: one generation
// of one log, which copytruncate may have spread over several files (the
// log itself up to the truncation, then its copy from there), and so over
// several checkpoints, all beginning with the same bytes.
type windowStream struct {
	end   stream.Checkpoint // the furthest end: its file holds the stream up to it
	loc   tailer.Located
	found bool
	start int64 // where the window's lines of it begin: its furthest checkpoint in from, else 0
}

// holds reports whether cp (an end or a from checkpoint) is of the
// stream: same source, not further, and its fingerprinted bytes begin
// the stream's file (looked for again when it moved: see openLocated).
func (s *windowStream) holds(cp stream.Checkpoint, loc *locator) bool {
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
	n, _ := f.ReadAt(head, 0)
	return stream.Same(cp, head[:n])
}

// openLocated opens the file l located for cp. A rotation renaming files
// while the rebuild reads (logrotate shifting access.log.N to N+1) can
// put another file at l.Path: the file is then looked for again, a few
// times, rather than reading another file's bytes. It returns nil when the
// file is not found (or cannot be opened), with where it was last found.
func openLocated(loc *locator, cp stream.Checkpoint, l tailer.Located) (*os.File, tailer.Located, bool) {
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
func reread(ctx context.Context, cfg Config, w window, loc *locator, st *Stats, log *slog.Logger) (map[string]measure.Vector, []buffer.Mark, map[string]*visitor.Sketch, []buffer.DimCount, error) {
	parsers := map[string]*parser.Parser{}
	maxLine := map[string]int{}
	for _, s := range cfg.Sources {
		p, err := parser.New(s.Parser)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("source %q: %w", s.Name, err)
		}
		parsers[s.Name] = p
		maxLine[s.Name] = cmp.Or(s.MaxLineBytes, tailer.DefaultMaxLineBytes)
	}
	// An aggregator only for its sums: it is never run or committed.
	agg := aggregate.NewSummer(parsers, cfg.Clock, log)
	agg.SetVisitors(cfg.Visitors)
	readRange := func(cp stream.Checkpoint, l tailer.Located, found bool, start, end int64) error {
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
	ends := make([]stream.Checkpoint, 0, len(w.to)+len(w.finished))
	for _, k := range slices.Sorted(maps.Keys(w.to)) {
		ends = append(ends, w.to[k])
	}
	ends = append(ends, w.finished...)
	// Furthest first: a stream's first end is the one its file holds all
	// of.
	slices.SortStableFunc(ends, func(a, b stream.Checkpoint) int { return cmp.Compare(b.Offset, a.Offset) })
	var streams []*windowStream
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
		s := &windowStream{end: e}
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
			return nil, nil, nil, nil, err
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
					return nil, nil, nil, nil, err
				}
			}
		}
	}
	lost, err := rereadArchives(ctx, cfg, w.archives, agg, st, log)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	counts, marks := agg.Sums()
	for _, n := range counts {
		st.Hits += n[measure.Views]
	}
	return counts, append(lost, marks...), agg.Sketches(), agg.DimCounts(), nil
}

// feedRange hands the lines in [start, end) of path to add as chunks, cut
// by stream.Cutter exactly as the follower cut them (an overlong line is a
// skip chunk), and returns the bytes read. start and end are line
// boundaries (checkpoint offsets): the range has no unterminated last line.
func feedRange(add func(*stream.Chunk) error, cp stream.Checkpoint, path string, start, end int64, maxLine int) (int64, error) {
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
func feedFile(add func(*stream.Chunk) error, cp stream.Checkpoint, f *os.File, start, end int64, maxLine int) (int64, error) {
	path := f.Name()
	r := io.NewSectionReader(f, start, end-start)
	buf := make([]byte, rebuildReadSize)
	n := 0      // bytes of buf: the partial line carried over
	at := start // file offset of buf[0]
	var read int64
	cut := stream.Cutter{MaxLine: maxLine, Off: start}
	send := func(c stream.Chunk, _ bool) error {
		off := c.Checkpoint.Offset
		c.Checkpoint = cp
		c.Checkpoint.Offset = off
		// The tail check at the chunk's end, as the follower made it
		// (the ledger mark of the stream carries it).
		if n := min(off, stream.TailSize); int64(len(c.Data)) >= n {
			c.Checkpoint.TailLen, c.Checkpoint.TailSum = stream.TailOf(c.Data[int64(len(c.Data))-n:])
		} else if n, sum, ok, _ := stream.TailAt(f, off); ok {
			c.Checkpoint.TailLen, c.Checkpoint.TailSum = n, sum
		} else {
			c.Checkpoint.TailLen, c.Checkpoint.TailSum = 0, 0
		}
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
