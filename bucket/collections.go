package bucket

import (
	"cmp"
	"time"
)

// Default collection names.
const (
	// DefaultMinuteCollection is the collection of the per-minute buckets.
	DefaultMinuteCollection = "minutes"
	// DefaultDailyCollection is the collection of the per-day buckets.
	DefaultDailyCollection = "daily"
	// DefaultMonthlyCollection is the collection of the per-month buckets.
	DefaultMonthlyCollection = "monthly"
)

// Collections names the three bucket collections ([buckets] minute,
// daily, monthly in the config). An empty name gets its default:
// DefaultMinuteCollection, DefaultDailyCollection,
// DefaultMonthlyCollection.
type Collections struct {
	// Minute holds the per-minute buckets.
	Minute string
	// Daily holds the per-day buckets.
	Daily string
	// Monthly holds the per-month buckets.
	Monthly string
	// Sites holds the sites' daily totals (DefaultSiteCollection).
	Sites string
	// Visitors holds the visitor registers (DefaultVisitorCollection).
	Visitors string
}

// VisitorName returns the visitors' collection, its default if empty.
func (c Collections) VisitorName() string { return cmp.Or(c.Visitors, DefaultVisitorCollection) }

// SiteName returns the sites' collection, its default if empty.
func (c Collections) SiteName() string { return cmp.Or(c.Sites, DefaultSiteCollection) }

// Name returns the collection of level l, its default if empty.
func (c Collections) Name(l Level) string {
	switch l {
	case Minute:
		return cmp.Or(c.Minute, DefaultMinuteCollection)
	case Daily:
		return cmp.Or(c.Daily, DefaultDailyCollection)
	}
	return cmp.Or(c.Monthly, DefaultMonthlyCollection)
}

// Retention is how long each level's buckets are kept after the end of
// their period (the minute, day or month they count); 0 keeps them
// ([buckets] minute_retention, daily_retention, monthly_retention).
type Retention struct {
	// Minute is the retention of the minute buckets.
	Minute time.Duration
	// Daily is the retention of the daily buckets.
	Daily time.Duration
	// Monthly is the retention of the monthly buckets.
	Monthly time.Duration
}

// Of returns level l's retention.
func (r Retention) Of(l Level) time.Duration {
	switch l {
	case Minute:
		return r.Minute
	case Daily:
		return r.Daily
	}
	return r.Monthly
}

// Key returns the config key of level l's retention.
func (Retention) Key(l Level) string { return l.String() + "_retention" }

// Expired reports whether the l bucket holding sec (Unix seconds) has
// expired at now: its period ended at least the retention ago
// (period.Unit.Expired, the one retention rule). A retention of 0 never
// expires.
func (r Retention) Expired(l Level, sec int64, now time.Time) bool {
	keep := r.Of(l)
	return keep > 0 && l.Unit().Expired(sec, keep, now)
}

// Cutoff returns the start of the oldest l bucket still kept at now
// (period.Unit.Cutoff): every bucket starting before it has expired
// (Expired), none starting at or after it has. It is zero when the
// retention is 0.
func (r Retention) Cutoff(l Level, now time.Time) time.Time {
	keep := r.Of(l)
	if keep <= 0 {
		return time.Time{}
	}
	return l.Unit().Cutoff(now, keep)
}

// TTLSeconds is the expireAfterSeconds of a TTL index on l's TimeField
// for its retention: a TTL counts from the period's start, so the longest
// period is added. A bucket is deleted the retention after its period's
// end at the earliest (a 28-day month's bucket 3 days later than that).
func (r Retention) TTLSeconds(l Level) int32 {
	return int32(min((r.Of(l)+l.Unit().Longest())/time.Second, 1<<31-1))
}
