package visitor

import (
	"testing"
	"time"
)

// A salt's _id names its period and gives its start back; another
// period's id is not taken.
func TestPeriodID(t *testing.T) {
	at := time.Date(2026, 11, 25, 13, 7, 0, 0, time.UTC).Unix()
	for p, want := range map[Period]string{Day: "day:20261125", Month: "month:202611"} {
		start, _ := p.Bounds(at)
		if got := p.ID(start); got != want {
			t.Errorf("%s ID = %q, want %q", p, got, want)
		}
		if back, ok := p.ParseID(want); !ok || back != start {
			t.Errorf("%s ParseID(%q) = %d, %v, want %d", p, want, back, ok, start)
		}
	}
	for _, id := range []string{"month:202611", "day:", "day:2026112", "20261125", "day:20261125x"} {
		if _, ok := Day.ParseID(id); ok {
			t.Errorf("Day.ParseID(%q) took it", id)
		}
	}
}
