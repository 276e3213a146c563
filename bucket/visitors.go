package bucket

import (
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/visitor"
)

// Visitors: one document per site and salt period holds the site's
// HyperLogLog registers (package visitor), merged from every host with
// $max: {_id: "<period id>/<site>", metadata: {date, site, period}, p,
// registers: {"0": int32, ...}}. A register is a maximum: applying it
// twice changes nothing, so these documents need no batch guard.

// DefaultVisitorCollection is the collection of the visitor registers.
const DefaultVisitorCollection = "visitors"

// Field names of a visitors document.
const (
	FieldPeriod    = "period"
	FieldPrecision = "p"
	FieldRegisters = "registers"
)

// VisitorID returns the _id of site's visitors document of the period
// starting at start: "day:20261125/<site>".
func VisitorID(p visitor.Period, start int64, site string) string {
	return p.ID(start) + "/" + site
}

// registerPaths[i] is "registers.<i>", so an update allocates none.
var registerPaths = func() []string {
	out := make([]string, 1<<max(visitor.SitePrecision, visitor.PagePrecision))
	for i := range out {
		out[i] = FieldRegisters + "." + strconv.Itoa(i)
	}
	return out
}()

// RegisterPath returns the dotted path of register i (below
// 2^SitePrecision).
func RegisterPath(i int) string { return registerPaths[i] }

// VisitorKey returns the filter naming site's visitors document of the
// period starting at start: its _id and shard-key fields.
func VisitorKey(p visitor.Period, start int64, site string) bson.D {
	return bson.D{
		{Key: FieldID, Value: VisitorID(p, start, site)},
		{Key: FieldMetadata + "." + FieldSite, Value: site},
		{Key: FieldMetadata + "." + FieldDate, Value: bson.NewDateTimeFromTime(time.Unix(start, 0).UTC())},
	}
}

// VisitorZero returns the zero-filled visitors document of site and the
// period starting at start, of precision prec: every register present, so
// that $max never grows it.
func VisitorZero(p visitor.Period, start int64, site string, prec uint8) bson.D {
	regs := make(bson.D, 1<<prec)
	for i := range regs {
		regs[i] = bson.E{Key: strconv.Itoa(i), Value: int32(0)}
	}
	return bson.D{
		{Key: FieldID, Value: VisitorID(p, start, site)},
		{Key: FieldMetadata, Value: bson.D{
			{Key: FieldDate, Value: bson.NewDateTimeFromTime(time.Unix(start, 0).UTC())},
			{Key: FieldSite, Value: site},
			{Key: FieldPeriod, Value: p.String()},
		}},
		{Key: FieldPrecision, Value: int32(prec)},
		{Key: FieldRegisters, Value: regs},
	}
}
