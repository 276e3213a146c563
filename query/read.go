package query

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/measure"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// read reads the level that answers req (Request.level) into acc.
func (r *Reader) read(ctx context.Context, req Request, acc *accumulator) error {
	switch req.level() {
	case bucket.Minute:
		return r.readMinutes(ctx, req, acc)
	case bucket.Daily:
		return r.readDaily(ctx, req, acc)
	}
	return r.readMonthly(ctx, req, acc)
}

// level is the bucket level that answers req: minute buckets for minutes,
// daily buckets for hours and for days of views alone, monthly buckets
// for months and for days with measures. Each level holds its measures at
// one grain (bucket.Level.MeasureSlots): per minute in the minute
// buckets, per hour in the daily buckets, per day in the monthly ones.
func (req *Request) level() bucket.Level {
	switch req.Step {
	case Minute:
		return bucket.Minute
	case Hour:
		return bucket.Daily
	case Day:
		if req.viewsOnly() {
			return bucket.Daily
		}
	}
	return bucket.Monthly
}

// errTail is a tail document that cannot be read; the details follow it
// in the message (escaped: they hold page names), so that the innermost
// cause, which the dashboard logs, names no page.
var errTail = errors.New("a tail document that cannot be read")

// each runs fn on every page bucket of level l's collection matching f,
// and tail on every cell of the tails among them
// (bucket.Level.DecodeTail), read with projection proj, until one returns
// false or an error; raw is the document as read. With page not empty,
// only page's cells are handed to tail (the projection, PageFind, reads
// no other). Plans hold no counts: they are skipped.
func (r *Reader) each(ctx context.Context, l bucket.Level, page string, f, proj bson.D, fn func(d *bucket.Read, raw bson.Raw) (bool, error), tail func(c *bucket.TailCell) bool) error {
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
		if bucket.IsMarker(d.Page) {
			if _, ok := bucket.TailShard(d.Page); !ok {
				continue // a plan
			}
			more := true
			err := l.DecodeTail(cur.Current, func(c *bucket.TailCell) {
				if more && (page == "" || c.Page == page) {
					more = tail(c)
				}
			})
			if err != nil {
				return fmt.Errorf("read %s: %s: %w: %s", coll.Name(), d.Page, errTail, Shown(err.Error()))
			}
			if !more {
				return nil
			}
			continue
		}
		more, err := fn(&d, cur.Current)
		if err != nil {
			return fmt.Errorf("read %s: %s: %w", coll.Name(), d.Page, err)
		}
		if !more {
			return nil
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("read %s: %w", coll.Name(), err)
	}
	return nil
}

// pageFind returns the find filter and projection of site's l buckets
// starting in [from, to), and the tails beside them: of every page
// (page ""), or of page alone, its bucket and its entries in the tails
// (bucket.Level.PageRange, projected on bucket.TailField). proj is the
// projection of the buckets' fields (projection).
func pageFind(l bucket.Level, site, page string, from, to time.Time, proj bson.D) (f, p bson.D) {
	tails := bucket.FieldPages
	if page != "" {
		tails = bucket.TailField(page)
	}
	return l.PageRange(site, page, from, to), append(proj, bson.E{Key: tails, Value: 1})
}

// cellValues returns the stored measures ms of a tail's cell, nil when
// ms is empty.
func cellValues(c *bucket.TailCell, ms []measure.Index) *slotValues {
	if len(ms) == 0 {
		return nil
	}
	var sv slotValues
	for _, m := range ms {
		sv[m] = int64(c.V[m])
	}
	return &sv
}

// addCell returns the tail function of each that adds a cell's views and
// the fields fs of its measures ms to acc, at the cell's start.
func addCell(acc *accumulator, fs *fieldSet, ms []measure.Index) func(c *bucket.TailCell) bool {
	return func(c *bucket.TailCell) bool {
		return acc.addWith(c.Page, time.Unix(c.From, 0), int64(c.V[measure.Views]), fs.values(cellValues(c, ms)))
	}
}

