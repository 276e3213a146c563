package flusher

import (
	"fmt"
	"strconv"
	"time"

	"github.com/logtally/logtally/buffer"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// pass is one of the three bucket granularities a batch is written in, in
// this order.
type pass uint8

const (
	minutePass pass = iota
	dailyPass
	monthlyPass
	donePass // progress value once every pass is written
)

func (p pass) String() string {
	switch p {
	case minutePass:
		return "minute"
	case dailyPass:
		return "daily"
	case monthlyPass:
		return "monthly"
	}
	return "done"
}

// bounds returns the start and end (Unix seconds, UTC) of the p bucket
// holding sec.
func (p pass) bounds(sec int64) (start, end int64) {
	switch p {
	case minutePass:
		start = sec - mod(sec, 60)
		return start, start + 60
	case dailyPass:
		start = sec - mod(sec, 86400)
		return start, start + 86400
	default:
		y, m, _ := time.Unix(sec, 0).UTC().Date()
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Unix(),
			time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC).Unix()
	}
}

func mod(a, b int64) int64 {
	r := a % b
	if r < 0 {
		r += b
	}
	return r
}

// idLayout is the time part of a p bucket's _id.
func (p pass) idLayout() string {
	switch p {
	case minutePass:
		return "200601021504"
	case dailyPass:
		return "20060102"
	default:
		return "200601"
	}
}

// counter is one $inc term: an index into a field-name table and a count.
type counter struct {
	i int
	n int64
}

// bucket is one document's share of a batch: the sums of the keys that fall
// in it.
type bucket struct {
	id         string
	site, page string
	start, end int64
	fine       []counter // seconds.<s> | minute.<h>.<m> | daily.<d>, ascending
	coarse     []counter // hourly.<h> (daily buckets only), ascending
	total      int64
}

// add counts n hits at sec, which lies in b.
func (b *bucket) add(p pass, sec int64, n int64) {
	off := sec - b.start
	var fine, coarse int
	switch p {
	case minutePass:
		fine = int(off)
	case dailyPass:
		fine, coarse = int(off/60), int(off/3600)
		b.coarse = bump(b.coarse, coarse, n)
	default:
		fine = int(off/86400) + 1
	}
	b.fine = bump(b.fine, fine, n)
	b.total += n
}

// bump adds n to the last counter if it is i, else appends {i, n}. Keys
// arrive in time order, so equal indexes are adjacent.
func bump(cs []counter, i int, n int64) []counter {
	if k := len(cs) - 1; k >= 0 && cs[k].i == i {
		cs[k].n += n
		return cs
	}
	return append(cs, counter{i, n})
}

// chunker groups consecutive batch keys into buckets of one pass. Its add
// method is a buffer.ScanBatch callback: it stops the scan when max buckets
// are complete and remembers the key that starts the next one.
type chunker struct {
	pass    pass
	max     int
	buckets []bucket
	next    []byte // first key of the next chunk; nil when the batch ended
	err     error
	idBuf   []byte
	// expiredBy, when not 0, is the end (Unix seconds) at or before which
	// a bucket has expired: its counts are skipped and added to dropped.
	expiredBy int64
	dropped   uint64
}

func (c *chunker) reset(p pass, max int) {
	c.pass, c.max = p, max
	c.buckets, c.next, c.err = c.buckets[:0], nil, nil
	c.expiredBy, c.dropped = 0, 0
}

func (c *chunker) add(key []byte, n uint64) bool {
	site, page, sec, err := buffer.DecodeKey(key)
	if err != nil {
		c.err = err
		return false
	}
	if k := len(c.buckets) - 1; k >= 0 {
		b := &c.buckets[k]
		if sec >= b.start && sec < b.end && string(site) == b.site && string(page) == b.page {
			b.add(c.pass, sec, int64(n))
			return true
		}
		if len(c.buckets) >= c.max {
			c.next = append(c.next[:0], key...)
			return false
		}
	}
	if c.expiredBy != 0 {
		if _, end := c.pass.bounds(sec); end <= c.expiredBy {
			c.dropped += n // the bucket is past its retention
			return true
		}
	}
	var prevSite, prevPage string
	if k := len(c.buckets) - 1; k >= 0 {
		prevSite, prevPage = c.buckets[k].site, c.buckets[k].page
	}
	// Reuse the bucket slots and their counter slices of earlier chunks.
	if len(c.buckets) < cap(c.buckets) {
		c.buckets = c.buckets[:len(c.buckets)+1]
	} else {
		c.buckets = append(c.buckets, bucket{})
	}
	b := &c.buckets[len(c.buckets)-1]
	b.start, b.end = c.pass.bounds(sec)
	b.fine, b.coarse, b.total = b.fine[:0], b.coarse[:0], 0
	// Consecutive buckets mostly share the site and often the page.
	b.site, b.page = prevSite, prevPage
	if string(site) != prevSite {
		b.site = string(site)
	}
	if string(page) != prevPage {
		b.page = string(page)
	}
	c.idBuf = time.Unix(b.start, 0).UTC().AppendFormat(c.idBuf[:0], c.pass.idLayout())
	c.idBuf = append(c.idBuf, '/')
	c.idBuf = append(c.idBuf, site...)
	c.idBuf = append(c.idBuf, page...)
	b.id = string(c.idBuf)
	b.add(c.pass, sec, int64(n))
	return true
}

// Field-name tables, so building an update allocates no strings.
var (
	secondFields [60]string   // seconds.<s>
	minuteFields [1440]string // minute.<h>.<m>, by minute of day
	hourFields   [24]string   // hourly.<h>
	dayFields    [32]string   // daily.<d>, 1-based
)

