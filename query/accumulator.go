package query

// The accumulator: a result's series, filled step by step from the
// documents read.

import (
	"time"
)

// accumulator adds bucket counts to a result's series.
type accumulator struct {
	res   *Result
	pages map[string]*Series
	// totals, when not nil, is all that is kept: each page's total
	// (the ranking pass of a Top over MaxCells).
	totals map[string]int64
	// only, when not nil, are the pages kept; the others are skipped.
	only map[string]bool
	// tooLarge is set when one more page would pass MaxCells; reading
	// stops then.
	tooLarge *TooLargeError
	// viewsOnly: the measures' fields are not read (the ranking pass).
	viewsOnly bool
	// site sums every page added, whatever only keeps (Result.Site).
	site *Series
	// maxCells bounds the counts held (Reader.maxCells).
	maxCells int
}

// newAccumulator returns an accumulator of res's steps and fields,
// holding at most maxCells counts.
func newAccumulator(res *Result, maxCells int) *accumulator {
	return &accumulator{res: res, pages: map[string]*Series{}, site: newSeries(res, ""), maxCells: maxCells}
}

// newSeries returns page's series of res's steps and fields, zero.
func newSeries(res *Result, page string) *Series {
	s := &Series{Page: page, Counts: make([]int64, len(res.Times))}
	if k := len(res.fields.list); k > 0 {
		s.fields, s.totals = make([][]int64, k), make([]int64, k)
		for i := range s.fields {
			s.fields[i] = make([]int64, len(res.Times))
		}
	}
	return s
}

// fields returns the fields the accumulator reads beside the views.
func (a *accumulator) fields() *fieldSet {
	if a.viewsOnly {
		return &fieldSet{}
	}
	return &a.res.fields
}

func (a *accumulator) series(page string) *Series {
	s := a.pages[page]
	if s == nil {
		k := len(a.res.fields.list)
		// The site's sum is one more series.
		if n := len(a.res.Times); (len(a.pages)+2)*n*(k+1) > a.maxCells {
			a.tooLarge = &TooLargeError{Pages: len(a.pages) + 1, Steps: n, Step: a.res.Request.Step, Fields: k, Max: a.maxCells}
			return nil
		}
		s = newSeries(a.res, page)
		a.pages[page] = s
	}
	return s
}

// add counts n views of page in the step holding t; t outside the range is
// ignored. It returns false when the result would pass MaxCells: reading
// should stop.
func (a *accumulator) add(page string, t time.Time, n int64) bool {
	return a.addWith(page, t, n, nil)
}

// addWith is add with the fields' values v of the same views (nil: none).
func (a *accumulator) addWith(page string, t time.Time, n int64, v *[numFields]int64) bool {
	req := a.res.Request
	t = t.UTC()
	if t.Before(req.From) || !t.Before(req.To) {
		return true
	}
	if a.totals != nil {
		a.totals[page] += n
		return true
	}
	if n == 0 && (v == nil || *v == [numFields]int64{}) {
		return true // a zero-filled bucket adds nothing
	}
	i := req.Step.Steps(req.From, req.Step.Truncate(t))
	a.addTo(a.site, i, n, v)
	if req.SiteOnly || a.only != nil && !a.only[page] {
		return true
	}
	s := a.series(page)
	if s == nil {
		return false
	}
	a.addTo(s, i, n, v)
	return true
}

// addTo adds n views and the fields' values v (nil: none) to step i of s.
func (a *accumulator) addTo(s *Series, i int, n int64, v *[numFields]int64) {
	s.Counts[i] += n
	s.Total += n
	if v != nil {
		for p, f := range a.res.fields.list {
			f.merge(&s.fields[p][i], v[f])
			f.merge(&s.totals[p], v[f])
		}
	}
}
