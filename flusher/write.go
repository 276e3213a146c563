package flusher

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/measure"
)

// writeBatch writes every chunk of every pass of batch from its saved
// progress on, in the order of the batch's layout (passOrder).
func (f *Flusher) writeBatch(ctx context.Context, batch *buffer.Batch) error {
	g := f.guard(batch.ID)
	r := ResumeOf(batch)
	r.Layout = f.layoutOf(batch)
	a := &attempt{batch: batch.ID, layout: r.Layout, plans: map[planKey]*bucket.Plan{}}
	p, from, last := r.at()
	for chunk := 1; !r.written(p, last); chunk++ {
		var err error
		switch {
		case p == sitePass:
			if err := f.writeSites(ctx, batch.ID, g); err != nil {
				return fmt.Errorf("%s pass: %w", p, err)
			}
			from = nil
		case p.tails():
			if from, err = f.writeTails(ctx, a, p, from, g); err != nil {
				return fmt.Errorf("%s pass: %w", p, err)
			}
		default:
			if from, err = f.writeLevel(ctx, a, p, from, g, chunk); err != nil {
				return err
			}
		}
		if from == nil {
			p = next(r.Layout, p)
		}
		if err := f.buf.SaveProgress(batch.ID, encodeProgress(p, from)); err != nil {
			return err
		}
		f.heartbeat()
		f.prog.made(f.clock.Now()) // a chunk acknowledged
		if h := f.hooks; h != nil && h.afterChunk != nil {
			if err := h.afterChunk(p, chunk); err != nil {
				return err
			}
		}
	}
	return nil
}

// layoutOf returns the layout batch is written in: its own (a test may
// replace it: hooks.layout).
func (f *Flusher) layoutOf(batch *buffer.Batch) buffer.Layout {
	if h := f.hooks; h != nil && h.layout != nil {
		return h.layout(batch.Layout)
	}
	return batch.Layout
}

// writeLevel writes the chunk of level pass p that starts at from (nil:
// the pass's first key) and returns the key the next chunk starts at
// (nil: the pass is written). In a batch of the tails layout the chunk
// holds the hot pages' buckets only (attempt.cold).
func (f *Flusher) writeLevel(ctx context.Context, a *attempt, p pass, from []byte, g bucket.Guard, chunk int) ([]byte, error) {
	f.ch.Reset(p.level(), f.chunk.ops)
	f.ch.Keep, f.ch.Now = f.maint.retention.Of(p.level()), f.clock.Now()
	if a.layout == buffer.LayoutTails {
		if err := f.loadRoutes(ctx, a, p != minutePass); err != nil {
			return nil, fmt.Errorf("%s pass: %w", p, err)
		}
		f.ch.Cold = a.cold(p.level())
	}
	if err := f.scan(p != minutePass, a.batch, from, f.ch.Add); err != nil {
		return nil, err
	}
	if err := cmp.Or(f.ch.Err(), a.err); err != nil {
		return nil, fmt.Errorf("%s pass: %w", p, err)
	}
	if len(f.ch.Docs) > 0 {
		if err := f.writeChunk(ctx, p, g, f.ch.Docs); err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil && f.chunk.shrink() {
				// The server is slower than Timeout for this many
				// updates: try smaller chunks, so a slow server still
				// makes progress instead of timing out forever.
				f.log.Warn("chunk timed out: smaller chunks from now on", "updates_per_chunk", f.chunk.ops)
			}
			return nil, fmt.Errorf("%s chunk %d: %w", f.colls[p].Name(), chunk, err)
		}
		f.log.Debug("chunk written", "batch", a.batch, "pass", p.String(), "chunk", chunk, "buckets", len(f.ch.Docs), "views", f.ch.Views)
		if p == minutePass {
			hs := make([]pageHits, len(f.ch.Docs))
			for i := range f.ch.Docs {
				d := &f.ch.Docs[i]
				hs[i] = pageHits{site: d.Site, page: d.Page, start: d.Start, hits: d.Total}
			}
			f.maint.act.record(hs, f.clock.Now())
		}
		f.chunk.written()
	}
	if f.ch.Dropped > 0 {
		f.expiredHits(f.colls[f.ch.Level].Name(), f.ch.Level, f.ch.Dropped)
	}
	return f.ch.Next(), nil
}

