package period

import (
	"fmt"
	"strconv"
	"time"
)

// Unit is a length of UTC calendar time: a minute, an hour, a day or a
// month. The zero Unit is none; its methods treat it as Month, as they do
// any value past Month.
type Unit uint8

// The units, from the finest.
const (
	Minute Unit = iota + 1
	Hour
	Day
	Month
)

// Parse returns the unit named s: "minute", "hour", "day" or "month".
func Parse(s string) (Unit, error) {
	for u := Minute; u <= Month; u++ {
		if s == u.String() {
			return u, nil
		}
	}
	return 0, fmt.Errorf("%q: must be minute, hour, day or month", s)
}

// String returns "minute", "hour", "day" or "month".
func (u Unit) String() string {
	switch u {
	case Minute:
		return "minute"
	case Hour:
		return "hour"
	case Day:
		return "day"
	case Month:
		return "month"
	}
	return "unit(" + strconv.Itoa(int(u)) + ")"
}

// fixed returns the length in seconds of u, 0 for a month.
func (u Unit) fixed() int64 {
	switch u {
	case Minute:
		return 60
	case Hour:
		return 3600
	case Day:
		return 86400
	}
	return 0
}

// Bounds returns the start and end (Unix seconds) of the u period holding
// sec: start <= sec < end.
func (u Unit) Bounds(sec int64) (start, end int64) {
	if n := u.fixed(); n != 0 {
		r := sec % n
		if r < 0 {
			r += n
		}
		return sec - r, sec - r + n
	}
	y, m, _ := time.Unix(sec, 0).UTC().Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Unix(),
		time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC).Unix()
}

// Truncate returns the start of the u period holding t, in UTC.
func (u Unit) Truncate(t time.Time) time.Time {
	start, _ := u.Bounds(t.Unix())
	return time.Unix(start, 0).UTC()
}

// Next returns the start of the u period after the one holding t, in UTC.
func (u Unit) Next(t time.Time) time.Time {
	_, end := u.Bounds(t.Unix())
	return time.Unix(end, 0).UTC()
}

// Ceil returns the start of the first u period starting at or after t,
// in UTC.
func (u Unit) Ceil(t time.Time) time.Time {
	start := u.Truncate(t)
	if start.Before(t) {
		return u.Next(start)
	}
	return start
}

// Steps returns the number of whole u periods from from to to, both period
// starts (negative when to is before from). It counts in seconds, not with
// time.Duration, which saturates past 292 years.
func (u Unit) Steps(from, to time.Time) int {
	if n := u.fixed(); n != 0 {
		return int((to.Unix() - from.Unix()) / n)
	}
	fy, fm, _ := from.UTC().Date()
	ty, tm, _ := to.UTC().Date()
	return (ty-fy)*12 + int(tm-fm)
}

// Longest is the longest u period: 31 days for a month.
func (u Unit) Longest() time.Duration {
	if n := u.fixed(); n != 0 {
		return time.Duration(n) * time.Second
	}
	return 31 * 24 * time.Hour
}

// layout is the time part of a u period's id.
func (u Unit) layout() string {
	switch u {
	case Minute:
		return "200601021504"
	case Hour:
		return "2006010215"
	case Day:
		return "20060102"
	}
	return "200601"
}

// AppendID appends the id of the u period starting at start (Unix
// seconds): YYYYMMDDhhmm, YYYYMMDDhh, YYYYMMDD or YYYYMM, in UTC. The ids
// are part of stored _ids: they never change.
func (u Unit) AppendID(dst []byte, start int64) []byte {
	return time.Unix(start, 0).UTC().AppendFormat(dst, u.layout())
}

// ID returns the id of the u period starting at start (see AppendID).
func (u Unit) ID(start int64) string {
	return time.Unix(start, 0).UTC().Format(u.layout())
}

// ParseID returns the start of the u period whose id is id (AppendID),
// and false if id is not one.
func (u Unit) ParseID(id string) (int64, bool) {
	t, err := time.Parse(u.layout(), id)
	if err != nil {
		return 0, false
	}
	return t.Unix(), true
}

// Expires returns when the u period holding sec expires with keep: keep
// after its end. The one retention rule: a bucket is kept its level's
// retention past the end of its period, a salt its grace past the end of
// its salt period, a visitor sketch a day past the end of its period.
func (u Unit) Expires(sec int64, keep time.Duration) time.Time {
	_, end := u.Bounds(sec)
	return time.Unix(end, 0).UTC().Add(keep)
}

// Expired reports whether the u period holding sec has expired with keep
// at now (Expires).
func (u Unit) Expired(sec int64, keep time.Duration, now time.Time) bool {
	return !now.Before(u.Expires(sec, keep))
}

// Cutoff returns the start of the oldest u period not expired with keep at
// now: every period starting before it has expired (Expired), none
// starting at or after it has. A period's end is at most now minus keep
// exactly when it starts before the start of the period holding now minus
// keep.
func (u Unit) Cutoff(now time.Time, keep time.Duration) time.Time {
	return u.Truncate(now.Add(-keep))
}
