package aggregate

// SetHitsOnly makes a count views alone, as before the measures: the
// baseline BenchmarkMeasuresCost compares with.
func (a *Aggregator) SetHitsOnly() { a.hitsOnly = true }

// CommittedWithoutBuffer does to a what a successful Commit does, without
// a buffer: the sums and checkpoints go, the visitor sketches stay
// (clean). The benchmarks' rounds are commits.
func (a *Aggregator) CommittedWithoutBuffer() {
	a.addMeasures()
	a.committedSketches()
	a.index.reset()
	a.counts = a.counts[:0]
	clear(a.cps)
	a.finished, a.archives = nil, nil
	clear(a.marks)
}