// scan calls fn for each of batch's keys from from on, with its counts, in
// key order: the batch's own (the minute level's) or, when coarse, the
// coarse counts the daily and monthly levels take (buffer.ReadTx's
// ScanBatch and ScanCoarse), in one read transaction.
func (f *Flusher) scan(coarse bool, batch string, from []byte, fn func(key []byte, v *measure.Vector) bool) error {
	return f.buf.View(func(tx *buffer.ReadTx) error {
		if coarse {
			return tx.ScanCoarse(batch, from, fn)
		}
		return tx.ScanBatch(batch, from, fn)
	})
}

// guarded is a document the flusher applies once per batch: a page
// bucket (bucket.Doc), a tail (bucket.Tail) or a site's day
// (bucket.SiteDoc).
type guarded interface {
	DocID() string
	AppendKey(bson.D) bson.D
	Update(g bucket.Guard) (filter, update bson.D)
	Zero() bson.D
	// Whole is Zero as Update leaves it: a new bucket's document with
	// this batch's counts and guard in it.
	Whole(g bucket.Guard) (bson.Raw, error)
	PeriodEnd() int64
}

// writeChunk applies buckets' counts to pass p's collection, each exactly
// once for the batch of guard g (applyOnce).
func (f *Flusher) writeChunk(ctx context.Context, p pass, g bucket.Guard, buckets []bucket.Doc) error {
	docs := make([]guarded, len(buckets))
	for i := range buckets {
		docs[i] = &buckets[i]
	}
	_, err := f.applyLevel(ctx, p, g, docs)
	return err
}

// applyLevel applies docs (page buckets or tails of level pass p) to the
// level's collection, each exactly once for the batch of guard g
// (applyOnce), counting those it creates past their retention (countLate).
// full are the tails that have no room for this batch (applyOnce).
func (f *Flusher) applyLevel(ctx context.Context, p pass, g bucket.Guard, docs []guarded) (full []int, err error) {
	return f.applyOnce(ctx, p, f.colls[p], g, docs, func(created []int, insErr error) {
		f.countLate(p, docs, created, insErr)
	})
}

// bounded is a guarded document with a size bound, a tail
// (bucket.Tail): its update applies only while the document has room
// for it, and a document without room for an update (its size, or
// refused by the server as too large) never has room for it again, as a
// tail only grows.
type bounded interface {
	guarded
	// Fits reports whether the document as read (its size at least)
	// has room for the update of guard g.
	Fits(doc bson.Raw, g bucket.Guard) bool
}

// applyOnce applies docs to coll, each exactly once for the batch of
// guard g. The
// buckets this flusher does not remember writing (known) are most likely
// new: they are inserted whole, this batch's counts and guard in them
// (insertWhole). Those the insert finds existing (duplicate key: another
// host or preallocation created them, or an earlier attempt at this batch
// inserted them) and the remembered ones take the guarded update
// (applyExisting), whose three-step fallback creates any that is missing
// after all. inserted, when not nil, is told which docs (indexes) an
// insert created or met (insErr: its error, duplicates only), per insert.
//
// full are the indexes of the bounded documents (tails) that did not take
// this batch and never will: without room for it (their size) or refused
// by the server as too large. The caller writes their counts elsewhere
// (a spill); every other document took the batch, once.
func (f *Flusher) applyOnce(ctx context.Context, p pass, coll *mongo.Collection, g bucket.Guard, buckets []guarded, inserted func(created []int, insErr error)) (full []int, err error) {
	var fresh, rest []int
	for i := range buckets {
		if f.exists(p, buckets[i].DocID()) {
			rest = append(rest, i)
		} else {
			fresh = append(fresh, i)
		}
	}
	if len(fresh) > 0 {
		met, err := f.insertWhole(ctx, p, coll, g, buckets, fresh, inserted)
		if err != nil {
			return nil, err
		}
		rest = append(rest, met...)
	}
	if len(rest) > 0 {
		if full, err = f.applyExisting(ctx, p, coll, g, buckets, rest, inserted); err != nil {
			return nil, err
		}
	}
	f.stats.bucketWrites.Add(uint64(len(buckets) - len(full)))
	f.maint.known.add(p, len(buckets), func(i int) string { return buckets[i].DocID() }, func(i int) int64 { return buckets[i].PeriodEnd() }, true)
	return full, nil
}

