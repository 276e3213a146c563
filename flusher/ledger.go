package flusher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/stream"
)

// LedgerCollection holds the database's copy of the ledger: per
// fingerprint, how far the file or archive it names is counted and
// acknowledged, whichever host or state dir counted it.
const LedgerCollection = "ledger"

// writeMarks copies batch's ledger marks to the database's ledger. It runs
// after the batch's bucket updates and before its acknowledgement: an
// entry there never runs ahead of counts that are in the buckets. A
// stream's entry is set to the mark, offset and tail check together: its
// marks come from one buffer, batch after batch, each at least the one
// before (or lowered, a file shrunk in place), and a retry sets the same.
// An older logtally's kind of entry (no stream) keeps the greatest offset
// ($max). So a retry changes nothing.
func (f *Flusher) writeMarks(ctx context.Context, batch *buffer.Batch) error {
	marks, err := f.buf.BatchMarks(batch.ID)
	if err != nil || len(marks) == 0 {
		return err
	}
	coll := f.colls[minutePass].Database().Collection(LedgerCollection)
	for start := 0; start < len(marks); start += f.chunkOps {
		var models []mongo.WriteModel
		for _, m := range marks[start:min(start+f.chunkOps, len(marks))] {
			set := bson.D{
				{Key: "source", Value: m.Source}, {Key: "path", Value: m.Path},
				{Key: "buffer", Value: f.buf.InstanceID()}, {Key: "updated", Value: f.clock.Now().UTC()},
			}
			update := bson.D{{Key: "$max", Value: bson.D{{Key: "offset", Value: m.Offset}}}, {Key: "$set", Value: set}}
			if m.Stream != 0 {
				set = append(set, bson.E{Key: "offset", Value: m.Offset},
					bson.E{Key: "tail_len", Value: m.TailLen}, bson.E{Key: "tail_sum", Value: int64(m.TailSum)})
				update = bson.D{{Key: "$set", Value: set}}
			}
			models = append(models, mongo.NewUpdateOneModel().
				SetFilter(bson.D{{Key: "_id", Value: stream.LedgerID(m.Key())}}).
				SetUpdate(update).SetUpsert(true))
		}
		octx, cancel := context.WithTimeout(ctx, f.timeout)
		_, err := coll.BulkWrite(octx, models, options.BulkWrite().SetOrdered(false))
		cancel()
		f.bulkWrites.Add(1)
		if err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
	}
	return nil
}

