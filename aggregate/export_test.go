package aggregate

// SetHitsOnly makes s count views alone, as before the measures: the
// baseline BenchmarkMeasuresCost compares with.
func (s *Summer) SetHitsOnly() { s.hitsOnly = true }

// CommittedWithoutBuffer does to s what a successful Commit does, without
// a buffer: the sums and checkpoints go, the visitor sketches stay
// (clean). The benchmarks' rounds are commits.
func (s *Summer) CommittedWithoutBuffer() {
	s.addMeasures()
	s.committedSketches()
	s.sortedDims() // what a commit hands on, then forgets
	s.committedDims()
	s.forget()
	clear(s.at.cps)
}

// DimDays returns the site days whose values by dimension s keeps.
func (s *Summer) DimDays() int {
	if s.dim.counter == nil {
		return 0
	}
	return s.dim.counter.Days()
}
