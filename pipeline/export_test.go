package pipeline

import "github.com/logtally/logtally/aggregate"

// Aggregator returns the aggregator, for tests that wait on its state
// (replays see the pipeline through replay.Target only).
func (p *Pipeline) Aggregator() *aggregate.Aggregator { return p.agg }
