package flusher

// The write path's calls to the server: the bulk updates, the fallback's
// finds and zero-filled inserts, and the answers that are not failures
// (duplicate keys, documents too large).

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/bucket"
)

// sizes returns the documents of docs (bounded: tails) that are in coll,
// by _id, projected on their size (bucket.FieldSize).
func (f *Flusher) sizes(ctx context.Context, coll *mongo.Collection, docs []guarded) (map[string]bson.Raw, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	f.stats.finds.Add(1)
	or := make(bson.A, len(docs))
	for i := range docs {
		or[i] = docs[i].AppendKey(make(bson.D, 0, 4))
	}
	cur, err := coll.Find(ctx, bson.D{{Key: "$or", Value: or}},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: bucket.FieldSize, Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("find %d tails: %w", len(docs), err)
	}
	var raws []bson.Raw
	if err := cur.All(ctx, &raws); err != nil {
		return nil, fmt.Errorf("find %d tails: %w", len(docs), err)
	}
	out := make(map[string]bson.Raw, len(raws))
	for _, r := range raws {
		if id, ok := r.Lookup(bucket.FieldID).StringValueOK(); ok {
			out[id] = r
		}
	}
	return out, nil
}

// bulkWrite is bulkUpdate for documents that are never too large: a
// statement refused as too large is an error.
func (f *Flusher) bulkWrite(ctx context.Context, coll *mongo.Collection, models []mongo.WriteModel) (matched int, err error) {
	matched, large, err := f.bulkUpdate(ctx, coll, models)
	if err == nil && len(large) > 0 {
		err = fmt.Errorf("bulk write %d updates: %d refused as too large", len(models), len(large))
	}
	return matched, err
}

// bulkUpdate sends models (updates) as one unordered bulk write and
// returns the number that matched. large are the indexes of those the
// server refused because the document would pass its maximum size
// (tooLarge), when every write error is one: the others were applied
// (each statement of a bulk write is its own), and the refused ones
// changed nothing. Any other write error is err.
func (f *Flusher) bulkUpdate(ctx context.Context, coll *mongo.Collection, models []mongo.WriteModel) (matched int, large []int, err error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	f.stats.bulkWrites.Add(1)
	f.stats.updates.Add(uint64(len(models)))
	if h := f.hooks; h != nil && h.beforeBulk != nil {
		if err := h.beforeBulk(len(models)); err != nil {
			return 0, nil, fmt.Errorf("bulk write %d updates: %w", len(models), err)
		}
	}
	res, err := coll.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	if large = tooLarge(err); large != nil {
		err = nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("bulk write %d updates: %w", len(models), err)
	}
	if res == nil || !res.Acknowledged {
		return 0, nil, errors.New("bulk write not acknowledged: an acknowledged write concern is required")
	}
	return int(res.MatchedCount), large, nil
}

// tooLarge returns the indexes of the statements of a bulk write that err
// (its error) says were refused as too large, when it holds no other
// error; nil otherwise.
func tooLarge(err error) []int {
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return nil
	}
	out := make([]int, 0, len(bwe.WriteErrors))
	for _, we := range bwe.WriteErrors {
		if we.Code != codeUpdateTooLarge && we.Code != codeObjectTooLarge {
			return nil
		}
		out = append(out, we.Index)
	}
	return out
}

// withBatch returns which of buckets are in coll and carry the batch in
// this writer's applied entry (guard g). The filter names each bucket by its _id and
// shard key ({$or: [{_id, <shard key>}, ...]}), so that a router asks only
// the shards holding them.
func (f *Flusher) withBatch(ctx context.Context, coll *mongo.Collection, buckets []guarded, g bucket.Guard) (map[string]struct{}, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	f.stats.finds.Add(1)
	keys := make([]bson.D, len(buckets))
	for i := range buckets {
		keys[i] = buckets[i].AppendKey(make(bson.D, 0, 4))
	}
	cur, err := coll.Find(ctx, bucket.FindAppliedKeys(keys, g),
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("find %d buckets: %w", len(buckets), err)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("find %d buckets: %w", len(buckets), err)
	}
	set := make(map[string]struct{}, len(docs))
	for _, d := range docs {
		set[d.ID] = struct{}{}
	}
	return set, nil
}

// insertZero creates buckets zero-filled. A bucket another host created
// first is left as it is; insErr is the insert's error then (duplicates
// only).
func (f *Flusher) insertZero(ctx context.Context, coll *mongo.Collection, buckets []guarded) (insErr, err error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	docs := make([]bson.D, len(buckets))
	for i := range buckets {
		docs[i] = buckets[i].Zero()
	}
	f.stats.insertCalls.Add(1)
	_, insErr = coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	dups, err := ignoreDuplicates(insErr)
	if err != nil {
		return nil, fmt.Errorf("insert %d buckets: %w", len(buckets), err)
	}
	f.stats.inserts.Add(uint64(len(buckets) - dups))
	f.stats.insertDups.Add(uint64(dups))
	return insErr, nil
}

// ignoreDuplicates returns nil and the number of duplicate-key errors if
// err holds nothing else: those buckets exist, created by another host.
// Each write error is checked on its own: mongo.IsDuplicateKeyError of the
// whole BulkWriteException is true as soon as one of them is a duplicate.
func ignoreDuplicates(err error) (dups int, _ error) {
	if err == nil {
		return 0, nil
	}
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return 0, err
	}
	for _, we := range bwe.WriteErrors {
		if !mongo.IsDuplicateKeyError(we.WriteError) {
			return 0, err
		}
	}
	return len(bwe.WriteErrors), nil
}

// duplicateAt returns the statements of an insert (by index) that err,
// its error as ignoreDuplicates let it through, says met a duplicate key:
// those documents exist, written by another host or an earlier attempt.
func duplicateAt(err error) map[int]bool {
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) {
		return nil
	}
	at := make(map[int]bool, len(bwe.WriteErrors))
	for _, we := range bwe.WriteErrors {
		at[we.Index] = true
	}
	return at
}

// MongoDB's codes for a document over its maximum size (16 MiB): an
// update whose result would be (17419, "Resulting document after update
// is larger than 16777216") and a document too large (BSONObjectTooLarge).
const (
	codeUpdateTooLarge = 17419
	codeObjectTooLarge = 10334
)
