package bucket

// Reading tails beside the page buckets: the filters that find a page's
// bucket with the tails that may hold its entries, and where a tail's
// counter would be in the page's own bucket. A reader's rule, written
// once: a page's counts are its bucket's (if any) plus its entries in
// the tails of the same level and period (any shard); always both, since
// an older logtally writes every page to its own bucket.

import (
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/measure"
)

// Page field ranges: a tail's marker is "~<digits>", so every one lies
// in ["~0", "~:"); a plan's is "~p", and every marker lies in ["~",
// "\x7f"). No page does: a page starts with "/" or is "(other)".
const (
	tailsFrom, tailsTo     = TailMarker + "0", TailMarker + ":"
	markersFrom, markersTo = TailMarker, "\x7f"
)

// TailField returns the path of page's entry in a tail,
// "pages.<PageKey(page)>": a projection on it reads that page's cells
// alone, and {TailField(page): {$exists: true}} finds the tails holding
// them.
func TailField(page string) string { return FieldPages + "." + PageKey(page) }

// timeRange is the filter term of the period starts in [from, to).
func (l Level) timeRange(from, to time.Time) bson.E {
	return bson.E{Key: l.TimeField(), Value: bson.D{
		{Key: "$gte", Value: bson.NewDateTimeFromTime(from)},
		{Key: "$lt", Value: bson.NewDateTimeFromTime(to)},
	}}
}

// tailPages is the page term of the tails (every shard), no plan.
func (l Level) tailPages() bson.D {
	return bson.D{{Key: l.PageField(), Value: bson.D{{Key: "$gte", Value: tailsFrom}, {Key: "$lt", Value: tailsTo}}}}
}

// PageRange returns the find filter of page's l bucket and the l tails
// of site holding an entry of it, starting in [from, to): {site, $or:
// [{page}, {page: tails' range, TailField(page): {$exists: true}}],
// time}, each term of the $or a range of the collection's index. The
// tails hold other pages' entries too: project the find on
// TailField(page). With page "" it is Range (every document of the site,
// tails and plans among them).
func (l Level) PageRange(site, page string, from, to time.Time) bson.D {
	if page == "" {
		return l.Range(site, "", from, to)
	}
	return bson.D{
		{Key: l.SiteField(), Value: site},
		{Key: "$or", Value: bson.A{bson.D{{Key: l.PageField(), Value: page}}, l.HasEntry(page)}},
		l.timeRange(from, to),
	}
}

// MarkerRange returns the find filter of site's l tails and plans
// starting in [from, to): no page bucket.
func (l Level) MarkerRange(site string, from, to time.Time) bson.D {
	return bson.D{
		{Key: l.SiteField(), Value: site},
		{Key: l.PageField(), Value: bson.D{{Key: "$gte", Value: markersFrom}, {Key: "$lt", Value: markersTo}}},
		l.timeRange(from, to),
	}
}

// BucketRange returns the find filter of site's l page buckets starting
// in [from, to): every document of Range but the tails and plans
// (MarkerRange), the page field outside the markers' range.
func (l Level) BucketRange(site string, from, to time.Time) bson.D {
	return bson.D{
		{Key: l.SiteField(), Value: site},
		{Key: "$or", Value: bson.A{
			bson.D{{Key: l.PageField(), Value: bson.D{{Key: "$lt", Value: markersFrom}}}},
			bson.D{{Key: l.PageField(), Value: bson.D{{Key: "$gte", Value: markersTo}}}},
		}},
		l.timeRange(from, to),
	}
}

// HasEntry returns the filter term of the l tails holding an entry of
// page: a tail's page field and TailField(page) present.
func (l Level) HasEntry(page string) bson.D {
	return append(l.tailPages(), bson.E{Key: TailField(page), Value: bson.D{{Key: "$exists", Value: true}}})
}

// MeasureSpan returns the slot of l's measure grain (MeasureSlots: the
// minute, an hour, a day) holding sec in the l bucket [start, end): the
// finest period a tail's cell counts.
func (l Level) MeasureSpan(start, end, sec int64) (from, to int64) {
	switch measureSlots[l] {
	case ByHour:
		from = sec - (sec-start)%3600
		return from, from + 3600
	case ByDay:
		from = sec - (sec-start)%86400
		return from, from + 86400
	}
	return start, end
}

// BucketPaths returns the counters of a page's l bucket starting at
// start that the counts of a tail's counter c (TailCounter) would be in,
// had the page been hot: for the views, the total and the family at the
// tail's grain ("totalViews"; "daily", "hourly.13"; "total", "daily.25");
// for a measure, its path (MeasurePath). The bucket's finer counters
// (seconds.N, minute.H.M) have no counterpart in a tail.
func (l Level) BucketPaths(start int64, c CounterInfo) []string {
	if c.Measure != measure.Views {
		return []string{l.MeasurePath(c.Measure, start, c.From)}
	}
	out := []string{shapes[l].total}
	if s := measureSlots[l]; s != Whole {
		for i := range shapes[l].families {
			if f := &shapes[l].families[i]; f.Slots == s {
				out = append(out, f.paths[s.index(c.From-start)])
			}
		}
	}
	return out
}

// Views returns the views an l document holds, whatever it is: a page
// bucket's total, a tail's cells' views (every page's), none for a plan.
// doc holds at least its page and date fields and its total or pages
// (read whole, say). Progress checks and tests sum a collection with it.
func (l Level) Views(doc bson.Raw) (int64, error) {
	var page string
	if v, err := doc.LookupErr(strings.Split(l.PageField(), ".")...); err == nil {
		page, _ = v.StringValueOK()
	}
	if IsMarker(page) {
		if _, ok := TailShard(page); !ok {
			return 0, nil // a plan
		}
		var n int64
		err := l.DecodeTail(doc, func(c *TailCell) { n += int64(c.V[measure.Views]) })
		return n, err
	}
	v, err := doc.LookupErr(shapes[l].total)
	if err != nil {
		return 0, nil // no total: none counted
	}
	n, ok := v.AsInt64OK()
	if !ok {
		return 0, fmt.Errorf("%s: a %s, not an integer", shapes[l].total, v.Type)
	}
	return n, nil
}
