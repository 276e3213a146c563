package bucket

import (
	"time"

	"github.com/logtally/logtally/measure"
)

// FieldMeasures is the sub-document holding a bucket's measures (every
// measure but Views, which the counter families hold): one field per
// measure, named by measure.Index.Name, at the level's measure grain
// (MeasureSlots).
const FieldMeasures = "measures"

// Whole is the slot kind of a measure a bucket holds once: the field is
// the counter.
const Whole Slots = ByDay + 1

// measureSlots is the grain of each level's measures: per minute in the
// minute bucket, per hour in the daily bucket, per day in the monthly
// bucket. The coarser grain keeps documents small: per-minute measures in
// a daily bucket would multiply its size.
var measureSlots = [Levels]Slots{Minute: Whole, Daily: ByHour, Monthly: ByDay}

// MeasureSlots returns how l's buckets divide their period for the
// measures.
func (l Level) MeasureSlots() Slots { return measureSlots[l] }

// measurePaths[l][m][slot] is the dotted path of measure m's slot in an l
// bucket, so an update allocates none.
var measurePaths [Levels][measure.N][]string

func init() {
	for l := range Level(Levels) {
		for m := measure.Views + 1; m < measure.N; m++ {
			field := FieldMeasures + "." + m.Name()
			if measureSlots[l] == Whole {
				measurePaths[l][m] = []string{field}
				continue
			}
			measurePaths[l][m] = measureSlots[l].paths(field)
		}
	}
}

// MeasurePath returns the dotted path of measure m (not measure.Views)
// that a hit at sec adds to in the l bucket starting at start:
// "measures.bytes" (minute), "measures.status_2xx.13" (daily, hour 13),
// "measures.bot_ai.25" (monthly, day 25).
func (l Level) MeasurePath(m measure.Index, start, sec int64) string {
	return measurePaths[l][m][measureSlots[l].measureIndex(sec-start)]
}

// measureIndex is index for the measure grains (Whole: 0).
func (s Slots) measureIndex(off int64) int {
	if s == Whole {
		return 0
	}
	return s.index(off)
}

// Sites: one small document per site and day holding the site's views and
// measures of that day, so that "how much of my traffic is AI crawlers"
// reads one document per day instead of every page's buckets.

// DefaultSiteCollection is the collection of the per-site daily totals.
const DefaultSiteCollection = "sites"

// FieldViews is the views of a site's day.
const FieldViews = "views"

// SiteID returns the _id of site's document of the day holding sec:
// "YYYYMMDD/<site>".
func SiteID(sec int64, site string) string {
	start, _ := Daily.Bounds(sec)
	return time.Unix(start, 0).UTC().Format(Daily.idLayout()) + "/" + site
}

// SiteMeasurePath returns the dotted path of measure m in a site's
// document: FieldViews for measure.Views, "measures.<name>" for the others.
func SiteMeasurePath(m measure.Index) string {
	if m == measure.Views {
		return FieldViews
	}
	return FieldMeasures + "." + m.Name()
}

