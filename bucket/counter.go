package bucket

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/logtally/logtally/measure"
)

// Counting what a document holds, counter by counter: the paths a
// document's counters have, the period each counts and the measure it
// holds. logtally verify compares the buckets with the files through
// them.

// CounterInfo is what one counter of a bucket (or a site's day) counts.
type CounterInfo struct {
	// From and To bound the period it counts, Unix seconds [From, To):
	// a slot's (a second, a minute, an hour or a day), or the document's
	// own period for its total and the measures it holds whole.
	From, To int64
	// Measure is the measure it holds: measure.Views for the total and
	// the counter families.
	Measure measure.Index
}

// measureNames maps a measure's field name to its index (Views aside).
var measureNames = func() map[string]measure.Index {
	m := map[string]measure.Index{}
	for i := measure.Views + 1; i < measure.N; i++ {
		m[i.Name()] = i
	}
	return m
}()

// Counter returns what the counter at the dotted path (as Counters
// names it) counts in the l bucket [start, end) (Unix seconds): its
// total, a slot of a counter family ("seconds.7", "minute.13.5",
// "daily.31"), or a measure ("measures.bytes", "measures.status_2xx.13").
// ok is false for a path that is none of l's counters.
func (l Level) Counter(start, end int64, path string) (c CounterInfo, ok bool) {
	if path == shapes[l].total {
		return CounterInfo{From: start, To: end, Measure: measure.Views}, true
	}
	field, slot, _ := strings.Cut(path, ".")
	if field == FieldMeasures {
		name, slot, hasSlot := strings.Cut(slot, ".")
		m, known := measureNames[name]
		if !known {
			return c, false
		}
		s := measureSlots[l]
		if s == Whole {
			return CounterInfo{From: start, To: end, Measure: m}, !hasSlot
		}
		if !hasSlot {
			return c, false
		}
		from, to, ok := s.span(start, end, slot)
		return CounterInfo{From: from, To: to, Measure: m}, ok
	}
	f := l.Family(field)
	if f == nil {
		return c, false
	}
	from, to, ok := f.Slots.span(start, end, slot)
	return CounterInfo{From: from, To: to, Measure: measure.Views}, ok
}

// SiteCounter returns what the counter at path counts in a site's day
// starting at start: the day, and the measure (FieldViews is the views).
func SiteCounter(start int64, path string) (c CounterInfo, ok bool) {
	c.From, c.To = start, start+86400
	if path == FieldViews {
		return c, true
	}
	name, ok := strings.CutPrefix(path, FieldMeasures+".")
	if !ok {
		return c, false
	}
	c.Measure, ok = measureNames[name]
	return c, ok
}

// span returns the period of the slot named slot ("7", "13.5") of s in a
// bucket [start, end), and false if there is no such slot.
func (s Slots) span(start, end int64, slot string) (from, to int64, ok bool) {
	atoi := func(s string, lo, hi int) (int64, bool) {
		n, err := strconv.Atoi(s)
		return int64(n), err == nil && n >= lo && n <= hi && strconv.Itoa(n) == s
	}
	var i int64
	var width int64
	switch s {
	case BySecond:
		i, ok = atoi(slot, 0, 59)
		width = 1
	case ByHour:
		i, ok = atoi(slot, 0, 23)
		width = 3600
	case ByMinuteOfDay:
		h, m, cut := strings.Cut(slot, ".")
		hi, okh := atoi(h, 0, 23)
		mi, okm := atoi(m, 0, 59)
		i, ok = hi*60+mi, cut && okh && okm
		width = 60
	case ByDay:
		i, ok = atoi(slot, 1, int((end-start)/86400))
		i--
		width = 86400
	}
	from = start + i*width
	return from, from + width, ok && from+width <= end
}

// Counters calls f with the dotted path and the value of every counter
// of doc that is not zero, doc being a bucket of any level or a site's
// day: every integer field (int32 or int64, nested documents' fields by
// their dotted path), but _id, applied (the guard's memory), a tail's
// size (FieldSize) and the document's site, page and date. A counter of another type is an error
// naming its path.
func Counters(doc bson.Raw, f func(path string, n int64)) error {
	return counters(bsoncore.Document(doc), "", f)
}

func counters(doc bsoncore.Document, prefix string, f func(path string, n int64)) error {
	elems, err := doc.Elements()
	if err != nil {
		return fmt.Errorf("counters: %w", err)
	}
	for _, e := range elems {
		key := e.Key()
		if prefix == "" {
			switch key {
			case FieldID, FieldApplied, FieldMetadata, FieldSite, FieldPage, FieldTimestamp, FieldSize:
				continue
			}
		}
		v := e.Value()
		var n int64
		switch v.Type {
		case bsoncore.TypeEmbeddedDocument:
			if err := counters(v.Document(), prefix+key+".", f); err != nil {
				return err
			}
			continue
		case bsoncore.TypeInt32:
			n = int64(v.Int32())
		case bsoncore.TypeInt64:
			n = v.Int64()
		default:
			return fmt.Errorf("counter %s: a %s, not an integer", prefix+key, v.Type)
		}
		if n != 0 {
			f(prefix+key, n)
		}
	}
	return nil
}

// SiteRange returns the find filter of site's days starting in [from,
// to) in the sites' collection: the fields of its index (SiteIndex).
func SiteRange(site string, from, to time.Time) bson.D {
	return bson.D{
		{Key: FieldMetadata + "." + FieldSite, Value: site},
		{Key: FieldMetadata + "." + FieldDate, Value: bson.D{
			{Key: "$gte", Value: bson.NewDateTimeFromTime(from)},
			{Key: "$lt", Value: bson.NewDateTimeFromTime(to)},
		}},
	}
}

// Start returns the start of an l document's period (its TimeField),
// Unix seconds.
func (l Level) Start(doc bson.Raw) (int64, error) { return startOf(doc, l.TimeField()) }

// SiteStart returns the start of a site's day (its metadata.date), Unix
// seconds.
func SiteStart(doc bson.Raw) (int64, error) { return startOf(doc, FieldMetadata+"."+FieldDate) }

func startOf(doc bson.Raw, path string) (int64, error) {
	v, err := doc.LookupErr(strings.Split(path, ".")...)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	t, ok := v.DateTimeOK()
	if !ok {
		return 0, fmt.Errorf("%s: a %s, not a date", path, v.Type)
	}
	return time.UnixMilli(t).Unix(), nil
}
