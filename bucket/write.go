package bucket

import (
	"time"

	"github.com/logtally/logtally/measure"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Counter is one $inc term: a slot of a family and a count.
type Counter struct {
	Slot int
	N    int64
}

// Doc is one bucket's share of a batch: the sums of the hits that fall in
// it.
type Doc struct {
	Level      Level
	ID         string
	Site, Page string
	// Start and End bound the bucket's period (Unix seconds, UTC).
	Start, End int64
	// Total is the hits added.
	Total int64
	// counts holds each family's counters (in document order), by
	// ascending slot.
	counts [][]Counter
	// meas holds the measures by measure slot (MeasureSlots), ascending.
	meas []slotMeasures
}

// NewDoc returns the empty l document of site and page holding sec.
func NewDoc(l Level, site, page string, sec int64) Doc {
	d := Doc{Level: l, Site: site, Page: page}
	d.Start, d.End = l.Bounds(sec)
	d.ID = l.ID(d.Start, site, page)
	return d
}

// reset empties d for level l, keeping its counter slices.
func (d *Doc) reset(l Level) {
	n := len(shapes[l].families)
	if cap(d.counts) < n {
		d.counts = make([][]Counter, n)
	}
	d.counts = d.counts[:n]
	for i := range d.counts {
		d.counts[i] = d.counts[i][:0]
	}
	d.meas = d.meas[:0]
	d.Level, d.Total = l, 0
}

// Add adds the hits of v at sec, which lies in d's period: their views to
// the counter families and the total, the other measures to the slot of
// the level's measure grain. Hits arrive in time order.
func (d *Doc) Add(sec int64, v *measure.Vector) {
	if n := len(shapes[d.Level].families); len(d.counts) != n {
		d.counts = make([][]Counter, n)
	}
	off := sec - d.Start
	n := int64(v[measure.Views])
	for i, f := range shapes[d.Level].families {
		d.counts[i] = bump(d.counts[i], f.Slots.index(off), n)
	}
	d.Total += n
	d.meas = bumpMeasures(d.meas, measureSlots[d.Level].measureIndex(off), v)
}

// bump adds n to the last counter if it is i, else appends {i, n}. Hits
// arrive in time order, so equal slots are adjacent.
func bump(cs []Counter, i int, n int64) []Counter {
	if k := len(cs) - 1; k >= 0 && cs[k].Slot == i {
		cs[k].N += n
		return cs
	}
	return append(cs, Counter{i, n})
}

// AppendKey appends d's _id and shard-key fields (Level.AppendKey).
func (d *Doc) AppendKey(f bson.D) bson.D {
	return d.Level.AppendKey(f, d.ID, d.Site, d.Page, d.Start)
}

// Inc returns d's $inc document: each family's counters (the finest
// first), the total, then the measures summed (measureInc).
func (d *Doc) Inc() bson.D {
	n := 1
	for _, cs := range d.counts {
		n += len(cs)
	}
	inc := make(bson.D, 0, n+len(d.meas)*int(measure.N))
	fs := shapes[d.Level].families
	for i := len(d.counts) - 1; i >= 0; i-- {
		for _, c := range d.counts[i] {
			inc = append(inc, bson.E{Key: fs[i].paths[c.Slot], Value: c.N})
		}
	}
	inc = append(inc, bson.E{Key: shapes[d.Level].total, Value: d.Total})
	for _, s := range d.meas {
		inc = measureInc(inc, &measurePaths[d.Level], s.slot, &s.v, true)
	}
	return inc
}

// Max returns d's $max document (the measures that are maxima), nil when
// they are all 0.
func (d *Doc) Max() bson.D {
	var mx bson.D
	for _, s := range d.meas {
		mx = measureMax(mx, &measurePaths[d.Level], s.slot, &s.v)
	}
	return mx
}

// Update returns the guarded update of d for the batch of guard g: it
// applies d's counts unless the document already took that batch from
// that writer. The filter carries the shard key next to the _id
// (AppendKey); the guard is the same as without it, since those fields
// never change once the bucket is inserted.
func (d *Doc) Update(g Guard) (filter, update bson.D) {
	filter = g.filter(d.AppendKey(make(bson.D, 0, 5)))
	return filter, guardedUpdate(d.Inc(), d.Max(), g)
}

// guardedUpdate is {$inc: inc, $max: mx (when not empty), $set: {<g's
// field>: <g's batch>}}.
func guardedUpdate(inc, mx bson.D, g Guard) bson.D {
	update := bson.D{{Key: "$inc", Value: inc}}
	if len(mx) > 0 {
		update = append(update, bson.E{Key: "$max", Value: mx})
	}
	return append(update, bson.E{Key: "$set", Value: g.set()})
}

// FindApplied returns the filter selecting those of docs (all of one
// level) that took the batch of guard g: {$or: [{_id, <shard key>}, ...],
// <g's field>: <g's batch>}, so that a router asks only the shards
// holding them.
func FindApplied(docs []Doc, g Guard) bson.D {
	keys := make([]bson.D, len(docs))
	for i := range docs {
		keys[i] = docs[i].AppendKey(make(bson.D, 0, 4))
	}
	return FindAppliedKeys(keys, g)
}

// FindAppliedKeys is FindApplied of documents given by their keys
// (AppendKey of a Doc or a SiteDoc).
func FindAppliedKeys(keys []bson.D, g Guard) bson.D {
	or := make(bson.A, len(keys))
	for i := range keys {
		or[i] = keys[i]
	}
	return append(bson.D{{Key: "$or", Value: or}}, g.set()...)
}

// DocID returns d's _id.
func (d *Doc) DocID() string { return d.ID }

// Zero returns d's whole document with every counter zero and an empty
// applied map: the document a bucket is created as.
func (d *Doc) Zero() bson.D {
	date := bson.NewDateTimeFromTime(time.Unix(d.Start, 0).UTC())
	doc := make(bson.D, 0, 8)
	doc = append(doc, bson.E{Key: FieldID, Value: d.ID})
	if d.Level == Minute {
		doc = append(doc,
			bson.E{Key: FieldSite, Value: d.Site},
			bson.E{Key: FieldPage, Value: d.Page},
			bson.E{Key: FieldTimestamp, Value: date})
	} else {
		doc = append(doc, bson.E{Key: FieldMetadata, Value: bson.D{
			{Key: FieldDate, Value: date}, {Key: FieldSite, Value: d.Site}, {Key: FieldPage, Value: d.Page}}})
	}
	sh := &shapes[d.Level]
	doc = append(doc, bson.E{Key: sh.total, Value: int64(0)})
	for i := range sh.families {
		f := &sh.families[i]
		doc = append(doc, bson.E{Key: f.Field, Value: f.Slots.zero(d.Start, d.End)})
	}
	doc = append(doc, bson.E{Key: FieldMeasures, Value: zeroMeasures(d.Level, d.Start, d.End)})
	return append(doc, bson.E{Key: FieldApplied, Value: bson.D{}})
}

// Grouper groups a batch's hits, in key order (site, page, time), into
// the documents of one level, at most Max of them: one chunk of a pass.
type Grouper struct {
	Level Level
	Max   int
	// Docs are the chunk's documents, in key order.
	Docs []Doc
	// Keep, when not 0, is the level's retention and Now the time it is
	// judged at: the hits of a bucket expired at Now (Retention.Expired)
	// are skipped and added to Dropped.
	Keep    time.Duration
	Now     time.Time
	Dropped uint64
	// Cold, when not nil, reports the hits whose page is cold in its
	// period (its plan's, Plan.Route): they go to a tail, not to a
	// document of the chunk; they are skipped, and their views added to
	// Skipped. It is asked once per bucket (a cold bucket's other hits
	// follow it).
	Cold    func(site, page []byte, sec int64) bool
	Skipped uint64
	idBuf   []byte
	// cold is the last bucket Cold said is cold.
	cold struct {
		site, page string
		start, end int64
	}
}

// Reset starts a new chunk of level l of at most max documents.
func (g *Grouper) Reset(l Level, max int) {
	g.Level, g.Max = l, max
	g.Docs = g.Docs[:0]
	g.Keep, g.Now, g.Dropped = 0, time.Time{}, 0
	g.Cold, g.Skipped = nil, 0
	g.cold.end = 0
}

// skipCold reports whether the hits of site and page at sec are cold
// (Cold), remembering the last cold bucket.
func (g *Grouper) skipCold(site, page []byte, sec int64) bool {
	c := &g.cold
	if sec >= c.start && sec < c.end && string(site) == c.site && string(page) == c.page {
		return true
	}
	if !g.Cold(site, page, sec) {
		return false
	}
	c.start, c.end = g.Level.Bounds(sec)
	if string(site) != c.site {
		c.site = string(site)
	}
	if string(page) != c.page {
		c.page = string(page)
	}
	return true
}

// Add adds the hits v of site and page at sec. It returns false, adding
// nothing, when they start a new document and Max documents are complete:
// the next chunk starts with them.
func (g *Grouper) Add(site, page []byte, sec int64, v *measure.Vector) bool {
	if k := len(g.Docs) - 1; k >= 0 {
		d := &g.Docs[k]
		if sec >= d.Start && sec < d.End && string(site) == d.Site && string(page) == d.Page {
			d.Add(sec, v)
			return true
		}
		if len(g.Docs) >= g.Max {
			return false
		}
	}
	if g.Keep > 0 && g.Level.Unit().Expired(sec, g.Keep, g.Now) {
		g.Dropped += v[measure.Views] // the bucket is past its retention
		return true
	}
	if g.Cold != nil && g.skipCold(site, page, sec) {
		g.Skipped += v[measure.Views] // a tail takes them
		return true
	}
	var prevSite, prevPage string
	if k := len(g.Docs) - 1; k >= 0 {
		prevSite, prevPage = g.Docs[k].Site, g.Docs[k].Page
	}
	// Reuse the document slots and their counter slices of earlier chunks.
	if len(g.Docs) < cap(g.Docs) {
		g.Docs = g.Docs[:len(g.Docs)+1]
	} else {
		g.Docs = append(g.Docs, Doc{})
	}
	d := &g.Docs[len(g.Docs)-1]
	d.reset(g.Level)
	d.Start, d.End = g.Level.Bounds(sec)
	// Consecutive documents mostly share the site and often the page.
	d.Site, d.Page = prevSite, prevPage
	if string(site) != prevSite {
		d.Site = string(site)
	}
	if string(page) != prevPage {
		d.Page = string(page)
	}
	g.idBuf = g.Level.AppendID(g.idBuf[:0], d.Start, site, page)
	d.ID = string(g.idBuf)
	d.Add(sec, v)
	return true
}
