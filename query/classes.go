package query

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/measure"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Classes is the views of a site, or of one page, over a range by the
// class of their user agent (package botclass).
type Classes struct {
	// Request is the request answered, its range aligned to whole days
	// (or months).
	Request Request
	// Views are all the views of the range.
	Views int64
	// Counts are the views of each class, by botclass.Class: people
	// (Views minus the bot classes) first.
	Counts [botclass.NumClasses]int64
	// Collection is where they were read: the sites' daily totals for a
	// site, the monthly buckets for a page.
	Collection string
}

// botMeasures are the stored measures of the bot classes, by class
// (index 0, people, unused).
var botMeasures = func() (ms [botclass.NumClasses]measure.Index) {
	for c := botclass.Person + 1; c < botclass.NumClasses; c++ {
		ms[c], _ = measure.Bot(c)
	}
	return ms
}()

// CheckClasses validates a Classes request without reading anything, as
// Check does: the step must be a day or a month (the classes are kept
// per day), without Top or measures. A page's classes are read from the
// monthly buckets and so checked against their retention; a site's come
// from the sites' daily totals, checked against theirs (the daily
// buckets', bucket.SiteLevel).
func (r *Reader) CheckClasses(req Request) (Request, error) {
	if req.Top > 0 {
		return req, badRequest("top ranks the pages of a site; the bot classes are counted for the site or one page")
	}
	req, err := dailyViews(req, "the bot classes are", "them")
	if err != nil {
		return req, err
	}
	if req.Page == "" {
		return req, r.checkRetention(req, bucket.SiteLevel, "site totals")
	}
	return req, r.checkRetention(req, bucket.Monthly)
}

// dailyViews checks a request of counts kept per site (or page) and day
// in views alone, the bot classes' and the dimensions': a step finer than
// a day or a measure other than views is refused, then checkRequest's
// rules apply. what names the counts ("the bot classes are"), them the
// pronoun.
func dailyViews(req Request, what, them string) (Request, error) {
	switch {
	case req.Step == Minute || req.Step == Hour:
		return req, badRequest("%s counted per day: step %s: use day or month", what, req.Step)
	case !req.viewsOnly():
		return req, badRequest("%s counted in views; no other measure goes with %s", what, them)
	}
	return checkRequest(req)
}

// Classes answers req with the views of each class over its range: from
// the sites collection (one document per site and day: no page's bucket
// is read) without a page, from the page's monthly buckets (their daily
// measures) and its entries in the monthly tails with one. A site or
// page without any bucket (or tail entry) is ErrUnknownSite or
// ErrUnknownPage.
func (r *Reader) Classes(ctx context.Context, req Request) (*Classes, error) {
	req, err := r.CheckClasses(req)
	if err != nil {
		return nil, err
	}
	c := &Classes{Request: req}
	var found bool
	var bots [botclass.NumClasses]int64
	if req.Page == "" {
		c.Collection = r.Collections.SiteName()
		found, err = r.readSiteClasses(ctx, req, &c.Views, &bots)
	} else {
		c.Collection = r.Collections.Name(bucket.Monthly)
		found, err = r.readPageClasses(ctx, req, &c.Views, &bots)
	}
	if err != nil {
		return nil, err
	}
	if !found {
		if err := r.exists(ctx, req.Site, req.Page); err != nil {
			return nil, err
		}
	}
	var sum int64
	for cl := botclass.Person + 1; cl < botclass.NumClasses; cl++ {
		c.Counts[cl] = bots[cl]
		sum += bots[cl]
	}
	c.Counts[botclass.Person] = c.Views - min(sum, c.Views)
	return c, nil
}

// readSiteClasses adds the views and bot classes of req's site's days to
// views and bots. It reports whether a document was found.
func (r *Reader) readSiteClasses(ctx context.Context, req Request, views *int64, bots *[botclass.NumClasses]int64) (bool, error) {
	coll := r.DB.Collection(r.Collections.SiteName())
	f := siteDays(req)
	proj := bson.D{{Key: bucket.FieldID, Value: 1}, {Key: bucket.FieldViews, Value: 1}}
	for _, m := range botMeasures[1:] {
		proj = append(proj, bson.E{Key: bucket.SiteMeasurePath(m), Value: 1})
	}
	cur, err := coll.Find(ctx, f, options.Find().SetProjection(proj))
	if err != nil {
		return false, fmt.Errorf("read %s: %w", coll.Name(), err)
	}
	defer cur.Close(ctx)
	found := false
	for cur.Next(ctx) {
		found = true
		id, _ := cur.Current.Lookup(bucket.FieldID).StringValueOK()
		if v, err := cur.Current.LookupErr(bucket.FieldViews); err == nil {
			n, err := intValue(v)
			if err != nil {
				return false, fmt.Errorf("read %s: %s: %s: %w", coll.Name(), id, bucket.FieldViews, err)
			}
			*views += n
		}
		slots, err := readSlots(cur.Current, botMeasures[1:])
		if err != nil {
			return false, fmt.Errorf("read %s: %s: %w", coll.Name(), id, err)
		}
		if sv := slots[""]; sv != nil {
			for cl := botclass.Person + 1; cl < botclass.NumClasses; cl++ {
				bots[cl] += sv[botMeasures[cl]]
			}
		}
	}
	if err := cur.Err(); err != nil {
		return false, fmt.Errorf("read %s: %w", coll.Name(), err)
	}
	return found, nil
}

