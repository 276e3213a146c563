package pipeline

// What a replay needs of a running Pipeline (replay.Target: a replay is
// a source of chunks beside the tailers), and the tailers' look-up of the
// ledger.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/replay"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
)

var (
	_ replay.Target = (*Pipeline)(nil)
	_ replay.State  = replayState{}
	_ replay.Feed   = (*replayFeed)(nil)
)

// ReplayConfig returns the settings a replay into this pipeline reads,
// and MongoDB's ledger, which replays read and claim.
func (p *Pipeline) ReplayConfig() replay.Config {
	rc := replay.Config{NoTail: p.cfg.NoTail, Instance: p.cfg.Instance, Holder: p.buf.InstanceID(), MaxLineBytes: p.maxLine(), Claims: p.claims, Clock: p.cfg.Clock, Logger: p.cfg.Logger}
	for _, s := range p.cfg.Sources {
		rc.Sources = append(rc.Sources, replay.Source{Name: s.Name, Paths: s.Paths, Parser: s.Parser})
	}
	return rc
}

// ReplayState returns what the tailers and the buffer hold, as a replay
// consults it.
func (p *Pipeline) ReplayState() replay.State { return replayState{p} }

// OpenReplay keeps each replay source's parser settings in the buffer (a
// batch holding its lines names the source, and a rebuild of that batch,
// a lost state dir, parses the archive again with the same settings) and
// makes the aggregator count its chunks with them, in the order of their
// names. It returns the feed their chunks are sent on.
func (p *Pipeline) OpenReplay(sources map[string]parser.Config) (replay.Feed, error) {
	f := &replayFeed{p: p}
	for _, name := range slices.Sorted(maps.Keys(sources)) {
		pc := sources[name]
		pc.Dims = p.cfg.Dims
		b, err := json.Marshal(pc)
		if err != nil {
			return nil, fmt.Errorf("replay source %q: %w", name, err)
		}
		if err := p.buf.Update(func(tx *buffer.Tx) error { return tx.PutArchiveSource(name, b) }); err != nil {
			return nil, err
		}
		pr, err := parser.New(pc)
		if err != nil {
			return nil, fmt.Errorf("replay source %q: %w", name, err)
		}
		if err := p.agg.AddSource(name, pr); err != nil {
			return nil, err
		}
		f.sources = append(f.sources, name)
	}
	return f, nil
}

// Reading is done once Run stops reading: tailers and replays stop
// sending chunks, and the daemon's control socket stops answering.
func (p *Pipeline) Reading() context.Context { return p.readCtx }

// replayState is a Pipeline's replay.State.
type replayState struct{ p *Pipeline }

// Followed returns the files every tailer follows now.
func (s replayState) Followed() []tailer.File {
	var out []tailer.File
	for _, t := range s.p.tailers {
		out = append(out, t.Followed()...)
	}
	return out
}

// Checkpoints returns the checkpoints the buffer holds (those it cannot
// decode left out).
func (s replayState) Checkpoints() ([]stream.Checkpoint, error) {
	var stored map[string][]byte
	err := s.p.buf.View(func(tx *buffer.ReadTx) error {
		stored = tx.Checkpoints()
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]stream.Checkpoint, 0, len(stored))
	for _, v := range stored {
		var cp stream.Checkpoint
		if cp.UnmarshalBinary(v) == nil {
			out = append(out, cp)
		}
	}
	return out, nil
}

// Counted returns the buffer's ledger entries of the streams beginning
// with head.
func (s replayState) Counted(head []byte) ([]stream.Entry, error) { return s.p.counted(head) }

// Entries returns the buffer's ledger entries under keys, those it holds.
func (s replayState) Entries(keys []string) (out map[string]stream.Entry, err error) {
	err = s.p.buf.View(func(tx *buffer.ReadTx) error {
		out, err = tx.Ledger(keys)
		return err
	})
	return out, err
}

// replayFeed is a replay's replay.Feed into a Pipeline: its sources
// (aggregator source names).
type replayFeed struct {
	p       *Pipeline
	sources []string
}

// Sender returns how one reader goroutine sends chunks of source on the
// channel the aggregator reads. While the aggregator is behind (chunks
// wait for it), the reader parses the lines of the next chunk on its own
// core (aggregate.Preparser): the aggregator then only counts them, in
// their order. While it keeps up (the reader is the slower: a
// decompressor's), it parses them itself.
func (f *replayFeed) Sender(source string) func(ctx context.Context, ch stream.Chunk) error {
	p := f.p
	pre := p.agg.Preparser(source) // nil on one core
	return func(ctx context.Context, ch stream.Chunk) error {
		if len(p.chunks) > 0 {
			pre.Prepare(&ch)
		}
		select {
		case p.chunks <- ch:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Kick makes the flusher write now rather than at the end of its
// interval.
func (f *replayFeed) Kick() { f.p.flush.Kick() }

// Reading is the Pipeline's.
func (f *replayFeed) Reading() context.Context { return f.p.readCtx }

// FinalCommit is closed once the aggregator's final commit is made (or
// failed), after Run stopped reading.
func (f *replayFeed) FinalCommit() <-chan struct{} { return f.p.agg.Stopped() }

// Totals returns the aggregator's totals (the lines and hits of the
// feed's sources) and the flusher's database figures.
func (f *replayFeed) Totals() replay.Totals {
	a, fl := f.p.agg.Stats(), f.p.flush.Stats()
	t := replay.Totals{
		ParsedAhead: a.ParsedAhead, Outcomes: map[string]uint64{},
		Updates: fl.Updates, Inserts: fl.Inserts + fl.InsertDups, Finds: fl.Finds, BulkWrites: fl.BulkWrites,
		InsertCalls: fl.InsertCalls, BucketWrites: fl.BucketWrites, Plans: fl.PlanFinds + fl.PlanInserts,
		PlanCalls: fl.PlanFinds + fl.PlanInsertCalls, ExpiredHits: fl.ExpiredHits,
	}
	for _, n := range f.sources {
		t.Lines += a.BySource[n].Lines
		t.Hits += a.BySource[n].Hits
	}
	for o, n := range a.Outcomes {
		if parser.Outcome(o) != parser.OK {
			t.Outcomes[parser.Outcome(o).String()] = n
		}
	}
	return t
}

// counted returns the buffer's ledger entries of the streams beginning
// with head.
func (p *Pipeline) counted(head []byte) (out []stream.Entry, err error) {
	err = p.buf.View(func(tx *buffer.ReadTx) error {
		out, err = tx.Streams(head)
		return err
	})
	return out, err
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

// countedLocally returns, for the tailer of source, where this buffer's
// ledger says streams beginning with head are counted: the tailers ask it
// about a file they find without a checkpoint, or resume from one, and
// take the furthest position whose tail check the file passes (see
// tailer.Position). Only marks of source itself and of replays count:
// another source's file is not a copy of this one. A ledger that cannot
// be read says nothing (and the file is read from its checkpoint or
// start), logged.
func (p *Pipeline) countedLocally(source string) func(head []byte) []tailer.Position {
	return func(head []byte) []tailer.Position {
		got, err := p.counted(head)
		if err != nil {
			p.log.Error("cannot read the ledger: a file is read from its checkpoint or start", "source", source, "err", err)
			return nil
		}
		var out []tailer.Position
		for _, e := range got {
			if e.Source == source || strings.HasPrefix(e.Source, replay.SourcePrefix) {
				out = append(out, tailer.Position{Offset: e.Offset, TailLen: e.TailLen, TailSum: e.TailSum})
			}
		}
		return out
	}
}
