package termview

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/logtally/logtally/replay"
)

// ReplaySummary prints what a replay did, where (in the running daemon,
// or in this process) and in how long.
func ReplaySummary(w io.Writer, s *replay.Summary, where string, elapsed time.Duration) {
	fmt.Fprintf(w, "replayed %s\n", where)
	for _, f := range s.Files {
		first := "-"
		if !f.First.IsZero() {
			first = f.First.Format(time.RFC3339)
		}
		fmt.Fprintf(w, "  %-20s  %-15s  %-6s  %12d lines  bytes %d-%d  %s\n", first, f.Status, f.Compression, f.Lines, f.From, f.End, f.Path)
	}
	fmt.Fprintf(w, "lines: %d, hits: %d, in %s (%.0f lines/s)\n", s.Lines, s.Hits, elapsed.Round(time.Millisecond), float64(s.Lines)/max(elapsed.Seconds(), 1e-9))
	if s.ParsedAhead > 0 {
		fmt.Fprintf(w, "parsed ahead: %d lines, by the readers on other cores than the aggregator's\n", s.ParsedAhead)
	}
	if len(s.Outcomes) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(s.Outcomes)) {
			parts = append(parts, fmt.Sprintf("%s: %d", k, s.Outcomes[k]))
		}
		fmt.Fprintf(w, "not counted: %s\n", strings.Join(parts, ", "))
	}
	ops := s.Updates + s.Inserts + s.Finds + s.Plans
	fmt.Fprintf(w, "database: ops=%d updates=%d inserts=%d finds=%d bucket_writes=%d round_trips=%d plans=%d\n",
		ops, s.Updates, s.Inserts, s.Finds, s.BucketWrites, s.BulkWrites+s.InsertCalls+s.Finds+s.PlanCalls, s.Plans)
	if s.ExpiredHits > 0 {
		fmt.Fprintf(w, "past retention: %d hits not written to buckets already expired (the minute buckets of old logs; the daily and monthly buckets took them)\n", s.ExpiredHits)
	}
	if s.Hits > 0 {
		fmt.Fprintf(w, "one upsert per hit (a daily and a monthly) would be %d operations: %s\n",
			2*s.Hits, opsRatio(2*s.Hits, ops))
	}
	if s.Stopped {
		fmt.Fprintln(w, "stopped before the end: what was counted is kept; run the same command again to resume")
	}
	if s.Unacknowledged {
		fmt.Fprintln(w, "every file counted; logtally stopped reading (reloaded or stopping) before MongoDB acknowledged all of it: "+
			"the buffer holds the counts and logtally writes them from it (running the same command again counts nothing more)")
	}
}

// opsRatio compares the operations logtally issued with naive ones (one
// upsert per hit and level): "N× fewer" or "N× more", with one decimal
// below 10.
func opsRatio(naive, issued uint64) string {
	if issued == 0 {
		return "logtally issued none"
	}
	r, word := float64(naive)/float64(issued), "fewer"
	if naive < issued {
		r, word = float64(issued)/float64(naive), "more"
	}
	n := fmt.Sprintf("%.0f", r)
	if r < 9.95 {
		n = fmt.Sprintf("%.1f", r)
	}
	if n == "1.0" {
		return fmt.Sprintf("logtally issued %d, about as many", issued)
	}
	return fmt.Sprintf("logtally issued %d, %s× %s", issued, n, word)
}
