package record

// Writer numbers: each buffer's short name in the buckets' guard
// (bucket.NumberedGuard), assigned once in the progress collection.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/bucket"
)

// The counter and the claims live beside the records. Their _ids are
// documents, so they never meet a record's (the instance name, a string).
var counterID = bson.D{{Key: "writers", Value: "next"}}

func claimID(n int64) bson.D { return bson.D{{Key: "writer", Value: n}} }

// Claim is the document that reserves writer number n for one buffer:
// {_id: {writer: n}, buffer_id, instance, claimed}. It says which host a
// bucket's "applied.<n>" entry belongs to.
type Claim struct {
	ID       struct{ Writer int64 } `bson:"_id"`
	BufferID string                 `bson:"buffer_id"`
	Instance string                 `bson:"instance"`
	Claimed  time.Time              `bson:"claimed"`
}

// claimAttempts bounds the numbers tried by one ClaimNumber: more than
// one only on a server whose $inc is not atomic across clients.
const claimAttempts = 16

// ClaimNumber returns buffer bufferID's writer number: the one it
// claimed before (a claim whose reply was lost, or made by a process
// that crashed before keeping it), else a new one. A new number is the
// counter's next ($inc, upsert), reserved by inserting its claim: the
// claim's _id is unique, so two buffers never hold one number even where
// the counter's $inc is not atomic (the loser takes the next). A number
// claimed and never used is only a gap.
func (s *Store) ClaimNumber(ctx context.Context, bufferID string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var c Claim
	// The lowest of its claims: an older logtally could leave two.
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id.writer", Value: bson.D{{Key: "$exists", Value: true}}}, {Key: "buffer_id", Value: bufferID}},
		options.FindOne().SetSort(bson.D{{Key: "_id.writer", Value: 1}})).Decode(&c)
	if err == nil && c.ID.Writer > 0 {
		return c.ID.Writer, nil
	}
	if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return 0, fmt.Errorf("claim writer number: find earlier claim: %w", err)
	}
	for range claimAttempts {
		var counter struct {
			Next int64 `bson:"next"`
		}
		err := s.coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: counterID}},
			bson.D{{Key: "$inc", Value: bson.D{{Key: "next", Value: int64(1)}}}},
			options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&counter)
		if err != nil {
			return 0, fmt.Errorf("claim writer number: count: %w", err)
		}
		n := counter.Next
		if n <= 0 || n > bucket.MaxNumber {
			return 0, fmt.Errorf("claim writer number: the counter gave %d, outside 1 to %d", n, int64(bucket.MaxNumber))
		}
		_, err = s.coll.InsertOne(ctx, bson.D{{Key: "_id", Value: claimID(n)}, {Key: "buffer_id", Value: bufferID},
			{Key: "instance", Value: s.instance}, {Key: "claimed", Value: s.clock.Now().UTC()}})
		if mongo.IsDuplicateKeyError(err) {
			// Taken, unless by this buffer: an insert the client sent
			// again after its reply was lost (a retried write) meets its
			// own claim.
			var held Claim
			if ferr := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: claimID(n)}}).Decode(&held); ferr == nil && held.BufferID == bufferID {
				return n, nil
			}
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("claim writer number %d: %w", n, err)
		}
		s.log.Info("writer number claimed", "number", n, "buffer_id", bufferID)
		return n, nil
	}
	return 0, fmt.Errorf("claim writer number: %d numbers in a row were taken already", claimAttempts)
}
