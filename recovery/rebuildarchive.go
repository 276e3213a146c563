package recovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/archive"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/record"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
)

// rereadArchives adds to agg the archives' parts of the batch in flight:
// each archive's lines in [From, To), read again from its path and parsed
// with its replay source's settings, as its own chunks were. Their ledger
// marks come with them (agg's). An archive that cannot be read again (gone,
// changed, shorter, its settings unknown) is counted as lost and logged at
// ERROR, and its mark at To is returned: once the rebuilt batch is
// acknowledged, the database's ledger says the archive is counted to To,
// so a later replay does not count again what buckets took before the
// state dir was lost; what they had not taken is lost.
func rereadArchives(ctx context.Context, cfg Config, arcs []record.Archive, agg *aggregate.Summer, st *Stats, log *slog.Logger) ([]buffer.Mark, error) {
	var lost []buffer.Mark
	maxLine := tailer.DefaultMaxLineBytes
	for _, s := range cfg.Sources {
		if s.MaxLineBytes > 0 {
			maxLine = s.MaxLineBytes
			break
		}
	}
	for _, a := range arcs {
		if a.To <= a.From {
			continue
		}
		st.Archives++
		read, why, err := rereadArchive(ctx, a, agg, maxLine, cfg.Dims)
		st.ReadBytes += read
		if err != nil {
			return nil, err
		}
		if why == "" {
			continue
		}
		st.LostBytes += a.To - a.From - read
		st.LostArchives++
		log.Error("archive of the batch in flight cannot be read again: the part of it the buckets had not taken when the state dir was lost is not counted; "+
			"the ledger says it is counted to its end", "path", a.Path, "from", a.From, "to", a.To, "read", read, "reason", why)
		lost = append(lost, buffer.Mark{FPLen: a.FPLen, FPSum: uint64(a.FPSum), Offset: a.To, Source: a.Source, Path: a.Path})
	}
	return lost, nil
}

// rereadArchive reads one archive's part into agg. why says why it could
// not be read whole ("" when it was); err is an error of agg.
func rereadArchive(ctx context.Context, a record.Archive, agg *aggregate.Summer, maxLine int, dims *parser.DimsConfig) (read int64, why string, err error) {
	var pc parser.Config
	if len(a.Parser) == 0 {
		return 0, "its replay source's parser settings were not recorded", nil
	}
	if err := json.Unmarshal(a.Parser, &pc); err != nil {
		return 0, fmt.Sprintf("its replay source's parser settings: %v", err), nil
	}
	if pc.Dims != nil {
		pc.Dims.Geo = nil
		if dims != nil {
			pc.Dims = dims
		}
	}
	p, err := parser.New(pc)
	if err != nil {
		return 0, fmt.Sprintf("its replay source's parser settings: %v", err), nil
	}
	if !agg.HasSource(a.Source) {
		if err := agg.AddSource(a.Source, p); err != nil {
			return 0, "", err
		}
	}
	head, _, err := archive.Head(a.Path)
	if err != nil {
		return 0, err.Error(), nil
	}
	if !stream.Same(stream.Checkpoint{FPLen: a.FPLen, FPSum: uint64(a.FPSum)}, head) {
		return 0, "its first bytes are not the ones counted: another file", nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan stream.Chunk, 4)
	done := make(chan error, 1)
	var counters archive.Counters
	go func() {
		_, err := archive.Stream(ctx, a.Path, a.Source, head, a.From, false, maxLine, ch, &counters)
		done <- err
	}()
	pos := a.From
	for pos < a.To {
		var c stream.Chunk
		select {
		case c = <-ch:
		case serr := <-done:
			select {
			case c = <-ch: // sent before Stream returned
			default:
				if serr != nil && !errors.Is(serr, context.Canceled) {
					return pos - a.From, serr.Error(), nil
				}
				return pos - a.From, fmt.Sprintf("its stream ends at %d", pos), nil
			}
			done <- serr
		}
		if c.Start >= a.To {
			c.Release()
			break
		}
		if c.Checkpoint.Offset > a.To { // To is a line end: cut the chunk there
			c.Data = c.Data[:a.To-c.Start]
			c.Checkpoint.Offset = a.To
			n := int(min(a.To, int64(len(head))))
			c.Checkpoint.FPLen, c.Checkpoint.FPSum = n, fnv1a.Extend(fnv1a.Offset, head[:n])
		}
		err := agg.Add(&c)
		pos = c.Checkpoint.Offset
		c.Release()
		if err != nil {
			return pos - a.From, "", err
		}
	}
	cancel()
	// Let Stream end: it may be blocked sending.
	for {
		select {
		case c := <-ch:
			c.Release()
		case <-done:
			return pos - a.From, "", nil
		}
	}
}
