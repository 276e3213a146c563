// Package measure is the vector of sums logtally keeps per (site, page,
// second): the page views of the seed and the measures beside them
// (status classes, bytes, response time, bot classes). The aggregator
// adds hits to vectors, the buffer stores them, the flusher writes them
// to the buckets (package bucket decides where each measure lives at
// each level). A new measure is added here, once.
package measure

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/logtally/logtally/botclass"
)

// Index names one sum of a Vector.
type Index uint8

// The measures. Views is the seed's page-view count; every other measure
// counts or sums the same hits.
const (
	// Views is every hit of the page that passed the source's filters.
	Views Index = iota
	// Status2xx … Status5xx count hits by status class; StatusOther
	// counts the others (1xx: the parser takes statuses 100 to 599).
	Status2xx
	Status3xx
	Status4xx
	Status5xx
	StatusOther
	// BotSearch … BotSuspect count hits by the user agent's class
	// (botclass); people are Views minus their sum.
	BotSearch
	BotAI
	BotTool
	BotOther
	BotSuspect
	// Bytes sums the response bytes the line logs ($body_bytes_sent,
	// %b, %O; "-" is 0).
	Bytes
	// RTSum sums the response times, in microseconds, of the hits whose
	// line logs one; RTCount counts those hits; RTMax is the longest.
	RTSum
	RTCount
	RTMax
	// N is the number of measures.
	N
)

// The bot classes map onto BotSearch… in their order.
var _ = [1]struct{}{}[int(BotSuspect-BotSearch+1)-int(botclass.NumClasses-1)]

type info struct {
	name  string
	max   bool // merged by max, not summed
	count bool // a count of hits (not bytes or microseconds)
}

var infos = [N]info{
	Views:       {name: "views", count: true},
	Status2xx:   {name: "status_2xx", count: true},
	Status3xx:   {name: "status_3xx", count: true},
	Status4xx:   {name: "status_4xx", count: true},
	Status5xx:   {name: "status_5xx", count: true},
	StatusOther: {name: "status_other", count: true},
	BotSearch:   {name: "bot_search", count: true},
	BotAI:       {name: "bot_ai", count: true},
	BotTool:     {name: "bot_tool", count: true},
	BotOther:    {name: "bot_other", count: true},
	BotSuspect:  {name: "bot_suspect", count: true},
	Bytes:       {name: "bytes"},
	RTSum:       {name: "rt_us"},
	RTCount:     {name: "rt_n", count: true},
	RTMax:       {name: "rt_max_us", max: true},
}

// Name returns the measure's field name in the buckets ("status_2xx",
// "bot_ai", "bytes", "rt_us", "rt_max_us"…).
func (i Index) Name() string { return infos[i].name }

// IsMax reports whether the measure is a maximum (merged with max, written
// with $max) rather than a sum.
func (i Index) IsMax() bool { return infos[i].max }

// IsCount reports whether the measure counts hits (and so never exceeds
// Views), as opposed to summing bytes or microseconds.
func (i Index) IsCount() bool { return infos[i].count }

// Bot returns the measure counting class c, and false for Person.
func Bot(c botclass.Class) (Index, bool) {
	if c == botclass.Person || c >= botclass.NumClasses {
		return 0, false
	}
	return BotSearch + Index(c-1), true
}

// Vector holds every measure of a set of hits.
type Vector [N]uint64

// Hit is what one hit adds to a Vector.
type Hit struct {
	Status int            // 100..599
	Bot    botclass.Class // Person when not classified
	Bytes  uint64
	RT     int64 // response time in microseconds; negative: not logged
}

// Add adds one hit.
func (v *Vector) Add(h *Hit) {
	v[Views]++
	v[statusIndex[uint(h.Status/100)%8]]++
	if h.Bot != botclass.Person && h.Bot < botclass.NumClasses {
		v[BotSearch+Index(h.Bot-1)]++
	}
	v[Bytes] += h.Bytes
	if h.RT >= 0 {
		v[RTSum] += uint64(h.RT)
		v[RTCount]++
		v[RTMax] = max(v[RTMax], uint64(h.RT))
	}
}

// statusIndex maps a status's hundreds to its measure.
var statusIndex = [8]Index{StatusOther, StatusOther, Status2xx, Status3xx, Status4xx, Status5xx, StatusOther, StatusOther}

// Merge adds o to v: sums add, maxima take the greater.
func (v *Vector) Merge(o *Vector) {
	rtMax := max(v[RTMax], o[RTMax])
	for i := range v {
		v[i] += o[i]
	}
	v[RTMax] = rtMax // the one maximum (see the check below)
}

// Merge relies on RTMax being the only maximum.
var _ = func() bool {
	for i := range N {
		if i.IsMax() != (i == RTMax) {
			panic("measure: Merge handles RTMax as the only maximum")
		}
	}
	return true
}()

// IsZero reports whether every measure is 0.
func (v *Vector) IsZero() bool { return *v == Vector{} }

// version is the first byte of an encoded Vector.
const version = 1

// legacyLen is the length of a value written before measures existed: the
// views alone, a big-endian uint64.
const legacyLen = 8

// AppendBinary appends v's encoding to dst: a version byte, then N
// uvarints (at least N+1 bytes, so never legacyLen long).
func (v *Vector) AppendBinary(dst []byte) []byte {
	dst = append(dst, version)
	for _, n := range v {
		dst = binary.AppendUvarint(dst, n)
	}
	return dst
}

// Decode sets v from b: an encoding of AppendBinary, or a legacy value
// (the views alone, 8 bytes big-endian: a buffer written before measures
// existed).
func (v *Vector) Decode(b []byte) error {
	*v = Vector{}
	if len(b) == legacyLen {
		v[Views] = binary.BigEndian.Uint64(b)
		return nil
	}
	if len(b) == 0 || b[0] != version {
		return errBadVector
	}
	b = b[1:]
	for i := range v {
		n, w := binary.Uvarint(b)
		if w <= 0 {
			return errBadVector
		}
		v[i], b = n, b[w:]
	}
	if len(b) != 0 {
		return errBadVector
	}
	return nil
}

var errBadVector = errors.New("measure: bad encoded vector")

// String formats the non-zero measures ("views=3 status_2xx=3 bytes=812").
func (v *Vector) String() string {
	s := ""
	for i, n := range v {
		if n != 0 || i == int(Views) {
			if s != "" {
				s += " "
			}
			s += fmt.Sprintf("%s=%d", Index(i).Name(), n)
		}
	}
	return s
}

// OfViews returns a Vector of n views and no other measure (a hit whose
// facts are unknown: tests, tools).
func OfViews(n uint64) Vector {
	var v Vector
	v[Views] = n
	return v
}
