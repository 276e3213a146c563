package verify

// The counts by dimension of the site days (package dims, bucket
// sitesources.go): the files' values, each counted by name (a DimSink of
// the dry run), against the site days' sources in MongoDB. The rule is
// in the package doc ("Counts by dimension").

import (
	"maps"
	"slices"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/dims"
)

// DimsReport is what the counts by dimension of the site days gave.
type DimsReport struct {
	// On says the source's config has [dimensions] enabled: the files'
	// counts by dimension were compared.
	On bool
	// Days are the site days whose counts by dimension were judged,
	// Values the (dimension, value) pairs compared in them.
	Days, Values uint64
	// NotCounted are the site days the files count whose document in
	// MongoDB holds no count by dimension (counted before [dimensions]
	// was enabled, or by a logtally without it): not judged.
	NotCounted uint64
	// Cut are the site days the range (-from, -to) cuts while the files
	// hold hits of them outside it: their counts by dimension (kept by
	// day, not by second) are not judged, their views are.
	Cut uint64
	// Off are the site days in MongoDB holding counts by dimension not
	// judged because the config has [dimensions] off.
	Off uint64
}

// siteDims are a site day's counts by dimension: value to hits.
type siteDims = [dims.N]map[string]int64

// hasDims reports whether d holds any count.
func hasDims(d *siteDims) bool {
	for _, m := range d {
		if len(m) > 0 {
			return true
		}
	}
	return false
}

// dims judges a site day's counts by dimension, day [start, start+1 day):
// files the files' (every value by name; nil: none), mongo the day's
// sources (bucket.SiteSources). Per dimension:
//   - a named value MongoDB holds more of than the files is judged as a
//     counter holding more (other hosts, or with AllHosts a difference);
//   - a named value MongoDB holds fewer of may have been folded into
//     dims.Other by a host's bound: the shortfalls of all the named values,
//     with the files' own Other, must be in MongoDB's Other. When they are
//     not, and MongoDB's Other holds no more than the files', each
//     shortfall is a difference (hits lost) under its value; otherwise
//     the missing part is one difference under Other (which values lost
//     them cannot be told). An Other holding more than that is judged as
//     a counter holding more.
//
// A day reaching outside the range is judged for lost hits only.
func (j *judge) dims(id string, start int64, files *siteDims, mongo *siteDims) {
	r := &j.rep.Dims
	r.Days++
	inside := start >= j.r.from && dayEnd(start) <= j.r.to
	var none siteDims
	if files == nil {
		files = &none
	}
	for dm := range dims.N {
		f, m := files[dm], mongo[dm]
		if len(f) == 0 && len(m) == 0 {
			continue
		}
		path := bucket.FieldSources + "." + dm.Code()
		values := map[string]struct{}{}
		for v := range f {
			values[v] = struct{}{}
		}
		for v := range m {
			values[v] = struct{}{}
		}
		r.Values += uint64(len(values))
		delete(values, dims.Other)
		var short int64
		var lost []string
		for _, v := range slices.Sorted(maps.Keys(values)) {
			switch fv, mv := f[v], m[v]; {
			case mv < fv:
				short += fv - mv
				lost = append(lost, v)
			case mv > fv:
				j.unequal(Diff{Kind: Sites, ID: id, Path: path, Value: v, Files: fv, MongoDB: mv}, inside)
			}
		}
		need, mo := f[dims.Other]+short, m[dims.Other]
		switch {
		case mo >= need:
			if mo > need {
				j.unequal(Diff{Kind: Sites, ID: id, Path: path, Value: dims.Other, Files: need, MongoDB: mo}, inside)
			}
		case mo <= f[dims.Other]: // no named value folded in MongoDB: each shortfall is lost
			for _, v := range lost {
				j.unequal(Diff{Kind: Sites, ID: id, Path: path, Value: v, Files: f[v], MongoDB: m[v]}, inside)
			}
			if mo < f[dims.Other] {
				j.unequal(Diff{Kind: Sites, ID: id, Path: path, Value: dims.Other, Files: f[dims.Other], MongoDB: mo}, inside)
			}
		default:
			j.unequal(Diff{Kind: Sites, ID: id, Path: path, Value: dims.Other, Files: need, MongoDB: mo}, inside)
		}
	}
}
