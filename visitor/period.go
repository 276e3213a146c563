package visitor

import (
	"fmt"

	"github.com/logtally/logtally/period"
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

// Unit returns the calendar unit of p: period.Day or period.Month. Every
// bound, id and expiry of a salt period is that unit's.
func (p Period) Unit() period.Unit {
	if p == Month {
		return period.Month
	}
	return period.Day
}

// String returns "day" or "month".
func (p Period) String() string { return p.Unit().String() }

// Bounds returns the start and end (Unix seconds, UTC) of the period
// holding sec.
func (p Period) Bounds(sec int64) (start, end int64) { return p.Unit().Bounds(sec) }

// ID names the period starting at start: "day:20261125" or
// "month:202611", the _id of its salt.
func (p Period) ID(start int64) string { return p.String() + ":" + p.Unit().ID(start) }

// ParseID returns the start of the period p names id (ID), and false if
// id names none of p's.
func (p Period) ParseID(id string) (int64, bool) {
	prefix := p.String() + ":"
	if len(id) <= len(prefix) || id[:len(prefix)] != prefix {
		return 0, false
	}
	return p.Unit().ParseID(id[len(prefix):])
}
