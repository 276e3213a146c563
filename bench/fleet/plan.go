package main

import (
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/flusher"
)

// Plan is what the flusher would send for one sealed batch, built by the
// builders it writes with (package bucket: Grouper, Doc.Update,
// Doc.Whole, FindApplied, Doc.Zero), without a database: the figures are
// the flusher's documents, not a model of them. Which of a bucket's
// writes is a whole insert and which a guarded update depends on what the
// host and the fleet wrote before: the model (model.go) decides that.
type Plan struct {
	// BatchID is the batch planned.
	BatchID string
	// Instance is the buffer's instance id.
	Instance string
	// Guard is the batch's guard (flusher.Guard): numbered when the
	// buffer has a writer number.
	Guard bucket.Guard
	// Passes holds each pass's plan, indexed by bucket.Level. A pass not
	// asked for is empty.
	Passes [3]PassPlan
}

// PassPlan is one pass of a Plan.
type PassPlan struct {
	// Updates is the number of bucket writes (a whole insert or a
	// guarded UpdateOne each) in this pass.
	Updates int
	// Buckets is the number of distinct bucket ids among them. It equals
	// Updates: the guard needs one write per bucket per batch.
	Buckets int
	// Chunks is the number of chunks of at most maxOps buckets (one
	// insertMany and one bulk write of updates at most each).
	Chunks int
	// FindBytes holds, per chunk, the BSON size of the find filter that
	// the three-step path sends when any bucket of that chunk is missing
	// after its update (it names every bucket of the chunk).
	FindBytes []int
	// FilterBytes and UpdateBytes are the BSON sizes of the updates'
	// filter and update documents, summed.
	FilterBytes, UpdateBytes int64
	// Hits is the sum of the counts in this pass (the batch's hits).
	Hits int64
	// Docs describes each bucket's update, in the order sent.
	Docs []PlannedBucket
}

// PlannedBucket is one bucket's share of a pass.
type PlannedBucket struct {
	// ID is the bucket's _id.
	ID string
	// Site and Page are the bucket's site and page.
	Site, Page string
	// Start is the start of the bucket's minute, day or month (UTC).
	Start time.Time
	// Hits is the bucket's hits in this batch.
	Hits int64
	// FilterBytes and UpdateBytes are the BSON sizes of its update's
	// filter and update documents.
	FilterBytes, UpdateBytes int
	// Chunk is the index of the chunk (bulk write) holding the update.
	Chunk int
	// ZeroBytes is the BSON size of the zero-filled document the
	// three-step path (or preallocation) creates, with an empty
	// applied map.
	ZeroBytes int
	// WholeBytes is the BSON size of the whole document (bucket.Doc.Whole)
	// the flusher inserts when it thinks the bucket new: the zero-filled
	// document with this batch's counts and applied entry in it.
	WholeBytes int
}

// AppliedEntryBytes returns the BSON bytes one writer's applied entry
// adds to a bucket it writes for the first time (bucket.Guard.EntryBytes).
func (p *Plan) AppliedEntryBytes() int { return p.Guard.EntryBytes() }

// PlanBatch plans batch batchID of buf as the flusher would write it from
// its first key, in chunks of at most maxOps buckets
// (flusher.DefaultMaxOps if not positive): the given levels, or all three
// if none is given. It reads the batch and sends nothing; buf still holds
// the batch afterwards.
func PlanBatch(buf *buffer.Buffer, batchID string, maxOps int, levels ...bucket.Level) (*Plan, error) {
	if maxOps <= 0 {
		maxOps = flusher.DefaultMaxOps
	}
	if len(levels) == 0 {
		levels = []bucket.Level{bucket.Minute, bucket.Daily, bucket.Monthly}
	}
	plan := &Plan{BatchID: batchID, Instance: buf.InstanceID(), Guard: flusher.Guard(buf.InstanceID(), batchID)}
	var ch flusher.Chunker
	for _, p := range levels {
		if p >= bucket.Levels {
			return nil, fmt.Errorf("plan batch: no level %d", p)
		}
		out := &plan.Passes[p]
		seen := map[string]struct{}{}
		var from []byte
		for {
			ch.Reset(p, maxOps)
			err := buf.View(func(tx *buffer.ReadTx) error { return tx.ScanBatch(batchID, from, ch.Add) })
			if err != nil {
				return nil, fmt.Errorf("plan batch: %w", err)
			}
			if ch.Err() != nil {
				return nil, fmt.Errorf("plan batch: %s pass: %w", p, ch.Err())
			}
			if len(ch.Docs) > 0 {
				find, err := bson.Marshal(bucket.FindApplied(ch.Docs, plan.Guard))
				if err != nil {
					return nil, fmt.Errorf("plan batch: %s pass: find filter: %w", p, err)
				}
				out.FindBytes = append(out.FindBytes, len(find))
				for i := range ch.Docs {
					d, err := planBucket(&ch.Docs[i], plan.Guard)
					if err != nil {
						return nil, fmt.Errorf("plan batch: %s pass: %w", p, err)
					}
					d.Chunk = out.Chunks
					out.Updates++
					out.FilterBytes += int64(d.FilterBytes)
					out.UpdateBytes += int64(d.UpdateBytes)
					out.Hits += d.Hits
					seen[d.ID] = struct{}{}
					out.Docs = append(out.Docs, d)
				}
				out.Chunks++
			}
			if ch.Next() == nil {
				break
			}
			from = append(from[:0], ch.Next()...)
		}
		out.Buckets = len(seen)
	}
	return plan, nil
}

// planBucket measures b's guarded update, its zero-filled document and
// its whole document.
func planBucket(b *bucket.Doc, g bucket.Guard) (PlannedBucket, error) {
	f, u := b.Update(g)
	filter, err := bson.Marshal(f)
	if err != nil {
		return PlannedBucket{}, fmt.Errorf("bucket %s: filter: %w", b.ID, err)
	}
	update, err := bson.Marshal(u)
	if err != nil {
		return PlannedBucket{}, fmt.Errorf("bucket %s: update: %w", b.ID, err)
	}
	zero, err := bson.Marshal(b.Zero())
	if err != nil {
		return PlannedBucket{}, fmt.Errorf("bucket %s: zero document: %w", b.ID, err)
	}
	whole, err := b.Whole(g)
	if err != nil {
		return PlannedBucket{}, fmt.Errorf("bucket %s: whole document: %w", b.ID, err)
	}
	return PlannedBucket{
		ID: b.ID, Site: b.Site, Page: b.Page, Start: time.Unix(b.Start, 0).UTC(), Hits: b.Total,
		FilterBytes: len(filter), UpdateBytes: len(update), ZeroBytes: len(zero), WholeBytes: len(whole),
	}, nil
}
