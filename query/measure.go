package query

import (
	"strconv"
	"strings"

	"github.com/logtally/logtally/measure"
)

// Measure is what a query reports per page and step: the page views of
// the seed, or a measure read beside them (package measure) or derived
// from them.
type Measure uint8

// The measures a query reports.
const (
	// Views are the page views: every hit of the page.
	Views Measure = iota
	// Bots are the hits of the five bot classes (search, ai, tool, bot,
	// suspect).
	Bots
	// People are Views minus Bots.
	People
	// Status2xx … Status5xx are the hits by status class.
	Status2xx
	Status3xx
	Status4xx
	Status5xx
	// ErrorRate is (4xx + 5xx) / views: a fraction, 0 without views.
	ErrorRate
	// Bytes is the sum of the response bytes.
	Bytes
	// RTAvg is the mean response time of the hits that log one, in
	// milliseconds (rt_us / rt_n; 0 without any).
	RTAvg
	// RTMax is the longest response time, in milliseconds.
	RTMax
	// RTCount is the hits that logged a response time (0: the log
	// format has none, and RTAvg and RTMax are not known).
	RTCount
	// BotSearch … BotSuspect are the hits of each bot class (package
	// botclass): search engines, AI crawlers, tools, other bots, and
	// agents suspected of being bots.
	BotSearch
	BotAI
	BotTool
	BotOther
	BotSuspect
	// Unmeasured are the views counted before the measures were
	// recorded (buckets of an older logtally): views minus the hits of
	// the five status classes, each measured hit being in exactly one.
	// Their status, bytes, response time and class are not known.
	Unmeasured
	numMeasures
)

// measureNames are the names -measure takes; columns are named by
// measureColumns (the unit in the name where there is one).
var (
	measureNames = [numMeasures]string{"views", "bots", "people", "2xx", "3xx", "4xx", "5xx", "error_rate", "bytes", "rt_avg", "rt_max",
		"rt_count", "bot_search", "bot_ai", "bot_tool", "bot_other", "bot_suspect", "unmeasured"}
	measureColumns = [numMeasures]string{"views", "bots", "people", "2xx", "3xx", "4xx", "5xx", "error_rate", "bytes", "rt_avg_ms", "rt_max_ms",
		"rt_count", "bot_search", "bot_ai", "bot_tool", "bot_other", "bot_suspect", "unmeasured"}
)

// MeasureNames is the list of names ParseMeasures takes, comma-separated
// (visitors last: it is read alone, see Visitors).
var MeasureNames = strings.Join(measureNames[:], ", ") + ", " + visitorsName

// String returns the measure's name as ParseMeasures takes it.
func (m Measure) String() string {
	if m < numMeasures {
		return measureNames[m]
	}
	if m == Visitors {
		return visitorsName
	}
	return "measure(" + strconv.Itoa(int(m)) + ")"
}

// Column returns the measure's column name in CSV and key in JSON: its
// name, with the unit for the response times ("rt_avg_ms").
func (m Measure) Column() string {
	if m < numMeasures {
		return measureColumns[m]
	}
	return m.String()
}

// fractional reports whether the measure's values are not whole numbers.
func (m Measure) fractional() bool { return m == ErrorRate || m == RTAvg || m == RTMax }

