package benchutil

import (
	"fmt"
	"regexp"
	"strconv"
)

// ReplayFigures are the figures of a `logtally replay` run, read from its
// summary (termview.ReplaySummary).
type ReplayFigures struct {
	Lines, Hits int64
	// The database line: ops=, updates=, inserts=, finds=,
	// bucket_writes=, round_trips=, plans=.
	Ops, Updates, Inserts, Finds, BucketWrites, RoundTrips, Plans int64
}

// The summary lines ParseReplaySummary reads.
var (
	summaryHitsRe = regexp.MustCompile(`(?m)^lines: (\d+), hits: (\d+),`)
	summaryDBRe   = regexp.MustCompile(`(?m)^database: ops=(\d+) updates=(\d+) inserts=(\d+) finds=(\d+) bucket_writes=(\d+) round_trips=(\d+) plans=(\d+)$`)
)

// ParseReplaySummary reads the figures of a replay's summary, out (its
// standard output); an error names the line it lacks.
func ParseReplaySummary(out string) (ReplayFigures, error) {
	var f ReplayFigures
	h := summaryHitsRe.FindStringSubmatch(out)
	if h == nil {
		return f, fmt.Errorf("no \"lines: N, hits: H, …\" line in the replay's summary:\n%s", out)
	}
	m := summaryDBRe.FindStringSubmatch(out)
	if m == nil {
		return f, fmt.Errorf("no \"database: ops=… plans=P\" line in the replay's summary:\n%s", out)
	}
	for i, p := range []*int64{&f.Lines, &f.Hits} {
		*p, _ = strconv.ParseInt(h[i+1], 10, 64)
	}
	for i, p := range []*int64{&f.Ops, &f.Updates, &f.Inserts, &f.Finds, &f.BucketWrites, &f.RoundTrips, &f.Plans} {
		*p, _ = strconv.ParseInt(m[i+1], 10, 64)
	}
	return f, nil
}