// exists reports whether the bucket id of pass p is thought to exist:
// this flusher wrote or preallocated it lately (known).
func (f *Flusher) exists(p pass, id string) bool {
	if h := f.hooks; h != nil && h.exists != nil {
		return h.exists(p, id)
	}
	return f.maint.known.has(p, id)
}

// insertWhole inserts the buckets at fresh (indexes in buckets) whole
// (guarded.Whole), in one unordered insertMany. An insert succeeds only
// where no document has the _id, and puts the counts and the guard in
// the same document write: a bucket inserted has taken this batch, once.
// It returns the indexes of the buckets not inserted: those that met a
// duplicate key (the document exists; it may have taken this batch in an
// earlier attempt, and the guarded update decides) and any whose whole
// document could not be built.
func (f *Flusher) insertWhole(ctx context.Context, p pass, coll *mongo.Collection, g bucket.Guard, buckets []guarded, fresh []int, inserted func([]int, error)) (rest []int, err error) {
	docs := make([]any, 0, len(fresh))
	sent := make([]int, 0, len(fresh))
	for _, i := range fresh {
		doc, err := buckets[i].Whole(g)
		if err != nil {
			// Never happens with the documents of package bucket; the
			// bucket's id (a page of the log) is not logged.
			f.log.Warn("whole document not built: the bucket takes the update path", "collection", coll.Name(), "err", err)
			rest = append(rest, i)
			continue
		}
		docs = append(docs, doc)
		sent = append(sent, i)
	}
	if len(docs) == 0 {
		return rest, nil
	}
	if h := f.hooks; h != nil && h.beforeWhole != nil {
		ids := make([]string, len(sent))
		for j, i := range sent {
			ids[j] = buckets[i].DocID()
		}
		h.beforeWhole(p, ids)
	}
	ictx, cancel := context.WithTimeout(ctx, f.timeout)
	f.stats.insertCalls.Add(1)
	_, insErr := coll.InsertMany(ictx, docs, options.InsertMany().SetOrdered(false))
	cancel()
	if h := f.hooks; h != nil && h.afterWhole != nil && insErr == nil {
		insErr = h.afterWhole(p)
	}
	dups, err := ignoreDuplicates(insErr)
	if err != nil {
		return nil, fmt.Errorf("insert %d buckets: %w", len(docs), err)
	}
	f.stats.inserts.Add(uint64(len(docs) - dups))
	f.stats.insertDups.Add(uint64(dups))
	if inserted != nil {
		inserted(sent, insErr)
	}
	for _, i := range slices.Sorted(maps.Keys(duplicateAt(insErr))) {
		rest = append(rest, sent[i])
	}
	return rest, nil
}

