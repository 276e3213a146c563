package flusher

import (
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/measure"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// pass is one of the three levels a batch is written in, in this order,
// then sitePass (the sites' daily totals), or donePass: the progress
// value once every pass is written. A batch whose progress a version
// without sitePass saved as done (3) is taken up at sitePass: that
// version wrote no site totals. A batch of the tails layout
// (buffer.LayoutTails) has two passes more, numbered after donePass so
// that every value saved before keeps its meaning: minuteTailPass after
// the minute pass (the cold pages' minute counts), coarseTailPass after
// the monthly pass (their daily and monthly counts); see passOrder.
type pass uint8

const (
	minutePass     = pass(bucket.Minute)
	dailyPass      = pass(bucket.Daily)
	monthlyPass    = pass(bucket.Monthly)
	sitePass       = pass(bucket.Levels)
	donePass       = sitePass + 1 // progress value once every pass is written
	minuteTailPass = donePass + 1
	coarseTailPass = donePass + 2
)

// level is the page-bucket level of a pass before sitePass.
func (p pass) level() bucket.Level { return bucket.Level(p) }

// tails reports whether p is a tail pass.
func (p pass) tails() bool { return p == minuteTailPass || p == coarseTailPass }

// tailLevels returns the levels whose tails tail pass p writes.
func (p pass) tailLevels() []bucket.Level {
	if p == minuteTailPass {
		return []bucket.Level{bucket.Minute}
	}
	return []bucket.Level{bucket.Daily, bucket.Monthly}
}

func (p pass) String() string {
	switch {
	case p == sitePass:
		return "sites"
	case p == minuteTailPass:
		return "minute tails"
	case p == coarseTailPass:
		return "daily and monthly tails"
	case p >= donePass:
		return "done"
	}
	return p.level().String()
}

// passOrder is the order a batch of each layout is written in, up to
// donePass. A minute-only batch ends where dailyPass begins.
var passOrder = map[buffer.Layout][]pass{
	buffer.LayoutPages: {minutePass, dailyPass, monthlyPass, sitePass, donePass},
	buffer.LayoutTails: {minutePass, minuteTailPass, dailyPass, monthlyPass, coarseTailPass, sitePass, donePass},
}

// next returns the pass after p in layout l's order (donePass after the
// last, or for a pass not in it).
func next(l buffer.Layout, p pass) pass {
	order := passOrder[l]
	for i, q := range order[:len(order)-1] {
		if q == p {
			return order[i+1]
		}
	}
	return donePass
}

// Chunker cuts a sealed batch's keys into the chunks of one level, at
// most max buckets each, exactly as the flusher writes them: its Add is a
// buffer.ReadTx.ScanBatch callback that stops the scan when max buckets are
// complete and remembers the key that starts the next chunk (Next). The
// fleet simulation (bench/fleet) plans batches with it.
type Chunker struct {
	bucket.Grouper
	next []byte // first key of the next chunk; nil when the batch ended
	err  error
	// Views sums the views of the keys the chunk took.
	Views uint64
}

// Reset starts a chunk of level l of at most max buckets.
func (c *Chunker) Reset(l bucket.Level, max int) {
	c.Grouper.Reset(l, max)
	c.next, c.err, c.Views = nil, nil, 0
}

// Add adds one batch key and its count; false stops the scan (the chunk is
// full, or the key could not be decoded: Err).
func (c *Chunker) Add(key []byte, v *measure.Vector) bool {
	site, page, sec, err := buffer.DecodeKey(key)
	if err != nil {
		c.err = err
		return false
	}
	if !c.Grouper.Add(site, page, sec, v) {
		c.next = append(c.next[:0], key...)
		return false
	}
	c.Views += v[measure.Views]
	return true
}

// Next returns the key the next chunk starts at, nil when the batch ended.
func (c *Chunker) Next() []byte { return c.next }

// Err returns the error of a key that could not be decoded.
func (c *Chunker) Err() error { return c.err }

// updates returns one guarded UpdateOne per bucket (bucket.Doc.Update):
// it applies the bucket's counts unless the document already took the
// batch of guard g.
func updates(docs []guarded, g bucket.Guard) []mongo.WriteModel {
	models := make([]mongo.WriteModel, len(docs))
	for i := range docs {
		filter, update := docs[i].Update(g)
		models[i] = mongo.NewUpdateOneModel().SetFilter(filter).SetUpdate(update)
	}
	return models
}
