package bucket

// Where a site's traffic came from, in its day's document (Sites): per
// dimension (package dims) the hits of each value, under
// sources.<dim code>.<PageKey(value)>, NumberLong. Each host counts a
// dimension's first values of a day by name and the rest as dims.Other
// (dims.Counter), so a day holds up to hosts × that many values; its
// size (FieldSize, as a tail's) bounds them: an update that would pass
// SiteSourcesLimit is refused for good, and its writer sends the batch's
// values again folded into dims.Other (Folded), which adds no value.
// Either way every hit is counted once in each dimension.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/dims"
)

// FieldSources is the counts by dimension in a site's day.
const FieldSources = "sources"

// SiteSourcesLimit bounds a site day's size: the bytes its sources and
// applied map may hold (well below MongoDB's 16 MiB).
const SiteSourcesLimit = 2 << 20

// AddDim adds n hits of value in dimension d to site's day holding sec.
func (s *Sites) AddDim(site []byte, sec int64, d dims.Dim, value []byte, n uint64) {
	if s.Keep > 0 && SiteLevel.Unit().Expired(sec, s.Keep, s.Now) {
		return // the day is past its retention (its views are Dropped)
	}
	doc := s.doc(site, sec)
	if doc.Dims[d] == nil {
		doc.Dims[d] = map[string]uint64{}
	}
	doc.Dims[d][string(value)] += n
}

// hasDims reports whether d carries counts by dimension.
func (d *SiteDoc) hasDims() bool {
	for _, m := range d.Dims {
		if len(m) > 0 {
			return true
		}
	}
	return false
}

// sourcePath returns the path of value's count in dimension dm.
func sourcePath(dm dims.Dim, value string) string {
	return FieldSources + "." + dm.Code() + "." + PageKey(value)
}

// appendDims appends d's counts by dimension to inc, sorted.
func (d *SiteDoc) appendDims(inc bson.D) bson.D {
	for dm, m := range d.Dims {
		for _, v := range slices.Sorted(maps.Keys(m)) {
			inc = append(inc, bson.E{Key: sourcePath(dims.Dim(dm), v), Value: int64(m[v])})
		}
	}
	return inc
}

// Growth returns the most bytes Update(g) may add to d's document: its
// counts by dimension as a new day holds them, but the values Held says
// it holds already (an update of those adds nothing), the size field and
// g's entry in the applied map. The size a day keeps is the sum of its
// updates' Growth: at least its bytes, more by the values two writers
// both added.
func (d *SiteDoc) Growth(g Guard) int64 {
	n := int64(len(FieldSources)+7) + int64(len(FieldSize)+10) + int64(g.EntryBytes())
	for dm, m := range d.Dims {
		if len(m) == 0 {
			continue
		}
		n += int64(len(dims.Dim(dm).Code()) + 7)
		for v := range m {
			if d.Held == nil || !d.Held(dims.Dim(dm), v) {
				n += int64(len(PageKey(v)) + 10)
			}
		}
	}
	return n
}

// Fits reports whether doc, d's document as read, has room for Update(g)
// under d's Limit: its size (0 without one: a day written before counts
// by dimension) and Growth within it. A day without room never has room
// again: sizes only grow.
func (d *SiteDoc) Fits(doc bson.Raw, g Guard) bool {
	if d.Limit <= 0 || !d.hasDims() {
		return true
	}
	var n int64
	if v, err := doc.LookupErr(FieldSize); err == nil {
		var ok bool
		if n, ok = v.AsInt64OK(); !ok {
			return false
		}
	}
	return n <= d.Limit-d.Growth(g)
}

// Folded returns d with each dimension's counts folded into dims.Other
// and no Limit: the update a day without room takes instead, adding no
// value but Other.
func (d *SiteDoc) Folded() SiteDoc {
	f := *d
	f.Limit = 0
	for dm, m := range d.Dims {
		if len(m) == 0 {
			continue
		}
		var n uint64
		for _, c := range m {
			n += c
		}
		f.Dims[dm] = map[string]uint64{dims.Other: n}
	}
	return f
}

// dimsFilter is the size term of a bounded update of growth bytes: the
// day's size, or none yet, within the Limit.
func (d *SiteDoc) dimsFilter(growth int64) bson.E {
	return bson.E{Key: "$or", Value: bson.A{
		bson.D{{Key: FieldSize, Value: bson.D{{Key: "$exists", Value: false}}}},
		bson.D{{Key: FieldSize, Value: bson.D{{Key: "$lte", Value: d.Limit - growth}}}},
	}}
}

// SiteSources returns the counts by dimension of a site's day document
// (raw): by dimension, value to hits. A day without any gives empty maps.
func SiteSources(raw bson.Raw) ([dims.N]map[string]int64, error) {
	var out [dims.N]map[string]int64
	for dm := range out {
		out[dm] = map[string]int64{}
	}
	src, err := raw.LookupErr(FieldSources)
	if err != nil {
		return out, nil
	}
	doc, ok := src.DocumentOK()
	if !ok {
		return out, errFieldType(FieldSources)
	}
	elems, err := doc.Elements()
	if err != nil {
		return out, err
	}
	for _, e := range elems {
		dm, ok := dimOfCode(e.Key())
		if !ok {
			continue // a dimension of a later logtally
		}
		vals, ok := e.Value().DocumentOK()
		if !ok {
			return out, errFieldType(FieldSources + "." + e.Key())
		}
		ves, err := vals.Elements()
		if err != nil {
			return out, err
		}
		for _, ve := range ves {
			n, ok := ve.Value().AsInt64OK()
			if !ok {
				return out, errFieldType(FieldSources + "." + e.Key() + ".<value>")
			}
			v, err := PageOfKey(ve.Key())
			if err != nil {
				return out, fmt.Errorf("site day: %s.%s: %w", FieldSources, e.Key(), err)
			}
			out[dm][v] += n
		}
	}
	return out, nil
}

func dimOfCode(code string) (dims.Dim, bool) {
	for dm := range dims.N {
		if dm.Code() == code {
			return dm, true
		}
	}
	return 0, false
}

type fieldTypeError string

func (e fieldTypeError) Error() string {
	return "site day: " + string(e) + ": not of the type logtally writes"
}

func errFieldType(path string) error { return fieldTypeError(strings.Clone(path)) }
