package aggregate

// SetHitsOnly makes a count views alone, as before the measures: the
// baseline BenchmarkMeasuresCost compares with.
func (a *Aggregator) SetHitsOnly() { a.hitsOnly = true }
