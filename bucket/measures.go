package bucket

import (
	"strconv"

	"github.com/logtally/logtally/measure"
	"go.mongodb.org/mongo-driver/v2/bson"
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

// slotMeasures are the measures of one measure slot of a Doc.
type slotMeasures struct {
	slot int
	v    measure.Vector
}

// bumpMeasures merges v into the last slot if it is i, else appends it.
// Hits arrive in time order, so equal slots are adjacent.
func bumpMeasures(ms []slotMeasures, i int, v *measure.Vector) []slotMeasures {
	if k := len(ms) - 1; k >= 0 && ms[k].slot == i {
		ms[k].v.Merge(v)
		return ms
	}
	if len(ms) < cap(ms) {
		ms = ms[:len(ms)+1]
		ms[len(ms)-1].slot, ms[len(ms)-1].v = i, *v
		return ms
	}
	return append(ms, slotMeasures{i, *v})
}

// Storage: a count of hits (measure.Index.IsCount) is zero-filled as a
// 32-bit integer and incremented by a 32-bit value when it fits, so that
// it stays 4 bytes (the server promotes it to 64 bits if a sum ever
// overflows: MongoDB's $inc spills an int32 into an int64; nothing is
// lost, the document grows by 4 bytes); bytes and microseconds are 64-bit
// from the start. This keeps a daily bucket's measures, 24 hours of 14
// measures, within a fifth of its size (docs/scaling.md, "Document sizes").

// narrow reports whether measure m is stored as a 32-bit integer in the
// page buckets.
func narrow(m measure.Index) bool { return m.IsCount() }

// measureValue is the BSON value adding n to measure m.
func measureValue(m measure.Index, n uint64, small bool) any {
	if small && narrow(m) && n <= 1<<31-1 {
		return int32(n)
	}
	return int64(n)
}

// measureInc appends the $inc terms of v's sums (every measure but Views
// and the maxima, zeros left out) at slot of paths. small: counts go as
// 32-bit values (the page buckets).
func measureInc(inc bson.D, paths *[measure.N][]string, slot int, v *measure.Vector, small bool) bson.D {
	for m := measure.Views + 1; m < measure.N; m++ {
		if v[m] == 0 || m.IsMax() {
			continue
		}
		inc = append(inc, bson.E{Key: paths[m][slot], Value: measureValue(m, v[m], small)})
	}
	return inc
}

// measureMax appends the $max terms of v's maxima at slot of paths.
func measureMax(mx bson.D, paths *[measure.N][]string, slot int, v *measure.Vector) bson.D {
	for m := measure.Views + 1; m < measure.N; m++ {
		if v[m] != 0 && m.IsMax() {
			mx = append(mx, bson.E{Key: paths[m][slot], Value: int64(v[m])})
		}
	}
	return mx
}

// zeroMeasure is the zero of measure m: int32 for a count in the page
// buckets, else int64.
func zeroMeasure(m measure.Index, small bool) any {
	if small && narrow(m) {
		return int32(0)
	}
	return int64(0)
}

// zeroMeasureDocs[l][days] is the zero-filled measures sub-document of an
// l bucket (days: the month's days for Monthly, else 0), encoded once.
var zeroMeasureDocs [Levels][32]bson.Raw

func init() {
	slotsOf := func(s Slots, days int) (from, to int) {
		switch s {
		case ByHour:
			return 0, 23
		case ByDay:
			return 1, days
		}
		return 0, -1
	}
	for l := range Level(Levels) {
		for days := range 32 {
			if l == Monthly && days < 28 || l != Monthly && days > 0 {
				continue
			}
			doc := bson.D{}
			for m := measure.Views + 1; m < measure.N; m++ {
				s := measureSlots[l]
				if s == Whole {
					doc = append(doc, bson.E{Key: m.Name(), Value: zeroMeasure(m, true)})
					continue
				}
				from, to := slotsOf(s, days)
				sub := bson.D{}
				for i := from; i <= to; i++ {
					sub = append(sub, bson.E{Key: strconv.Itoa(i), Value: zeroMeasure(m, true)})
				}
				doc = append(doc, bson.E{Key: m.Name(), Value: sub})
			}
			zeroMeasureDocs[l][days] = mustMarshal(doc)
		}
	}
}

// zeroMeasures returns the zero-filled measures of an l bucket [start, end).
func zeroMeasures(l Level, start, end int64) bson.Raw {
	if l == Monthly {
		return zeroMeasureDocs[l][(end-start)/86400]
	}
	return zeroMeasureDocs[l][0]
}
