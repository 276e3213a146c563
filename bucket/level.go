package bucket

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/period"
)

// Level is one of the three bucket granularities, in the order a batch is
// written in.
type Level uint8

// The levels.
const (
	Minute Level = iota
	Daily
	Monthly
)

// Levels is the number of levels.
const Levels = 3

// String returns "minute", "daily" or "monthly".
func (l Level) String() string {
	switch l {
	case Minute:
		return "minute"
	case Daily:
		return "daily"
	case Monthly:
		return "monthly"
	}
	return "level(" + string(rune('0'+l)) + ")"
}

// Field names outside the counters.
const (
	// FieldID is every bucket's _id.
	FieldID = "_id"
	// FieldApplied maps each instance that wrote a bucket to its last
	// batch applied to it: the exactly-once guard's memory.
	FieldApplied = "applied"
	// FieldMetadata holds the date, site and page of daily and monthly
	// buckets.
	FieldMetadata = "metadata"
	// FieldSite, FieldPage and FieldDate are a bucket's site, page and
	// period start: top-level in minute buckets (the date named
	// FieldTimestamp there), under FieldMetadata in the others.
	FieldSite      = "site"
	FieldPage      = "page"
	FieldDate      = "date"
	FieldTimestamp = "timestamp"
)

// Unit returns the calendar unit of l's periods: a minute, a day, a
// month. Every bound, id and expiry of a bucket is that unit's.
func (l Level) Unit() period.Unit { return units[l] }

var units = [Levels]period.Unit{Minute: period.Minute, Daily: period.Day, Monthly: period.Month}

// Bounds returns the start and end (Unix seconds, UTC) of the l bucket
// holding sec.
func (l Level) Bounds(sec int64) (start, end int64) { return l.Unit().Bounds(sec) }

// AppendID appends the _id of the l bucket starting at start (Unix
// seconds) of site and page: "<time>/<site><page>". Ids do not collide as
// long as pages start with "/" and sites contain none.
func (l Level) AppendID(dst []byte, start int64, site, page []byte) []byte {
	dst = l.Unit().AppendID(dst, start)
	dst = append(dst, '/')
	dst = append(dst, site...)
	return append(dst, page...)
}

// ID returns the _id of the l bucket starting at start (see AppendID).
func (l Level) ID(start int64, site, page string) string {
	return l.Unit().ID(start) + "/" + site + page
}

// Shard-key fields of each level, as they appear in a filter: a cluster
// shards minutes on {site, page, timestamp} and daily and monthly on
// {metadata.site, metadata.page, metadata.date} (docs/scaling.md). The
// collections' query indexes are the same fields.
var shardKeys = [Levels][3]string{
	Minute:  {FieldSite, FieldPage, FieldTimestamp},
	Daily:   {FieldMetadata + "." + FieldSite, FieldMetadata + "." + FieldPage, FieldMetadata + "." + FieldDate},
	Monthly: {FieldMetadata + "." + FieldSite, FieldMetadata + "." + FieldPage, FieldMetadata + "." + FieldDate},
}

// SiteField, PageField and TimeField are the dotted paths of an l
// bucket's site, page and period start (a BSON date).
func (l Level) SiteField() string { return shardKeys[l][0] }

// PageField: see SiteField.
func (l Level) PageField() string { return shardKeys[l][1] }

// TimeField: see SiteField.
func (l Level) TimeField() string { return shardKeys[l][2] }

// Index is the query index (and suggested shard key) of l's collection:
// site, page, time, ascending.
func (l Level) Index() bson.D {
	k := &shardKeys[l]
	return bson.D{{Key: k[0], Value: 1}, {Key: k[1], Value: 1}, {Key: k[2], Value: 1}}
}

// AppendKey appends the _id and shard-key fields of the l bucket id of
// site and page starting at start to the filter f. With the whole shard
// key in it, a router sends the operation to the one shard holding the
// bucket instead of broadcasting it; on an unsharded collection the _id
// alone decides, the other fields only repeat what the _id says.
func (l Level) AppendKey(f bson.D, id, site, page string, start int64) bson.D {
	keys := &shardKeys[l]
	return append(f,
		bson.E{Key: FieldID, Value: id},
		bson.E{Key: keys[0], Value: site},
		bson.E{Key: keys[1], Value: page},
		bson.E{Key: keys[2], Value: bson.NewDateTimeFromTime(time.Unix(start, 0).UTC())},
	)
}

// Range returns the find filter of site, page (if not empty) and the l
// buckets starting in [from, to): the shard key's fields, so a sharded
// cluster can target it.
func (l Level) Range(site, page string, from, to time.Time) bson.D {
	f := bson.D{{Key: l.SiteField(), Value: site}}
	if page != "" {
		f = append(f, bson.E{Key: l.PageField(), Value: page})
	}
	return append(f, bson.E{Key: l.TimeField(), Value: bson.D{
		{Key: "$gte", Value: bson.NewDateTimeFromTime(from)},
		{Key: "$lt", Value: bson.NewDateTimeFromTime(to)},
	}})
}
