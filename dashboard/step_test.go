package dashboard

import (
	"testing"
	"time"

	"github.com/logtally/logtally/query"
)

// The step suits the range, as doc.go says: minute up to 3 hours, hour up
// to 8 days, day up to 400 days, then month; each bound inclusive. The
// page's ranges: the last hour by minute, 24 hours and 7 days by hour,
// 30 days (and a month) by day.
func TestStepFor(t *testing.T) {
	const day = 24 * time.Hour
	for _, tc := range []struct {
		span time.Duration
		want query.Step
	}{
		{time.Minute, query.Minute},
		{time.Hour, query.Minute},
		{3 * time.Hour, query.Minute},
		{3*time.Hour + time.Millisecond, query.Hour},
		{day, query.Hour},
		{7 * day, query.Hour},
		{8 * day, query.Hour},
		{8*day + time.Millisecond, query.Day},
		{30 * day, query.Day},
		{31 * day, query.Day},
		{366 * day, query.Day},
		{400 * day, query.Day},
		{400*day + time.Millisecond, query.Month},
		{MaxRange, query.Month},
	} {
		if got := stepFor(tc.span); got != tc.want {
			t.Errorf("stepFor(%v) = %v, want %v", tc.span, got, tc.want)
		}
	}
}