// applyExisting applies the buckets at at (indexes in all), thought to
// exist, each exactly once for the batch of guard g: the guarded update;
// then, if some did not match, the three-step fallback: find which of
// them carry this batch, create the others zero-filled, update those.
// A bounded document (a tail) the server refuses as too large, or that
// carries neither this batch nor room for it (Fits, read back), is full:
// returned, not written (applyOnce). inserted is applyOnce's.
func (f *Flusher) applyExisting(ctx context.Context, p pass, coll *mongo.Collection, g bucket.Guard, all []guarded, at []int, inserted func([]int, error)) (full []int, err error) {
	buckets := make([]guarded, len(at))
	for j, i := range at {
		buckets[j] = all[i]
	}
	isFull := make([]bool, len(buckets))
	markFull := func(j int) error { // buckets[j] is full
		if _, ok := buckets[j].(bounded); !ok {
			return fmt.Errorf("%s: an update refused as too large, of a document that is not a tail", coll.Name())
		}
		isFull[j] = true
		full = append(full, at[j])
		return nil
	}
	matched, large, err := f.bulkUpdate(ctx, coll, updates(buckets, g))
	if err != nil {
		return nil, err
	}
	for _, j := range large {
		if err := markFull(j); err != nil {
			return nil, err
		}
	}
	if matched+len(large) == len(buckets) {
		return full, nil
	}

	ids := make([]string, len(buckets))
	for i := range buckets {
		ids[i] = buckets[i].DocID()
	}
	if h := f.hooks; h != nil && h.afterUpdate != nil {
		h.afterUpdate(p, ids)
	}
	// The buckets that did not match lack this batch: they were missing,
	// or took it in an earlier attempt (or its insert), or are tails
	// without room for it. Ask which carry it, not which exist: a bucket
	// another writer created since step 1 exists but has not taken this
	// batch.
	done, err := f.withBatch(ctx, coll, buckets, g)
	if err != nil {
		return nil, err
	}
	var unmatched []int // in buckets: neither full nor carrying the batch
	var tails []guarded
	for j := range buckets {
		if _, ok := done[buckets[j].DocID()]; ok || isFull[j] {
			continue
		}
		unmatched = append(unmatched, j)
		if _, ok := buckets[j].(bounded); ok {
			tails = append(tails, buckets[j])
		}
	}
	if len(tails) > 0 {
		// A tail that exists and lacks this batch and room for it is
		// full, for good (its size only grows). One that has room was
		// created since step 1: it takes the update below.
		docs, err := f.sizes(ctx, coll, tails)
		if err != nil {
			return nil, err
		}
		for _, j := range unmatched {
			if b, ok := buckets[j].(bounded); ok {
				if doc, found := docs[b.DocID()]; found && !b.Fits(doc, g) {
					_ = markFull(j) // bounded
				}
			}
		}
	}
	var missing []guarded
	var missingAt, missingJ []int
	for _, j := range unmatched {
		if !isFull[j] {
			missing = append(missing, buckets[j])
			missingAt = append(missingAt, at[j])
			missingJ = append(missingJ, j)
		}
	}
	if held := len(done) - matched; held > 0 {
		f.log.Debug("buckets held the batch already", "collection", coll.Name(), "buckets", len(buckets), "held", held)
	}
	if len(missing) == 0 {
		return full, nil // the unmatched ones already took this batch, or are full
	}
	if h := f.hooks; h != nil && h.beforeInsert != nil {
		h.beforeInsert(p, ids)
	}
	insErr, err := f.insertZero(ctx, coll, missing)
	if err != nil {
		return nil, err
	}
	if inserted != nil {
		inserted(missingAt, insErr)
	}
	matched, large, err = f.bulkUpdate(ctx, coll, updates(missing, g))
	if err != nil {
		return nil, err
	}
	for _, k := range large {
		if err := markFull(missingJ[k]); err != nil {
			return nil, err
		}
	}
	if matched+len(large) != len(missing) {
		return nil, fmt.Errorf("%d of %d new buckets did not take the update", len(missing)-matched-len(large), len(missing))
	}
	return full, nil
}

// countLate counts the buckets just created (missing: the indexes in
// buckets of one insert's documents, in insert order; those whose insert
// did not meet a duplicate, insErr) whose period had already expired: late counts re-create a
// bucket that expiry deleted, they are written, and the next expiry round
// deletes the bucket again. A warning says so at most every 10 minutes.
func (f *Flusher) countLate(p pass, buckets []guarded, missing []int, insErr error) {
	r := f.maint.retention.Of(p.level())
	if r == 0 {
		return
	}
	dup := duplicateAt(insErr)
	now := f.clock.Now()
	var n uint64
	for j, i := range missing {
		if !dup[j] && f.maint.retention.Expired(p.level(), buckets[i].PeriodEnd()-1, now) {
			n++
		}
	}
	if n == 0 {
		return
	}
	total := f.stats.late.Add(n)
	if last := f.stats.lateLogged.Load(); last == 0 || now.Sub(time.Unix(0, last)) >= 10*time.Minute {
		f.stats.lateLogged.Store(now.UnixNano())
		f.log.Warn("late counts for expired buckets: the buckets were created again and their counts written; the next expiry deletes them",
			"collection", f.colls[p].Name(), "retention", r, "buckets", n, "late_buckets_total", total)
	}
}

// expiredHits counts n hits not written to coll because their documents
// were past the retention of level l, and logs it at most every 10
// minutes.
func (f *Flusher) expiredHits(coll string, l bucket.Level, n uint64) {
	total := f.stats.expired.Add(n)
	now := f.clock.Now()
	if last := f.stats.expiredLog.Load(); last == 0 || now.Sub(time.Unix(0, last)) >= 10*time.Minute {
		f.stats.expiredLog.Store(now.UnixNano())
		f.log.Info("counts for documents past their retention not written (the levels kept take them)",
			"collection", coll, "retention", f.maint.retention.Of(l), "hits", n, "expired_hits_total", total)
	}
}
