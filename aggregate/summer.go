package aggregate

import (
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
)

// OnMalformed makes Add call f for each malformed line it parses, after
// logging it: n is the line's number among the lines of its chunk (from
// 1), out why it is malformed, length its length in bytes. The line
// itself is not passed on: nothing logtally reads is echoed. For a
// Summer (the dry run prints file:line:reason); f runs in Add's goroutine.
func (a *Aggregator) OnMalformed(f func(n uint64, out parser.Outcome, length int)) {
	a.malformed.on = f
}

// LinesParsed returns the lines parsed since New or NewSummer (the Lines
// of Stats, without its copies): before and after an Add, how many lines
// the chunk held.
func (a *Aggregator) LinesParsed() uint64 { return a.stats.lines.Load() }

// Held returns the number of (site, page, second) sums held: what Run
// compares with Config.MaxKeys after each chunk.
func (a *Aggregator) Held() int { return len(a.counts) }

// Drain hands each sum held (a buffer key, see buffer.AppendKey and
// buffer.DecodeKey, and its measures) to f, in no order, then forgets
// everything a commit would write (sums, checkpoints, finished files,
// archive parts, ledger marks), writing nothing: a Summer bounding its
// memory as Run does with Config.MaxKeys. key is valid only during the
// call; f nil forgets without handing anything on. Stats keep counting.
func (a *Aggregator) Drain(f func(key []byte, v *measure.Vector)) {
	for i := range a.counts {
		if f == nil {
			break
		}
		f(a.index.key(i), &a.counts[i])
	}
	a.addMeasures()
	a.dropSketches()
	a.index.reset()
	a.counts = a.counts[:0]
	clear(a.cps)
	a.finished, a.archives = nil, nil
	clear(a.marks)
}