// ParseMeasures parses a comma-separated list of measure names ("views",
// "bots,people", "2xx,4xx,error_rate"). Each name may appear once.
// "visitors" parses as Visitors, which Reader.Visitors reads alone (Query
// refuses it).
func ParseMeasures(s string) ([]Measure, error) {
	var ms []Measure
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		m := Measure(0)
		for m < numMeasures && measureNames[m] != name {
			m++
		}
		if m == numMeasures && name == visitorsName {
			m = Visitors
		} else if m == numMeasures {
			return nil, badRequest("measure %q: must be one of %s", name, MeasureNames)
		}
		for _, o := range ms {
			if o == m {
				return nil, badRequest("measure %q: listed twice", name)
			}
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// field is a sum (or maximum) a request reads beside the views: the
// measures stored in the buckets that one of its Measures needs.
type field uint8

const (
	f2xx field = iota
	f3xx
	f4xx
	f5xx
	fBots
	fBytes
	fRTSum
	fRTCount
	fRTMax
	fSearch
	fAI
	fTool
	fBotOther
	fSuspect
	fStatusOther
	numFields
)

// fieldSources are the stored measures each field adds up (fRTMax: their
// maximum).
var fieldSources = [numFields][]measure.Index{
	f2xx:         {measure.Status2xx},
	f3xx:         {measure.Status3xx},
	f4xx:         {measure.Status4xx},
	f5xx:         {measure.Status5xx},
	fBots:        {measure.BotSearch, measure.BotAI, measure.BotTool, measure.BotOther, measure.BotSuspect},
	fBytes:       {measure.Bytes},
	fRTSum:       {measure.RTSum},
	fRTCount:     {measure.RTCount},
	fRTMax:       {measure.RTMax},
	fSearch:      {measure.BotSearch},
	fAI:          {measure.BotAI},
	fTool:        {measure.BotTool},
	fBotOther:    {measure.BotOther},
	fSuspect:     {measure.BotSuspect},
	fStatusOther: {measure.StatusOther},
}

// isMax reports whether f is merged by max.
func (f field) isMax() bool { return f == fRTMax }

// measureFields are the fields each measure is computed from (Views:
// none, the views are always read).
var measureFields = [numMeasures][]field{
	Bots:       {fBots},
	People:     {fBots},
	Status2xx:  {f2xx},
	Status3xx:  {f3xx},
	Status4xx:  {f4xx},
	Status5xx:  {f5xx},
	ErrorRate:  {f4xx, f5xx},
	Bytes:      {fBytes},
	RTAvg:      {fRTSum, fRTCount},
	RTMax:      {fRTMax},
	RTCount:    {fRTCount},
	BotSearch:  {fSearch},
	BotAI:      {fAI},
	BotTool:    {fTool},
	BotOther:   {fBotOther},
	BotSuspect: {fSuspect},
	Unmeasured: {f2xx, f3xx, f4xx, f5xx, fStatusOther},
}

// fieldSet is the fields a request reads, in a fixed order, and where
// each is held in a Series.
type fieldSet struct {
	list []field
	pos  [numFields]int8 // 1 + index in list, 0 if not read
}

// fieldsOf returns the fields ms need.
func fieldsOf(ms []Measure) fieldSet {
	var fs fieldSet
	var need [numFields]bool
	for _, m := range ms {
		for _, f := range measureFields[m] {
			need[f] = true
		}
	}
	for f := range numFields {
		if need[f] {
			fs.list = append(fs.list, f)
			fs.pos[f] = int8(len(fs.list))
		}
	}
	return fs
}

// sources returns the stored measures the fields add up, each once.
func (fs *fieldSet) sources() []measure.Index {
	var out []measure.Index
	for _, f := range fs.list {
		out = append(out, fieldSources[f]...)
	}
	return out
}

// merge adds the value n of field f to *dst.
func (f field) merge(dst *int64, n int64) {
	if f.isMax() {
		*dst = max(*dst, n)
	} else {
		*dst += n
	}
}

// Value is one measure of one page and step (or the range): a whole
// number, or for error_rate and the response times a fraction.
type Value struct {
	// N is the value of a whole measure (views, counts, bytes).
	N int64
	// F is the value of a fractional one (Frac).
	F    float64
	Frac bool
}

// String formats v: N in decimal, F as its shortest decimal (error_rate
// is rounded to 6 decimals, milliseconds to 3: the microsecond).
func (v Value) String() string {
	if !v.Frac {
		return strconv.FormatInt(v.N, 10)
	}
	return strconv.FormatFloat(v.F, 'f', -1, 64)
}

// Float64 returns v as a float64 (for a chart).
func (v Value) Float64() float64 {
	if v.Frac {
		return v.F
	}
	return float64(v.N)
}

// round returns x rounded to digits decimals (formatted exactly by
// Value.String: the shortest decimal that reads back as the float).
func round(x float64, digits int) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', digits, 64), 64)
	return f
}

// compute returns measure m from views and the fields' values get
// returns.
func compute(m Measure, views int64, get func(field) int64) Value {
	switch m {
	case Views:
		return Value{N: views}
	case Bots:
		return Value{N: get(fBots)}
	case People:
		return Value{N: views - min(get(fBots), views)}
	case Status2xx:
		return Value{N: get(f2xx)}
	case Status3xx:
		return Value{N: get(f3xx)}
	case Status4xx:
		return Value{N: get(f4xx)}
	case Status5xx:
		return Value{N: get(f5xx)}
	case Bytes:
		return Value{N: get(fBytes)}
	case ErrorRate:
		if views == 0 {
			return Value{Frac: true}
		}
		return Value{F: round(float64(get(f4xx)+get(f5xx))/float64(views), 6), Frac: true}
	case RTAvg:
		n := get(fRTCount)
		if n == 0 {
			return Value{Frac: true}
		}
		return Value{F: round(float64(get(fRTSum))/float64(n)/1000, 3), Frac: true}
	case RTMax:
		return Value{F: round(float64(get(fRTMax))/1000, 3), Frac: true}
	case RTCount:
		return Value{N: get(fRTCount)}
	case BotSearch:
		return Value{N: get(fSearch)}
	case BotAI:
		return Value{N: get(fAI)}
	case BotTool:
		return Value{N: get(fTool)}
	case BotOther:
		return Value{N: get(fBotOther)}
	case BotSuspect:
		return Value{N: get(fSuspect)}
	case Unmeasured:
		return Value{N: max(views-get(f2xx)-get(f3xx)-get(f4xx)-get(f5xx)-get(fStatusOther), 0)}
	}
	return Value{}
}

// measures returns the request's measures, Views when none is given.
func (req *Request) measures() []Measure {
	if len(req.Measures) == 0 {
		return []Measure{Views}
	}
	return req.Measures
}

// viewsOnly reports whether req asks for the views alone (the seed's
// output, unchanged).
func (req *Request) viewsOnly() bool {
	ms := req.measures()
	return len(ms) == 1 && ms[0] == Views
}

// Value returns measure m of s in step i of r, or over the whole range
// when i is -1. m must be one of r's measures (r.Request.Measures).
func (r *Result) Value(s *Series, m Measure, i int) Value {
	views := s.Total
	if i >= 0 {
		views = s.Counts[i]
	}
	return compute(m, views, func(f field) int64 {
		p := int(r.fields.pos[f]) - 1
		if p < 0 {
			return 0 // not read: r's request did not ask a measure of it
		}
		if i < 0 {
			return s.totals[p]
		}
		return s.fields[p][i]
	})
}
