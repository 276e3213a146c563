package flusher

// The site pass: each site day's totals and counts by dimension.

import (
	"cmp"
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/measure"
)

// heldMax bounds the values siteDest remembers; past it they are
// forgotten (a day's size then grows by them again: a bound reached
// sooner, never a count lost).
const heldMax = 1 << 16

// siteDest is the sites' daily totals: the collection, its index, and
// the values by dimension this flusher wrote to each day (held), which
// an update of the same day adds no bytes for (bucket.SiteDoc.Held).
type siteDest struct {
	coll    *mongo.Collection
	indexed bool                 // its index was created (under mu)
	held    map[heldKey]struct{} // under mu
	kept    int64                // held has no day before this one (under mu)
}

type heldKey struct {
	site  string
	day   int64
	d     dims.Dim
	value string
}

// holds returns the Held of site's day starting at day.
func (s *siteDest) holds(site string, day int64) func(dims.Dim, string) bool {
	return func(d dims.Dim, v string) bool {
		_, ok := s.held[heldKey{site, day, d, v}]
		return ok
	}
}

// wrote remembers the values d's update put in its day, and forgets the
// days before the previous one.
func (s *siteDest) wrote(d *bucket.SiteDoc) {
	if s.held == nil || len(s.held) >= heldMax {
		s.held = map[heldKey]struct{}{}
	}
	if from := d.Start - 86400; from > s.kept { // walked once a day, not per write
		for k := range s.held {
			if k.day < from {
				delete(s.held, k)
			}
		}
		s.kept = from
	}
	for dm, m := range d.Dims {
		for v := range m {
			s.held[heldKey{d.Site, d.Start, dims.Dim(dm), v}] = struct{}{}
		}
	}
}

// writeSites adds a full batch's counts (its coarse counts, as the daily
// pass) and its counts by dimension to the sites' days: one document per
// site and day of the batch, in chunks of chunk.ops, each applied once
// for the batch (guard g). A day without room for the batch's values
// (bucket.SiteSourcesLimit) takes them folded into dims.Other instead, in
// the same guarded update: one of the two applies, once; a batch whose
// values alone pass the bound is sent folded at once (a new day is
// inserted whole, which no size bounds). A pass cut
// short is done again whole: the documents that took the batch skip it.
// The days past the site totals' retention (the daily one,
// bucket.SiteLevel) are not written, and their hits are counted as
// ExpiredHits, as the buckets' are.
func (f *Flusher) writeSites(ctx context.Context, batchID string, g bucket.Guard) error {
	limit := int64(bucket.SiteSourcesLimit)
	if h := f.hooks; h != nil && h.sourcesLimit > 0 {
		limit = h.sourcesLimit
	}
	sites := bucket.Sites{Keep: f.maint.retention.Of(bucket.SiteLevel), Now: f.clock.Now(), Limit: limit}
	var scanErr error
	err := f.buf.View(func(tx *buffer.ReadTx) error {
		if err := tx.ScanCoarse(batchID, nil, func(key []byte, v *measure.Vector) bool {
			site, _, sec, err := buffer.DecodeKey(key)
			if err != nil {
				scanErr = err
				return false
			}
			sites.Add(site, sec, v)
			return true
		}); err != nil || scanErr != nil {
			return err
		}
		return tx.ScanDims(batchID, func(key []byte, n uint64) bool {
			site, d, value, day, err := buffer.DecodeDimKey(key)
			if err != nil {
				scanErr = err
				return false
			}
			sites.AddDim(site, day, d, value, n)
			return true
		})
	})
	if err = cmp.Or(err, scanErr); err != nil {
		return err
	}
	docs := sites.Docs()
	if sites.Dropped > 0 {
		f.expiredHits(f.sites.coll.Name(), bucket.SiteLevel, sites.Dropped)
	}
	if len(docs) > 0 && !f.sites.indexed {
		ictx, cancel := context.WithTimeout(ctx, f.timeout)
		_, err := f.sites.coll.Indexes().CreateOne(ictx, mongo.IndexModel{Keys: bucket.SiteIndex()})
		cancel()
		if err != nil && (!refused(err) || authFailure(err)) {
			return fmt.Errorf("create index on %s: %w", f.sites.coll.Name(), err)
		}
		f.sites.indexed = true
	}
	var past int // the days the batch's values alone pass the bound of
	for i := range docs {
		docs[i].Held = f.sites.holds(docs[i].Site, docs[i].Start)
		if !docs[i].Fits(nil, g) { // no room in an empty day: none in any (a new day is inserted whole, unbounded)
			docs[i] = docs[i].Folded()
			past++
		}
	}
	if past > 0 {
		f.stats.sourcesFolded.Add(uint64(past))
		f.log.Warn("a site day's counts by dimension are past their bound: this batch's values are counted as (other)",
			"collection", f.sites.coll.Name(), "days", past, "bound", limit)
	}
	for len(docs) > 0 {
		n := min(len(docs), f.chunk.ops)
		gs := make([]guarded, n)
		for i := range gs {
			gs[i] = &docs[i]
		}
		full, err := f.applyOnce(ctx, sitePass, f.sites.coll, g, gs, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", f.sites.coll.Name(), err)
		}
		if len(full) > 0 {
			folded := make([]bucket.SiteDoc, len(full))
			fg := make([]guarded, len(full))
			for j, i := range full {
				folded[j] = docs[i].Folded()
				fg[j] = &folded[j]
				docs[i] = folded[j] // what the day took, for held
			}
			f.stats.sourcesFolded.Add(uint64(len(full)))
			f.log.Warn("a site day's counts by dimension are past their bound: this batch's values are counted as (other)",
				"collection", f.sites.coll.Name(), "days", len(full), "bound", bucket.SiteSourcesLimit)
			if _, err := f.applyOnce(ctx, sitePass, f.sites.coll, g, fg, nil); err != nil {
				return fmt.Errorf("%s: %w", f.sites.coll.Name(), err)
			}
		}
		for i := range docs[:n] {
			f.sites.wrote(&docs[i])
		}
		docs = docs[n:]
		f.heartbeat()
		f.prog.made(f.clock.Now())
	}
	return nil
}