// ReadLedger returns the database's entries of every stream under keys
// (fingerprint keys: stream.LedgerCandidates), as Buffer.Streams does for
// the buffer's ledger: how far each is counted and acknowledged, with its
// tail check. The claims are not entries.
func (f *Flusher) ReadLedger(ctx context.Context, keys []string) ([]buffer.LedgerEntry, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	ids := make(bson.A, 0, len(keys))
	var streams bson.A // the range of each fingerprint's streams' _ids
	for _, k := range keys {
		id := stream.LedgerID(k)
		ids = append(ids, id)
		streams = append(streams, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: id + ":"}, {Key: "$lt", Value: id + ";"}}}})
	}
	or := append(bson.A{bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}}, streams...)
	coll := f.colls[minutePass].Database().Collection(LedgerCollection)
	octx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	cur, err := coll.Find(octx, bson.D{{Key: "$or", Value: or}},
		options.Find().SetProjection(bson.D{{Key: "offset", Value: 1}, {Key: "tail_len", Value: 1}, {Key: "tail_sum", Value: 1}, {Key: "source", Value: 1}, {Key: "path", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	var docs []struct {
		ID      string `bson:"_id"`
		Offset  int64  `bson:"offset"`
		TailLen int    `bson:"tail_len"`
		TailSum int64  `bson:"tail_sum"`
		Source  string `bson:"source"`
		Path    string `bson:"path"`
	}
	if err := cur.All(octx, &docs); err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	out := make([]buffer.LedgerEntry, 0, len(docs))
	for _, d := range docs {
		k, ok := stream.ParseLedgerID(d.ID)
		if !ok {
			continue
		}
		var e buffer.LedgerEntry
		e.FPLen, e.FPSum, e.Stream, _ = stream.ParseEntryKey(k)
		if e.Stream != 0 && (d.TailLen < 0 || int64(d.TailLen) > d.Offset) {
			continue
		}
		e.Offset, e.Acked, e.Source, e.Path = d.Offset, d.Offset, d.Source, d.Path
		if e.Stream != 0 {
			e.TailLen, e.TailSum = d.TailLen, uint64(d.TailSum)
		}
		out = append(out, e)
	}
	return out, nil
}

// LedgerClaim is a lease on a stream's ledger entry: the replay that holds
// it reads the stream, and others wait for it (see ClaimLedger). A claim is
// a document of its own in the ledger collection, stream.ClaimID(key): the
// entry's document and the fields the flusher writes are left alone.
type LedgerClaim struct {
	// Holder identifies the claimant: its buffer's instance id.
	Holder string `bson:"holder"`
	// Instance and Host name it for people: the instance name (may be
	// empty) and the host it runs on. Path is the file it reads.
	Instance string `bson:"instance,omitempty"`
	Host     string `bson:"host,omitempty"`
	Path     string `bson:"path,omitempty"`
	// Until is when the lease ends unless renewed: after it, another
	// replay may take the claim over.
	Until time.Time `bson:"until"`
}

// ClaimLedger takes, or renews, c on key's ledger entry: it succeeds when
// there is no claim, one whose Until is not after now (taken over), or one
// of c.Holder (renewed). ok is false when another holder's live claim is
// there: cur is that claim (zero when it went meanwhile: try again).
//
// A claim is made by inserting its document, whose _id is unique: of
// claimants racing, exactly one succeeds, on MongoDB and on servers whose
// conditional updates are not atomic (FerretDB's SQLite backend).
func (f *Flusher) ClaimLedger(ctx context.Context, key string, c LedgerClaim, now time.Time) (cur LedgerClaim, ok bool, err error) {
	coll := f.colls[minutePass].Database().Collection(LedgerCollection)
	id := stream.ClaimID(key)
	octx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	c.Until = c.Until.UTC()
	doc := func() bson.D {
		// updated: a claim left by a dead holder expires like an entry.
		return bson.D{{Key: "_id", Value: id}, {Key: "holder", Value: c.Holder}, {Key: "instance", Value: c.Instance},
			{Key: "host", Value: c.Host}, {Key: "path", Value: c.Path}, {Key: "until", Value: c.Until}, {Key: "updated", Value: now.UTC()}}
	}
	for range 3 {
		_, err = coll.InsertOne(octx, doc())
		if err == nil {
			return c, true, nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return LedgerClaim{}, false, fmt.Errorf("claim ledger %s: %w", id, err)
		}
		err = coll.FindOne(octx, bson.D{{Key: "_id", Value: id}}).Decode(&cur)
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
			continue // released meanwhile
		case err != nil:
			return LedgerClaim{}, false, fmt.Errorf("read ledger claim %s: %w", id, err)
		case cur.Holder == c.Holder:
			res, err := coll.UpdateOne(octx, bson.D{{Key: "_id", Value: id}, {Key: "holder", Value: c.Holder}}, bson.D{{Key: "$set", Value: doc()[1:]}})
			if err != nil {
				return LedgerClaim{}, false, fmt.Errorf("renew ledger claim %s: %w", id, err)
			}
			if res.MatchedCount == 1 {
				return c, true, nil
			}
			continue // taken over meanwhile
		case !cur.Until.After(now):
			// Expired: only the claim read is deleted, then the insert
			// decides between the claimants.
			_, err := coll.DeleteOne(octx, bson.D{{Key: "_id", Value: id}, {Key: "holder", Value: cur.Holder}, {Key: "until", Value: cur.Until}})
			if err != nil {
				return LedgerClaim{}, false, fmt.Errorf("take over ledger claim %s: %w", id, err)
			}
			continue
		default:
			return cur, false, nil
		}
	}
	return LedgerClaim{}, false, nil
}

// ReleaseLedger drops holder's claim on key's ledger entry, if it still
// has it.
func (f *Flusher) ReleaseLedger(ctx context.Context, key, holder string) error {
	coll := f.colls[minutePass].Database().Collection(LedgerCollection)
	octx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	if _, err := coll.DeleteOne(octx, bson.D{{Key: "_id", Value: stream.ClaimID(key)}, {Key: "holder", Value: holder}}); err != nil {
		return fmt.Errorf("release ledger claim %s: %w", stream.ClaimID(key), err)
	}
	return nil
}
