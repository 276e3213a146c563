package pipeline

import (
	"time"

	"github.com/logtally/logtally/aggregate"
)

// Aggregator returns the aggregator, for tests that wait on its state
// (replays see the pipeline through replay.Target only).
func (p *Pipeline) Aggregator() *aggregate.Aggregator { return p.agg }

// WaitLimit bounds the tests' waits for MongoDB to hold what they wrote: a
// rebuild under -race beside the whole suite on a loaded machine has taken
// over a minute.
const WaitLimit = 3 * time.Minute