// projection returns the projection of l's page, date and fields, and
// of the stored measures ms (measures.<name>, every slot).
func projection(l bucket.Level, ms []measure.Index, fields ...string) bson.D {
	proj := bson.D{{Key: bucket.FieldID, Value: 0}, {Key: l.PageField(), Value: 1}, {Key: l.TimeField(), Value: 1}}
	for _, f := range fields {
		proj = append(proj, bson.E{Key: f, Value: 1})
	}
	for _, m := range ms {
		proj = append(proj, bson.E{Key: bucket.FieldMeasures + "." + m.Name(), Value: 1})
	}
	return proj
}

// slotValues are the stored measures of one measure slot of a bucket, by
// measure.Index.
type slotValues [measure.N]int64

// readSlots returns the stored measures ms of doc by slot: the key of
// the slot in measures.<name> ("13", the hour of a daily bucket; "25", the
// day of a monthly one), "" for the minute buckets' single values. A
// measure the document lacks (a bucket written before measures existed)
// is 0. Counts are int32 or int64 (the server widens an int32 that
// overflows), bytes and microseconds int64: both are read.
func readSlots(doc bson.Raw, ms []measure.Index) (map[string]*slotValues, error) {
	out := map[string]*slotValues{}
	at := func(key string) *slotValues {
		v := out[key]
		if v == nil {
			v = &slotValues{}
			out[key] = v
		}
		return v
	}
	for _, m := range ms {
		path := bucket.FieldMeasures + "." + m.Name()
		v, err := doc.LookupErr(bucket.FieldMeasures, m.Name())
		if err != nil {
			continue // absent
		}
		if sub, ok := v.DocumentOK(); ok {
			elems, err := sub.Elements()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			for _, e := range elems {
				n, err := intValue(e.Value())
				if err != nil {
					return nil, fmt.Errorf("%s.%s: %w", path, e.Key(), err)
				}
				at(e.Key())[m] = n
			}
			continue
		}
		n, err := intValue(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		at("")[m] = n
	}
	return out, nil
}

// intValue returns v, an int32 or int64.
func intValue(v bson.RawValue) (int64, error) {
	if n, ok := v.Int32OK(); ok {
		return int64(n), nil
	}
	if n, ok := v.Int64OK(); ok {
		return n, nil
	}
	return 0, fmt.Errorf("a %s, not an integer", v.Type)
}

// values returns the fields fs of the stored measures sv (nil: none).
func (fs *fieldSet) values(sv *slotValues) *[numFields]int64 {
	if sv == nil {
		return nil
	}
	var v [numFields]int64
	for _, f := range fs.list {
		for _, m := range fieldSources[f] {
			f.merge(&v[f], sv[m])
		}
	}
	return &v
}

// readMinutes reads the minute buckets of the range: their totals and
// measures.
func (r *Reader) readMinutes(ctx context.Context, req Request, acc *accumulator) error {
	l := bucket.Minute
	fs := acc.fields()
	ms := fs.sources()
	f, proj := pageFind(l, req.Site, req.Page, req.From, req.To, projection(l, ms, l.TotalField()))
	return r.each(ctx, l, req.Page, f, proj, func(d *bucket.Read, raw bson.Raw) (bool, error) {
		if len(ms) == 0 {
			return acc.add(d.Page, d.Start, d.Total), nil
		}
		slots, err := readSlots(raw, ms)
		if err != nil {
			return false, err
		}
		return acc.addWith(d.Page, d.Start, d.Total, fs.values(slots[""])), nil
	}, addCell(acc, fs, ms))
}

// hourly is the daily buckets' family of hourly counters; daily the
// monthly buckets' family of daily counters.
const (
	hourly = "hourly"
	daily  = "daily"
)

// readDaily reads the daily buckets of the days the range touches: their
// hourly counters and measures for an hour step, their totals for a day
// step (of views alone). One page's day is one document.
func (r *Reader) readDaily(ctx context.Context, req Request, acc *accumulator) error {
	l := bucket.Daily
	fs := acc.fields()
	ms := fs.sources()
	proj := projection(l, nil, l.TotalField())
	if req.Step == Hour {
		proj = projection(l, ms, hourly)
	}
	f, proj := pageFind(l, req.Site, req.Page, Day.Truncate(req.From), req.To, proj)
	return r.each(ctx, l, req.Page, f, proj, func(d *bucket.Read, raw bson.Raw) (bool, error) {
		day := d.Start.UTC()
		if req.Step == Day {
			return acc.add(d.Page, day, d.Total), nil
		}
		var slots map[string]*slotValues
		if len(ms) > 0 {
			var err error
			if slots, err = readSlots(raw, ms); err != nil {
				return false, err
			}
		}
		for hour := range 24 {
			key := strconv.Itoa(hour)
			n := d.Counters[hourly][key]
			if n == 0 && slots[key] == nil {
				continue
			}
			if !acc.addWith(d.Page, day.Add(time.Duration(hour)*time.Hour), n, fs.values(slots[key])) {
				return false, nil
			}
		}
		return true, nil
	}, addCell(acc, fs, ms))
}

// readMonthly reads the monthly buckets of the range: their totals and
// measures (summed over the days, maxima the greatest) for a month step;
// their daily counters and measures for a day step with measures.
func (r *Reader) readMonthly(ctx context.Context, req Request, acc *accumulator) error {
	l := bucket.Monthly
	fs := acc.fields()
	ms := fs.sources()
	if req.Step == Day {
		f, proj := pageFind(l, req.Site, req.Page, Month.Truncate(req.From), req.To, projection(l, ms, daily))
		return r.each(ctx, l, req.Page, f, proj, func(d *bucket.Read, raw bson.Raw) (bool, error) {
			slots, err := readSlots(raw, ms)
			if err != nil {
				return false, err
			}
			more := true
			forDays(d.Start.UTC(), func(t time.Time, key string) bool {
				n := d.Counters[daily][key]
				if n == 0 && slots[key] == nil {
					return true
				}
				more = acc.addWith(d.Page, t, n, fs.values(slots[key]))
				return more
			})
			return more, nil
		}, addCell(acc, fs, ms))
	}
	// A month's tail cells are its days: added at their start, they sum
	// into the month's step.
	f, proj := pageFind(l, req.Site, req.Page, req.From, req.To, projection(l, ms, l.TotalField()))
	return r.each(ctx, l, req.Page, f, proj, func(d *bucket.Read, raw bson.Raw) (bool, error) {
		if len(ms) == 0 {
			return acc.add(d.Page, d.Start, d.Total), nil
		}
		slots, err := readSlots(raw, ms)
		if err != nil {
			return false, err
		}
		var sum *[numFields]int64
		for _, sv := range slots {
			v := fs.values(sv)
			if sum == nil {
				sum = v
				continue
			}
			for _, f := range fs.list {
				f.merge(&sum[f], v[f])
			}
		}
		return acc.addWith(d.Page, d.Start, d.Total, sum), nil
	}, addCell(acc, fs, ms))
}

// exists returns nil if site (and page, if not empty) has a bucket in any
// collection, else ErrUnknownSite or ErrUnknownPage. The monthly
// collection, kept longest and smallest, is asked first.
func (r *Reader) exists(ctx context.Context, site, page string) error {
	found := func(site, page string) (bool, error) {
		for _, l := range []bucket.Level{bucket.Monthly, bucket.Daily, bucket.Minute} {
			f := bson.D{{Key: l.SiteField(), Value: site}}
			if page != "" { // its bucket, or its entry in a tail
				f = append(f, bson.E{Key: "$or", Value: bson.A{bson.D{{Key: l.PageField(), Value: page}}, l.HasEntry(page)}})
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
	if page != "" && !bucket.IsMarker(page) { // a tail's or plan's marker is no page
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

// forDays calls fn for each day of the month starting at month, with the
// day's start and its key in a monthly bucket's per-day fields ("1" to
// "31"), until fn returns false.
func forDays(month time.Time, fn func(t time.Time, key string) bool) {
	for day := 1; day <= 31; day++ {
		t := month.AddDate(0, 0, day-1)
		if t.Month() != month.Month() || !fn(t, strconv.Itoa(day)) {
			return
		}
	}
}

// Reads returns the collections the Reader reads (find and aggregate,
// nothing else): the minute, daily and monthly buckets, the sites and the
// visitors registers. A MongoDB user for query and serve needs find on
// these and nothing more; not the salts (with one and the registers a
// guessed address can be tested), nor the ledger or the leases.
func (r *Reader) Reads() []string {
	c := r.Collections
	return []string{c.Name(bucket.Minute), c.Name(bucket.Daily), c.Name(bucket.Monthly), c.SiteName(), c.VisitorName()}
}
