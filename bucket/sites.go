package bucket

import (
	"cmp"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/measure"
)

// Sites: one small document per site and day holding the site's views and
// measures of that day, so that "how much of my traffic is AI crawlers"
// reads one document per day instead of every page's buckets.

// DefaultSiteCollection is the collection of the per-site daily totals.
const DefaultSiteCollection = "sites"

// SiteLevel is the level whose retention the site totals have: like the
// daily buckets they count UTC days, so they are kept daily_retention
// past their day's end (Retention.Expired(SiteLevel, ...)), by the same
// expiry, and dated by metadata.date like them.
const SiteLevel = Daily

// FieldViews is the views of a site's day.
const FieldViews = "views"

// SiteID returns the _id of site's document of the day holding sec:
// "YYYYMMDD/<site>".
func SiteID(sec int64, site string) string {
	start, _ := Daily.Bounds(sec)
	return Daily.Unit().ID(start) + "/" + site
}

// SiteMeasurePath returns the dotted path of measure m in a site's
// document: FieldViews for measure.Views, "measures.<name>" for the others.
func SiteMeasurePath(m measure.Index) string {
	if m == measure.Views {
		return FieldViews
	}
	return FieldMeasures + "." + m.Name()
}

// sitePaths[m][0] is measure m's path in a site's document.
var sitePaths = func() (p [measure.N][]string) {
	for m := range measure.N {
		p[m] = []string{SiteMeasurePath(m)}
	}
	return p
}()

// SiteDoc is one site's day of a batch: the sums of its hits.
type SiteDoc struct {
	ID, Site string
	// Start is the day's start (Unix seconds, UTC).
	Start int64
	// V holds the day's views and measures.
	V measure.Vector
	// Dims are the day's hits by dimension value (sitesources.go).
	Dims [dims.N]map[string]uint64
	// Limit, when not 0, bounds the document's size (FieldSize) as a
	// tail's: an update with Dims applies only while the size with its
	// Growth stays within it (SiteSourcesLimit).
	Limit int64
	// Held, when not nil, reports the values the document is known to
	// hold already (its writer wrote them): they add no bytes (Growth).
	// Without it every value counts as new, and a day's size grows by
	// each batch's values.
	Held func(d dims.Dim, value string) bool
}

// AppendKey appends the SiteDoc's _id and shard-key fields
// (metadata.site, metadata.date) to f.
func (d *SiteDoc) AppendKey(f bson.D) bson.D {
	return append(f,
		bson.E{Key: FieldID, Value: d.ID},
		bson.E{Key: FieldMetadata + "." + FieldSite, Value: d.Site},
		bson.E{Key: FieldMetadata + "." + FieldDate, Value: bson.NewDateTimeFromTime(time.Unix(d.Start, 0).UTC())},
	)
}

// Update returns the guarded update of d, as Doc.Update: applied once per
// batch and writer.
func (d *SiteDoc) Update(g Guard) (filter, update bson.D) {
	filter = g.filter(d.AppendKey(make(bson.D, 0, 5)))
	inc := bson.D{{Key: FieldViews, Value: int64(d.V[measure.Views])}}
	inc = measureInc(inc, &sitePaths, 0, &d.V, false)
	if d.hasDims() {
		growth := d.Growth(g)
		inc = append(d.appendDims(inc), bson.E{Key: FieldSize, Value: growth})
		if d.Limit > 0 {
			filter = append(filter, d.dimsFilter(growth))
		}
	}
	return filter, guardedUpdate(inc, measureMax(nil, &sitePaths, 0, &d.V), g)
}

// Zero returns d's document zero-filled, with an empty applied map. Its
// counts are 64-bit: a site's day may exceed 2^31 hits.
func (d *SiteDoc) Zero() bson.D {
	ms := make(bson.D, 0, measure.N-1)
	for m := measure.Views + 1; m < measure.N; m++ {
		ms = append(ms, bson.E{Key: m.Name(), Value: zeroMeasure(m, false)})
	}
	return bson.D{
		{Key: FieldID, Value: d.ID},
		{Key: FieldMetadata, Value: bson.D{
			{Key: FieldDate, Value: bson.NewDateTimeFromTime(time.Unix(d.Start, 0).UTC())},
			{Key: FieldSite, Value: d.Site},
		}},
		{Key: FieldViews, Value: int64(0)},
		{Key: FieldMeasures, Value: ms},
		{Key: FieldApplied, Value: bson.D{}},
	}
}

// DocID returns d's _id.
func (d *SiteDoc) DocID() string { return d.ID }

// SiteIndex is the query index of the site collection: site, date.
func SiteIndex() bson.D {
	return bson.D{{Key: FieldMetadata + "." + FieldSite, Value: 1}, {Key: FieldMetadata + "." + FieldDate, Value: 1}}
}

// Sites sums a batch's hits per site and day. Unlike the page buckets,
// a site's day gathers keys that are not adjacent in key order (site,
// page, second), so it holds them in a map: one entry per site and day
// of the batch.
type Sites struct {
	m map[siteDay]*SiteDoc
	// Keep, when not 0, is the site totals' retention (SiteLevel's) and
	// Now the time it is judged at: the hits of a day expired at Now are
	// skipped and their views added to Dropped, as Grouper does.
	Keep    time.Duration
	Now     time.Time
	Dropped uint64
	// Limit is each day's Limit (SiteDoc.Limit).
	Limit int64
}

type siteDay struct {
	site  string
	start int64
}

// Add adds the hits v of site at sec.
func (s *Sites) Add(site []byte, sec int64, v *measure.Vector) {
	if s.Keep > 0 && SiteLevel.Unit().Expired(sec, s.Keep, s.Now) {
		s.Dropped += v[measure.Views] // the day is past its retention
		return
	}
	s.doc(site, sec).V.Merge(v)
}

// doc returns site's day holding sec, made on first use.
func (s *Sites) doc(site []byte, sec int64) *SiteDoc {
	start, _ := SiteLevel.Bounds(sec)
	d := s.m[siteDay{string(site), start}]
	if d == nil {
		if s.m == nil {
			s.m = map[siteDay]*SiteDoc{}
		}
		d = &SiteDoc{ID: SiteID(sec, string(site)), Site: string(site), Start: start, Limit: s.Limit}
		s.m[siteDay{d.Site, start}] = d
	}
	return d
}

// Docs returns the documents, by _id, and empties s.
func (s *Sites) Docs() []SiteDoc {
	out := make([]SiteDoc, 0, len(s.m))
	for _, d := range s.m {
		out = append(out, *d)
	}
	clear(s.m)
	slices.SortFunc(out, func(a, b SiteDoc) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
