package bucket

import (
	"fmt"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Slots is how a counter family divides a bucket's period: one counter
// per slot, each a 64-bit integer.
type Slots uint8

// The slot kinds.
const (
	// BySecond: "<s>", 0 to 59, the seconds of a minute.
	BySecond Slots = iota
	// ByHour: "<h>", 0 to 23, the hours of a day.
	ByHour
	// ByMinuteOfDay: "<h>": {"<m>"}, 24 sub-documents of 60 counters.
	ByMinuteOfDay
	// ByDay: "<d>", 1 to the days of the month (28 to 31).
	ByDay
)

// index returns the slot holding the second off from the bucket's start.
func (s Slots) index(off int64) int {
	switch s {
	case BySecond:
		return int(off)
	case ByHour:
		return int(off / 3600)
	case ByMinuteOfDay:
		return int(off / 60)
	}
	return int(off/86400) + 1
}

// Family is one field of counters of a level's documents.
type Family struct {
	// Field is the field's name.
	Field string
	// Slots is how it divides the bucket's period.
	Slots Slots
	paths []string // the dotted path of each slot, so an update allocates none
}

// Path returns the dotted path of slot i ("seconds.7", "minute.13.5",
// "daily.31").
func (f *Family) Path(i int) string { return f.paths[i] }

// shape is what a level's documents count: a total and the families.
type shape struct {
	total    string
	families []Family // in document order
}

// shapes is the one table of the counters each level holds. A document
// holds, after its _id and its site, page and date, the total and then
// each family in this order; an update's $inc names the families in the
// reverse order (the finest first), then the total. A new counter family
// is added here; the zero-filled documents, the updates and the readers
// (Total, Family, Paths) follow.
var shapes = [Levels]shape{
	Minute:  {total: "totalViews", families: []Family{{Field: "seconds", Slots: BySecond}}},
	Daily:   {total: "daily", families: []Family{{Field: "hourly", Slots: ByHour}, {Field: "minute", Slots: ByMinuteOfDay}}},
	Monthly: {total: "total", families: []Family{{Field: "daily", Slots: ByDay}}},
}

// TotalField returns the field holding an l bucket's total: "totalViews",
// "daily" or "total".
func (l Level) TotalField() string { return shapes[l].total }

// Families returns the counter families of l's documents, in document
// order. They must not be modified.
func (l Level) Families() []Family { return shapes[l].families }

// Family returns l's family named field, nil if none.
func (l Level) Family(field string) *Family {
	fs := shapes[l].families
	for i := range fs {
		if fs[i].Field == field {
			return &fs[i]
		}
	}
	return nil
}

// Paths returns the dotted path of every counter a hit at sec adds one
// to in the l bucket starting at start: each family's slot, then the
// total (the order of an update's $inc).
func (l Level) Paths(start, sec int64) []string {
	fs := shapes[l].families
	out := make([]string, 0, len(fs)+1)
	for i := len(fs) - 1; i >= 0; i-- {
		out = append(out, fs[i].paths[fs[i].Slots.index(sec-start)])
	}
	return append(out, shapes[l].total)
}

// Zero-filled sub-documents, encoded once and shared by every new bucket.
var (
	zeroSeconds bson.Raw     // {"0": 0, ..., "59": 0}
	zeroHours   bson.Raw     // {"0": 0, ..., "23": 0}
	zeroMinutes bson.Raw     // {"0": {"0": 0, ..., "59": 0}, ..., "23": {...}}
	zeroDays    [32]bson.Raw // zeroDays[n]: {"1": 0, ..., "<n>": 0}, n in 28..31
)

// zero returns the zero-filled sub-document of s for a bucket [start, end).
func (s Slots) zero(start, end int64) bson.Raw {
	switch s {
	case BySecond:
		return zeroSeconds
	case ByHour:
		return zeroHours
	case ByMinuteOfDay:
		return zeroMinutes
	}
	return zeroDays[(end-start)/86400]
}

// paths returns the dotted paths of field's slots, by slot index.
func (s Slots) paths(field string) []string {
	var out []string
	switch s {
	case BySecond:
		for i := range 60 {
			out = append(out, field+"."+strconv.Itoa(i))
		}
	case ByHour:
		for i := range 24 {
			out = append(out, field+"."+strconv.Itoa(i))
		}
	case ByMinuteOfDay:
		for m := range 1440 {
			out = append(out, field+"."+strconv.Itoa(m/60)+"."+strconv.Itoa(m%60))
		}
	default:
		out = append(out, "") // 1-based
		for d := 1; d < 32; d++ {
			out = append(out, field+"."+strconv.Itoa(d))
		}
	}
	return out
}

func init() {
	for l := range shapes {
		for i := range shapes[l].families {
			f := &shapes[l].families[i]
			f.paths = f.Slots.paths(f.Field)
		}
	}
	zeros := func(from, to int) bson.D {
		d := make(bson.D, 0, to-from+1)
		for i := from; i <= to; i++ {
			d = append(d, bson.E{Key: strconv.Itoa(i), Value: int64(0)})
		}
		return d
	}
	zeroSeconds = mustMarshal(zeros(0, 59))
	zeroHours = mustMarshal(zeros(0, 23))
	hours := make(bson.D, 24)
	for h := range hours {
		hours[h] = bson.E{Key: strconv.Itoa(h), Value: zeroSeconds}
	}
	zeroMinutes = mustMarshal(hours)
	for n := 28; n <= 31; n++ {
		zeroDays[n] = mustMarshal(zeros(1, n))
	}
}

func mustMarshal(d bson.D) bson.Raw {
	b, err := bson.Marshal(d)
	if err != nil {
		panic(fmt.Sprintf("bucket: marshal zero document: %v", err))
	}
	return b
}
