package query

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/logtally/logtally/period"
)

// Step is the width of one point of a result: a minute, an hour, a day or a
// month, aligned to UTC as the buckets are: a period.Unit, whose Truncate,
// Next, Ceil and Steps cut the ranges.
type Step = period.Unit

// The steps, from the finest.
const (
	Minute = period.Minute
	Hour   = period.Hour
	Day    = period.Day
	Month  = period.Month
)

// ParseStep parses "minute", "hour", "day" or "month".
func ParseStep(s string) (Step, error) {
	st, err := period.Parse(s)
	if err != nil {
		return 0, badRequest("step %q: must be minute, hour, day or month", s)
	}
	return st, nil
}

var relative = regexp.MustCompile(`^-([0-9]+)d$`)

// ParseTime parses a -from or -to value: "now"; "-" and a duration before
// now ("-2h", "-90m", "-7d"); RFC 3339 ("2026-11-23T10:00:00Z",
// "2026-11-23T11:00:00+01:00"); or, in loc, "2026-11-23T10:00",
// "2026-11-23 10:00", a date "2026-11-23" (its midnight) or a month
// "2026-11" (its first midnight).
func ParseTime(s string, now time.Time, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if loc == nil {
		loc = time.UTC
	}
	switch {
	case s == "now":
		return now, nil
	case strings.HasPrefix(s, "-"):
		if m := relative.FindStringSubmatch(s); m != nil {
			days, err := strconv.Atoi(m[1])
			if err == nil && days <= 100000 {
				return now.AddDate(0, 0, -days), nil
			}
		} else if d, err := time.ParseDuration(s[1:]); err == nil && d >= 0 {
			return now.Add(-d), nil
		}
		return time.Time{}, badRequest("time %q: a relative time is - and a duration, such as -2h, -90m or -7d", s)
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02", "2006-01"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, badRequest("time %q: want RFC 3339 (2026-11-23T10:00:00Z), a date (2026-11-23), now, or -2h", s)
}
