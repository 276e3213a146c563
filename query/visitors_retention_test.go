package query

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/visitor"
)

// Visitors documents have the retention of the level of their salt
// period: a day step (day-salted documents) is refused past the daily
// retention, a month step past that of the configured salt period's
// documents, and a month step that meets documents of the other salt
// period (salt_period changed) past theirs. A coarser step is not
// suggested: it reads the same documents.
func TestVisitorsRetention(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	coll := db.Collection(bucket.DefaultVisitorCollection)
	ctx := context.Background()
	now := utc("2026-11-23T15:04:05Z")
	r := &Reader{DB: db, Retention: bucket.Retention{Daily: 30 * 24 * time.Hour}, Clock: clock.NewFake(now)}
	// v.test had daily salts until October, monthly ones since November.
	putVisitors(t, coll, visitor.Day, utc("2026-10-20T00:00:00Z"), "v.test", 0, 10, false)
	putVisitors(t, coll, visitor.Month, utc("2026-11-01T00:00:00Z"), "v.test", 0, 10, false)
	// m.test has had monthly salts since August.
	putVisitors(t, coll, visitor.Month, utc("2026-08-01T00:00:00Z"), "m.test", 0, 10, false)

	refused := func(name string, req Request, level, docs, cutoff string) {
		t.Helper()
		req.Measures = []Measure{Visitors}
		_, err := r.Visitors(ctx, req)
		var re *RetentionError
		if !errors.As(err, &re) || re.Level != level || !re.Cutoff.Equal(utc(cutoff)) || !strings.HasPrefix(err.Error(), docs+" are kept for ") ||
			strings.Contains(err.Error(), "use -step") {
			t.Errorf("%s: %v, want %s kept from %s (%s)", name, err, docs, cutoff, level)
		}
	}
	answered := func(name string, req Request, estimate bool) {
		t.Helper()
		req.Measures = []Measure{Visitors}
		res, err := r.Visitors(ctx, req)
		if err != nil || estimate != (res.Total().Estimate > 0) {
			t.Errorf("%s: %+v, %v", name, res, err)
		}
	}
	oct := utc("2026-10-01T00:00:00Z")
	// The first day kept whole is 10-25 (10-24 expires within the day).
	refused("day step", Request{Site: "v.test", From: oct, To: now, Step: Day}, "daily", "day-salted visitors documents", "2026-10-25T00:00:00Z")
	answered("day step, days kept", Request{Site: "v.test", From: utc("2026-10-25T00:00:00Z"), To: utc("2026-11-01T00:00:00Z"), Step: Day}, false)
	// Daily salts configured: a month step sums day documents.
	refused("month step, daily salts", Request{Site: "v.test", From: oct, To: now, Step: Month}, "daily", "day-salted visitors documents", "2026-11-01T00:00:00Z")
	// Monthly salts configured (kept): October's day documents are met.
	r.SaltPeriod = visitor.Month
	refused("month step, monthly salts, October daily", Request{Site: "v.test", From: oct, To: now, Step: Month}, "daily", "day-salted visitors documents", "2026-11-01T00:00:00Z")
	answered("month step, monthly salts, November", Request{Site: "v.test", From: utc("2026-11-01T00:00:00Z"), To: now, Step: Month}, true)
	answered("month step, monthly salts since August", Request{Site: "m.test", From: utc("2026-07-01T00:00:00Z"), To: now, Step: Month}, true)
	// The monthly retention: 60 days keep the months from October on.
	r.Retention.Monthly = 60 * 24 * time.Hour
	refused("month step, monthly retention", Request{Site: "m.test", From: utc("2026-08-01T00:00:00Z"), To: now, Step: Month}, "monthly", "month-salted visitors documents", "2026-10-01T00:00:00Z")
	// Retention 0 keeps them: the day step of 2026-10-20 is answered.
	r.Retention = bucket.Retention{}
	answered("daily retention 0", Request{Site: "v.test", From: utc("2026-10-20T00:00:00Z"), To: utc("2026-10-21T00:00:00Z"), Step: Day}, true)
}
