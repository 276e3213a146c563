package pipeline

// What a replay needs of a running Pipeline (replay.Pipeline), and the
// tailers' look-up of the ledger.

import (
	"context"
	"strings"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/replay"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
)

var _ replay.Pipeline = (*Pipeline)(nil)

// ReplayConfig returns the settings a replay into this pipeline reads.
func (p *Pipeline) ReplayConfig() replay.Config {
	rc := replay.Config{NoTail: p.cfg.NoTail, Instance: p.cfg.Instance, MaxLineBytes: p.maxLine(), Clock: p.cfg.Clock, Logger: p.cfg.Logger}
	for _, s := range p.cfg.Sources {
		rc.Sources = append(rc.Sources, replay.Source{Name: s.Name, Paths: s.Paths, Parser: s.Parser})
	}
	return rc
}

// Aggregator returns the aggregator.
func (p *Pipeline) Aggregator() *aggregate.Aggregator { return p.agg }

// Claims returns MongoDB's ledger, which replays read and claim.
func (p *Pipeline) Claims() replay.Claims { return p.claims }

// Chunks returns the channel the aggregator reads: tailers and replays
// send on it.
func (p *Pipeline) Chunks() chan<- stream.Chunk { return p.chunks }

// Followed returns the files every tailer follows now.
func (p *Pipeline) Followed() []tailer.File {
	var out []tailer.File
	for _, t := range p.tailers {
		out = append(out, t.Followed()...)
	}
	return out
}

// Reading is done once Run stops reading: tailers and replays stop
// sending chunks.
func (p *Pipeline) Reading() context.Context { return p.readCtx }

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
		got, err := p.buf.Streams(head)
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