// Zero-filled sub-documents, encoded once and shared by every new bucket.
var (
	zeroSeconds bson.Raw     // {"0": 0, ..., "59": 0}
	zeroHours   bson.Raw     // {"0": 0, ..., "23": 0}
	zeroMinutes bson.Raw     // {"0": {"0": 0, ..., "59": 0}, ..., "23": {...}}
	zeroDays    [32]bson.Raw // zeroDays[n]: {"1": 0, ..., "<n>": 0}, n in 28..31
)

func init() {
	for s := range 60 {
		secondFields[s] = "seconds." + strconv.Itoa(s)
	}
	for m := range 1440 {
		minuteFields[m] = "minute." + strconv.Itoa(m/60) + "." + strconv.Itoa(m%60)
	}
	for h := range 24 {
		hourFields[h] = "hourly." + strconv.Itoa(h)
	}
	for d := 1; d < 32; d++ {
		dayFields[d] = "daily." + strconv.Itoa(d)
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
		panic(fmt.Sprintf("flusher: marshal zero document: %v", err))
	}
	return b
}

// Shard-key fields of each pass, as they appear in a filter: a cluster
// shards minutes on {site, page, timestamp} and daily and monthly on
// {metadata.site, metadata.page, metadata.date} (docs/scaling.md).
var shardKeyFields = [3][3]string{
	minutePass:  {"site", "page", "timestamp"},
	dailyPass:   {"metadata.site", "metadata.page", "metadata.date"},
	monthlyPass: {"metadata.site", "metadata.page", "metadata.date"},
}

// appendShardKey appends b's _id and its shard-key fields, the values its
// zero-filled document (zeroDoc) holds, to the filter f. With the whole
// shard key in it, a router sends the operation to the one shard holding
// b instead of broadcasting it; on an unsharded collection the _id alone
// decides, the other fields only repeat what the _id says.
func appendShardKey(f bson.D, p pass, b *bucket) bson.D {
	keys := &shardKeyFields[p]
	return append(f,
		bson.E{Key: "_id", Value: b.id},
		bson.E{Key: keys[0], Value: b.site},
		bson.E{Key: keys[1], Value: b.page},
		bson.E{Key: keys[2], Value: bson.NewDateTimeFromTime(time.Unix(b.start, 0).UTC())},
	)
}

// updates returns one guarded UpdateOne per bucket: it applies the bucket's
// counts unless the document already took batch batchID from this instance.
// applied is "applied.<instance>". The filter carries the bucket's shard key
// next to its _id (appendShardKey); the guard is the same as without it,
// since those fields never change once the bucket is inserted.
func updates(p pass, buckets []bucket, applied, batchID string) []mongo.WriteModel {
	guard := bson.D{{Key: "$ne", Value: batchID}}
	set := bson.D{{Key: applied, Value: batchID}}
	models := make([]mongo.WriteModel, len(buckets))
	for i := range buckets {
		b := &buckets[i]
		inc := make(bson.D, 0, len(b.fine)+len(b.coarse)+1)
		switch p {
		case minutePass:
			for _, c := range b.fine {
				inc = append(inc, bson.E{Key: secondFields[c.i], Value: c.n})
			}
			inc = append(inc, bson.E{Key: "totalViews", Value: b.total})
		case dailyPass:
			for _, c := range b.fine {
				inc = append(inc, bson.E{Key: minuteFields[c.i], Value: c.n})
			}
			for _, c := range b.coarse {
				inc = append(inc, bson.E{Key: hourFields[c.i], Value: c.n})
			}
			inc = append(inc, bson.E{Key: "daily", Value: b.total})
		default:
			for _, c := range b.fine {
				inc = append(inc, bson.E{Key: dayFields[c.i], Value: c.n})
			}
			inc = append(inc, bson.E{Key: "total", Value: b.total})
		}
		filter := appendShardKey(make(bson.D, 0, 5), p, b)
		filter = append(filter, bson.E{Key: applied, Value: guard})
		models[i] = mongo.NewUpdateOneModel().
			SetFilter(filter).
			SetUpdate(bson.D{{Key: "$inc", Value: inc}, {Key: "$set", Value: set}})
	}
	return models
}

// zeroDoc returns the whole, zero-filled p document for b.
func zeroDoc(p pass, b *bucket) bson.D {
	date := bson.NewDateTimeFromTime(time.Unix(b.start, 0).UTC())
	applied := bson.E{Key: "applied", Value: bson.D{}}
	switch p {
	case minutePass:
		return bson.D{
			{Key: "_id", Value: b.id},
			{Key: "site", Value: b.site},
			{Key: "page", Value: b.page},
			{Key: "timestamp", Value: date},
			{Key: "totalViews", Value: int64(0)},
			{Key: "seconds", Value: zeroSeconds},
			applied,
		}
	case dailyPass:
		return bson.D{
			{Key: "_id", Value: b.id},
			{Key: "metadata", Value: bson.D{{Key: "date", Value: date}, {Key: "site", Value: b.site}, {Key: "page", Value: b.page}}},
			{Key: "daily", Value: int64(0)},
			{Key: "hourly", Value: zeroHours},
			{Key: "minute", Value: zeroMinutes},
			applied,
		}
	default:
		days := (b.end - b.start) / 86400
		return bson.D{
			{Key: "_id", Value: b.id},
			{Key: "metadata", Value: bson.D{{Key: "date", Value: date}, {Key: "site", Value: b.site}, {Key: "page", Value: b.page}}},
			{Key: "total", Value: int64(0)},
			{Key: "daily", Value: zeroDays[days]},
			applied,
		}
	}
}
