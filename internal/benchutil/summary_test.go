package benchutil

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/replay"
	"github.com/logtally/logtally/termview"
)

// The summary the benchmarks read is the one replay prints: rendered by
// termview and read back, every figure in its place.
func TestParseReplaySummary(t *testing.T) {
	s := &replay.Summary{Lines: 10_001, Hits: 9_990, Updates: 11, Inserts: 12, Finds: 13, BulkWrites: 3, InsertCalls: 4,
		BucketWrites: 17, Plans: 5, PlanCalls: 2, Outcomes: map[string]uint64{"malformed": 11}}
	var out bytes.Buffer
	termview.ReplaySummary(&out, s, "in this process", 1500*time.Millisecond)
	got, err := ParseReplaySummary(out.String())
	if err != nil {
		t.Fatal(err)
	}
	want := ReplayFigures{Lines: 10_001, Hits: 9_990, Ops: 11 + 12 + 13 + 5, Updates: 11, Inserts: 12, Finds: 13, BucketWrites: 17,
		RoundTrips: 3 + 4 + 13 + 2, Plans: 5}
	if got != want {
		t.Errorf("read %+v from\n%s\nwant %+v", got, out.String(), want)
	}
	for _, cut := range []string{"lines: ", "database: "} {
		i := strings.Index(out.String(), cut)
		broken := out.String()[:i] + "x" + out.String()[i:]
		if _, err := ParseReplaySummary(broken); err == nil || !strings.HasPrefix(err.Error(), `no "`+cut) {
			t.Errorf("summary without its %q line: %v", cut, err)
		}
	}
}
