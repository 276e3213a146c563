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
// registers: {"0": int32, ...}}, zero-filled; one per page of the site
// and period holds the page's, at a lower precision: {_id: "<period
// id>/<site><page>", metadata: {date, site, page, period}, p, registers:
// {...}}, holding only the registers that rose (a page's are mostly zero:
// a page with 100 visitors has about 100 of its 1,024). A register is a
// maximum: applying it twice changes nothing, so these documents need no
// batch guard.

// DefaultVisitorCollection is the collection of the visitor registers.
const DefaultVisitorCollection = "visitors"

// VisitorLevel returns the level whose retention the visitors documents
// of salt period p have: the level of the same period (Daily for a day,
// Monthly for a month). They expire as its buckets do, by the same rule
// (Retention.Expired, Cutoff, TTLSeconds of that level), dated by
// metadata.date and told apart by metadata.period, which every visitors
// document has held since the first version.
func VisitorLevel(p visitor.Period) Level {
	for l := range Level(Levels) {
		if l.Unit() == p.Unit() {
			return l
		}
	}
	return Monthly // unreachable: every salt period is a level's period
}

// VisitorPeriodFilter selects the visitors documents of salt period p
// (metadata.period): the TTL index's partialFilterExpression and the
// deleteMany's filter.
func VisitorPeriodFilter(p visitor.Period) bson.D {
	return bson.D{{Key: FieldMetadata + "." + FieldPeriod, Value: p.String()}}
}

// Field names of a visitors document.
const (
	FieldPeriod    = "period"
	FieldPrecision = "p"
	FieldRegisters = "registers"
)

// VisitorID returns the _id of the visitors document of site (page
// empty) or of its page, for the period starting at start:
// "day:20261125/<site>", "day:20261125/<site><page>".
func VisitorID(p visitor.Period, start int64, site, page string) string {
	return p.ID(start) + "/" + site + page
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

// VisitorKey returns the filter naming the visitors document of site
// (page empty) or its page for the period starting at start: its _id and
// the fields a sharded collection would be keyed on.
func VisitorKey(p visitor.Period, start int64, site, page string) bson.D {
	f := bson.D{
		{Key: FieldID, Value: VisitorID(p, start, site, page)},
		{Key: FieldMetadata + "." + FieldSite, Value: site},
	}
	if page != "" {
		f = append(f, bson.E{Key: FieldMetadata + "." + FieldPage, Value: page})
	}
	return append(f, bson.E{Key: FieldMetadata + "." + FieldDate, Value: bson.NewDateTimeFromTime(time.Unix(start, 0).UTC())})
}

// VisitorZero returns the visitors document of site (page empty) or its
// page for the period starting at start, of precision prec, as it is
// created: a site's with every register present and zero, so that $max
// never grows it; a page's with none (its registers come as they rise).
func VisitorZero(p visitor.Period, start int64, site, page string, prec uint8) bson.D {
	regs := bson.D{}
	if page == "" {
		regs = make(bson.D, 1<<prec)
		for i := range regs {
			regs[i] = bson.E{Key: strconv.Itoa(i), Value: int32(0)}
		}
	}
	meta := bson.D{
		{Key: FieldDate, Value: bson.NewDateTimeFromTime(time.Unix(start, 0).UTC())},
		{Key: FieldSite, Value: site},
	}
	if page != "" {
		meta = append(meta, bson.E{Key: FieldPage, Value: page})
	}
	meta = append(meta, bson.E{Key: FieldPeriod, Value: p.String()})
	return bson.D{
		{Key: FieldID, Value: VisitorID(p, start, site, page)},
		{Key: FieldMetadata, Value: meta},
		{Key: FieldPrecision, Value: int32(prec)},
		{Key: FieldRegisters, Value: regs},
	}
}
