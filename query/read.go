package query

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/logtally/logtally/bucket"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// read reads the cheapest level that answers req's step into acc.
func (r *Reader) read(ctx context.Context, req Request, acc *accumulator) error {
	switch req.Step.level() {
	case bucket.Minute:
		return r.readMinutes(ctx, req, acc)
	case bucket.Daily:
		return r.readDaily(ctx, req, acc)
	}
	return r.readMonthly(ctx, req, acc)
}

// level is the bucket level that answers step s: minute buckets for
// minutes, daily buckets for hours and days, monthly buckets for months.
func (s Step) level() bucket.Level {
	switch s {
	case Minute:
		return bucket.Minute
	case Hour, Day:
		return bucket.Daily
	}
	return bucket.Monthly
}

// accumulator adds bucket counts to a result's series.
type accumulator struct {
	res   *Result
	pages map[string]*Series
	// totals, when not nil, is all that is kept: each page's total
	// (the ranking pass of a Top over MaxCells).
	totals map[string]int64
	// only, when not nil, are the pages kept; the others are skipped.
	only map[string]bool
	// tooLarge is set when one more page would pass MaxCells; reading
	// stops then.
	tooLarge *TooLargeError
}

func (a *accumulator) series(page string) *Series {
	s := a.pages[page]
	if s == nil {
		if n := len(a.res.Times); (len(a.pages)+1)*n > MaxCells {
			a.tooLarge = &TooLargeError{Pages: len(a.pages) + 1, Steps: n, Step: a.res.Request.Step}
			return nil
		}
		s = &Series{Page: page, Counts: make([]int64, len(a.res.Times))}
		a.pages[page] = s
	}
	return s
}

// add counts n views of page in the step holding t; t outside the range is
// ignored. It returns false when the result would pass MaxCells: reading
// should stop.
func (a *accumulator) add(page string, t time.Time, n int64) bool {
	req := a.res.Request
	t = t.UTC()
	if t.Before(req.From) || !t.Before(req.To) {
		return true
	}
	if a.totals != nil {
		a.totals[page] += n
		return true
	}
	if n == 0 || a.only != nil && !a.only[page] {
		return true // a zero-filled bucket adds nothing
	}
	s := a.series(page)
	if s == nil {
		return false
	}
	s.Counts[req.Step.index(req.From, req.Step.Truncate(t))] += n
	s.Total += n
	return true
}

// each runs fn on every document of level l's collection matching f,
// with projection proj, until fn returns false.
func (r *Reader) each(ctx context.Context, l bucket.Level, f, proj bson.D, fn func(*bucket.Read) bool) error {
	coll := r.DB.Collection(r.Collections.Name(l))
	cur, err := coll.Find(ctx, f, options.Find().SetProjection(proj))
	if err != nil {
		return fmt.Errorf("read %s: %w", coll.Name(), err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var d bucket.Read
		if err := l.Decode(cur.Current, &d); err != nil {
			return fmt.Errorf("read %s: %w", coll.Name(), err)
		}
		if !fn(&d) {
			return nil
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("read %s: %w", coll.Name(), err)
	}
	return nil
}

// projection returns the projection of l's page, date and fields.
func projection(l bucket.Level, fields ...string) bson.D {
	proj := bson.D{{Key: bucket.FieldID, Value: 0}, {Key: l.PageField(), Value: 1}, {Key: l.TimeField(), Value: 1}}
	for _, f := range fields {
		proj = append(proj, bson.E{Key: f, Value: 1})
	}
	return proj
}

// readMinutes reads the minute buckets of the range: their totals.
func (r *Reader) readMinutes(ctx context.Context, req Request, acc *accumulator) error {
	l := bucket.Minute
	f := l.Range(req.Site, req.Page, req.From, req.To)
	return r.each(ctx, l, f, projection(l, l.TotalField()), func(d *bucket.Read) bool {
		return acc.add(d.Page, d.Start, d.Total)
	})
}

// hourly is the daily buckets' family of hourly counters.
const hourly = "hourly"

// readDaily reads the daily buckets of the days the range touches: their
// hourly counters for an hour step, their totals for a day step. One
// page's day is one document.
func (r *Reader) readDaily(ctx context.Context, req Request, acc *accumulator) error {
	l := bucket.Daily
	f := l.Range(req.Site, req.Page, Day.Truncate(req.From), req.To)
	proj := projection(l, l.TotalField())
	if req.Step == Hour {
		proj = projection(l, hourly)
	}
	return r.each(ctx, l, f, proj, func(d *bucket.Read) bool {
		day := d.Start.UTC()
		if req.Step == Day {
			return acc.add(d.Page, day, d.Total)
		}
		for h, n := range d.Counters[hourly] {
			hour, err := strconv.Atoi(h)
			if err != nil || hour < 0 || hour > 23 || n == 0 {
				continue
			}
			if !acc.add(d.Page, day.Add(time.Duration(hour)*time.Hour), n) {
				return false
			}
		}
		return true
	})
}

// readMonthly reads the monthly buckets of the range: their totals.
func (r *Reader) readMonthly(ctx context.Context, req Request, acc *accumulator) error {
	l := bucket.Monthly
	f := l.Range(req.Site, req.Page, req.From, req.To)
	return r.each(ctx, l, f, projection(l, l.TotalField()), func(d *bucket.Read) bool {
		return acc.add(d.Page, d.Start, d.Total)
	})
}

// exists returns nil if site (and page, if not empty) has a bucket in any
// collection, else ErrUnknownSite or ErrUnknownPage. The monthly
// collection, kept longest and smallest, is asked first.
func (r *Reader) exists(ctx context.Context, site, page string) error {
	found := func(site, page string) (bool, error) {
		for _, l := range []bucket.Level{bucket.Monthly, bucket.Daily, bucket.Minute} {
			f := bson.D{{Key: l.SiteField(), Value: site}}
			if page != "" {
				f = append(f, bson.E{Key: l.PageField(), Value: page})
			}
			name := r.Collections.Name(l)
			err := r.DB.Collection(name).FindOne(ctx, f, options.FindOne().SetProjection(bson.D{{Key: bucket.FieldID, Value: 1}})).Err()
			if err == nil {
				return true, nil
			}
			if !errors.Is(err, mongo.ErrNoDocuments) {
				return false, fmt.Errorf("read %s: %w", name, err)
			}
		}
		return false, nil
	}
	if page != "" {
		ok, err := found(site, page)
		if err != nil || ok {
			return err
		}
	}
	ok, err := found(site, "")
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%w %q: no bucket in %s, %s or %s", ErrUnknownSite, site,
			r.Collections.Name(bucket.Minute), r.Collections.Name(bucket.Daily), r.Collections.Name(bucket.Monthly))
	case page != "":
		return fmt.Errorf("%w %q of site %q: the site has buckets, this page none (pages are paths without the query string, after the source's page rules)",
			ErrUnknownPage, page, site)
	}
	return nil
}
