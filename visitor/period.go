package visitor

import (
	"fmt"
	"time"
)

// Period is how long one salt keys the visitors: a visitor is counted once
// per site and period.
type Period uint8

// The periods.
const (
	// Day: a salt per UTC day (the default). Uniques are per day; a longer
	// range is a sum of daily uniques.
	Day Period = iota
	// Month: a salt per UTC month, so monthly uniques exist; a salt, and
	// so a link between a register and an address, lives a month instead
	// of a day: less private.
	Month
)

// ParsePeriod returns the period named s: "day" or "month".
func ParsePeriod(s string) (Period, error) {
	switch s {
	case "day":
		return Day, nil
	case "month":
		return Month, nil
	}
	return 0, fmt.Errorf("%q: must be \"day\" or \"month\"", s)
}

// String returns "day" or "month".
func (p Period) String() string {
	if p == Month {
		return "month"
	}
	return "day"
}

// Bounds returns the start and end (Unix seconds, UTC) of the period
// holding sec.
func (p Period) Bounds(sec int64) (start, end int64) {
	if p == Month {
		y, m, _ := time.Unix(sec, 0).UTC().Date()
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC).Unix()
	}
	start = sec - ((sec%86400)+86400)%86400
	return start, start + 86400
}

// ID names the period starting at start: "day:20261125" or
// "month:202611", the _id of its salt.
func (p Period) ID(start int64) string {
	layout := "20060102"
	if p == Month {
		layout = "200601"
	}
	return p.String() + ":" + time.Unix(start, 0).UTC().Format(layout)
}
