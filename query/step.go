package query

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Step is the width of one point of a result: a minute, an hour, a day or a
// month. Steps are aligned to UTC, as the buckets are.
type Step int

// The steps, from the finest.
const (
	Minute Step = iota + 1
	Hour
	Day
	Month
)

// ParseStep parses "minute", "hour", "day" or "month".
func ParseStep(s string) (Step, error) {
	switch s {
	case "minute":
		return Minute, nil
	case "hour":
		return Hour, nil
	case "day":
		return Day, nil
	case "month":
		return Month, nil
	}
	return 0, badRequest("step %q: must be minute, hour, day or month", s)
}

// String returns the step's name as ParseStep takes it.
func (s Step) String() string {
	switch s {
	case Minute:
		return "minute"
	case Hour:
		return "hour"
	case Day:
		return "day"
	case Month:
		return "month"
	}
	return "step(" + strconv.Itoa(int(s)) + ")"
}

// Truncate returns the start of the step holding t, in UTC.
func (s Step) Truncate(t time.Time) time.Time {
	t = t.UTC()
	switch s {
	case Minute:
		return t.Truncate(time.Minute)
	case Hour:
		return t.Truncate(time.Hour)
	case Day:
		y, m, d := t.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	default:
		y, m, _ := t.Date()
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	}
}

// Next returns the start of the step after the one starting at t (UTC).
func (s Step) Next(t time.Time) time.Time {
	switch s {
	case Minute:
		return t.Add(time.Minute)
	case Hour:
		return t.Add(time.Hour)
	case Day:
		return t.AddDate(0, 0, 1)
	default:
		return t.AddDate(0, 1, 0)
	}
}

// Ceil returns the start of the first step that starts at or after t.
func (s Step) Ceil(t time.Time) time.Time {
	start := s.Truncate(t)
	if start.Before(t) {
		return s.Next(start)
	}
	return start
}

// index returns the number of whole steps from from to t, both step starts.
// It counts in seconds, not with time.Duration, which saturates past 292
// years.
func (s Step) index(from, t time.Time) int {
	secs := t.Unix() - from.Unix()
	switch s {
	case Minute:
		return int(secs / 60)
	case Hour:
		return int(secs / 3600)
	case Day:
		return int(secs / 86400)
	default:
		fy, fm, _ := from.Date()
		ty, tm, _ := t.Date()
		return (ty-fy)*12 + int(tm-fm)
	}
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