// siteDays is the find filter of req's site's days in its range, in the
// sites collection.
func siteDays(req Request) bson.D {
	return bson.D{
		{Key: bucket.FieldMetadata + "." + bucket.FieldSite, Value: req.Site},
		{Key: bucket.FieldMetadata + "." + bucket.FieldDate, Value: bson.D{
			{Key: "$gte", Value: bson.NewDateTimeFromTime(req.From)},
			{Key: "$lt", Value: bson.NewDateTimeFromTime(req.To)},
		}},
	}
}

// readPageClasses adds the views and bot classes of req's page's days
// (the monthly buckets' daily counters and measures, and the page's
// cells in the monthly tails) to views and bots. It reports whether a
// bucket or a tail's entry was found.
func (r *Reader) readPageClasses(ctx context.Context, req Request, views *int64, bots *[botclass.NumClasses]int64) (bool, error) {
	l := bucket.Monthly
	f, proj := pageFind(l, req.Site, req.Page, Month.Truncate(req.From), req.To, projection(l, botMeasures[1:], daily))
	found := false
	from, to := req.From.Unix(), req.To.Unix()
	// The page's entries in the tails: a cell per day.
	tail := func(c *bucket.TailCell) bool {
		found = true
		if c.From >= from && c.From < to {
			*views += int64(c.V[measure.Views])
			for cl := botclass.Person + 1; cl < botclass.NumClasses; cl++ {
				bots[cl] += int64(c.V[botMeasures[cl]])
			}
		}
		return true
	}
	err := r.each(ctx, l, req.Page, f, proj, func(d *bucket.Read, raw bson.Raw) (bool, error) {
		found = true
		slots, err := readSlots(raw, botMeasures[1:])
		if err != nil {
			return false, err
		}
		month := d.Start.UTC()
		forDays(month, func(t time.Time, key string) bool {
			if t.Before(req.From) || !t.Before(req.To) {
				return true
			}
			*views += d.Counters[daily][key]
			if sv := slots[key]; sv != nil {
				for cl := botclass.Person + 1; cl < botclass.NumClasses; cl++ {
					bots[cl] += sv[botMeasures[cl]]
				}
			}
			return true
		})
		return true, nil
	}, tail)
	return found, err
}

// Share returns class cl's share of the views, in percent rounded to 2
// decimals (0 without views).
func (c *Classes) Share(cl botclass.Class) float64 {
	if c.Views == 0 {
		return 0
	}
	return round(100*float64(c.Counts[cl])/float64(c.Views), 2)
}

// ClassFormats are the formats WriteClasses takes.
var ClassFormats = []string{"table", "csv", "json"}

// WriteClasses writes c to w in format: "table" (class, views, share in
// percent, a total line, then the range and where it was read), "csv"
// (header class,views,share_percent; one line per class) or "json" (an
// array of {class, views, share_percent}). The classes are people,
// search, ai, tool, bot and suspect, in that order.
func WriteClasses(w io.Writer, c *Classes, format string, opts Options) error {
	type row struct {
		Class        string  `json:"class"`
		Views        int64   `json:"views"`
		SharePercent float64 `json:"share_percent"`
	}
	rows := make([]row, botclass.NumClasses)
	records := [][]string{{"class", "views", "share_percent"}}
	for cl := range botclass.NumClasses {
		rows[cl] = row{cl.String(), c.Counts[cl], c.Share(cl)}
		records = append(records, []string{cl.String(), strconv.FormatInt(c.Counts[cl], 10), strconv.FormatFloat(c.Share(cl), 'f', -1, 64)})
	}
	return writeShares(w, format, func(w io.Writer) error { return writeClassTable(w, c, withUTC(opts)) }, records, rows)
}

// writeShares writes a table of shares (the bot classes, a dimension's
// values) in format: "table" (table writes it), "csv" (records, the
// header first) or "json" (v encoded, indented).
func writeShares(w io.Writer, format string, table func(io.Writer) error, records [][]string, v any) error {
	var err error
	switch format {
	case "table":
		err = table(w)
	case "csv":
		cw := csv.NewWriter(w)
		cw.WriteAll(records)
		err = cw.Error()
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		err = enc.Encode(v)
	default:
		return badRequest("format %q: shares are written as %s", format, strings.Join(ClassFormats, ", "))
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", format, err)
	}
	return nil
}

// withUTC returns opts with UTC as its location when it has none.
func withUTC(opts Options) Options {
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	return opts
}

func writeClassTable(w io.Writer, c *Classes, opts Options) error {
	viewsW := max(len("views"), len(strconv.FormatInt(c.Views, 10)))
	bw := bufio.NewWriter(w)
	row := func(class, views, share string) {
		fmt.Fprintf(bw, "%-7s  %*s  %7s\n", class, viewsW, views, share)
	}
	row("class", "views", "share")
	for cl := range botclass.NumClasses {
		row(cl.String(), strconv.FormatInt(c.Counts[cl], 10), strconv.FormatFloat(c.Share(cl), 'f', 2, 64)+"%")
	}
	total := "100.00%"
	if c.Views == 0 {
		total = "0.00%"
	}
	row("total", strconv.FormatInt(c.Views, 10), total)
	req := c.Request
	last := req.Step.Truncate(req.To.Add(-time.Nanosecond))
	fmt.Fprintf(bw, "(site %s", req.Site)
	if req.Page != "" {
		fmt.Fprintf(bw, ", page %s", Shown(req.Page))
	}
	fmt.Fprintf(bw, ", %s to %s (%s), from %s; people are the views of no bot class)\n",
		Label(req.From, req.Step, opts.Location), Label(last, req.Step, opts.Location), zoneName(opts.Location), c.Collection)
	return bw.Flush()
}
