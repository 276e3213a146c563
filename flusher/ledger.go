package flusher

import (
	"context"
	"fmt"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/buffer"
)

// LedgerCollection holds the database's copy of the ledger: per
// fingerprint, how far the file or archive it names is counted and
// acknowledged, whichever host or state dir counted it.
const LedgerCollection = "ledger"

// LedgerID returns the _id of a ledger key's document: "<length>:<sum in
// 16 hex digits>".
func LedgerID(key string) string {
	n, sum, _ := buffer.ParseLedgerKey(key)
	return strconv.Itoa(n) + ":" + fmt.Sprintf("%016x", sum)
}

// writeMarks copies batch's ledger marks to the database's ledger. It runs
// after the batch's bucket updates and before its acknowledgement: an
// entry there never runs ahead of counts that are in the buckets. Each
// update keeps the greatest offset ($max), so a retry changes nothing.
func (f *Flusher) writeMarks(ctx context.Context, batch *buffer.Batch) error {
	marks, err := f.buf.BatchMarks(batch.ID)
	if err != nil || len(marks) == 0 {
		return err
	}
	coll := f.colls[minutePass].Database().Collection(LedgerCollection)
	for start := 0; start < len(marks); start += f.chunkOps {
		var models []mongo.WriteModel
		for _, m := range marks[start:min(start+f.chunkOps, len(marks))] {
			models = append(models, mongo.NewUpdateOneModel().
				SetFilter(bson.D{{Key: "_id", Value: LedgerID(m.Key())}}).
				SetUpdate(bson.D{
					{Key: "$max", Value: bson.D{{Key: "offset", Value: m.Offset}}},
					{Key: "$set", Value: bson.D{
						{Key: "source", Value: m.Source}, {Key: "path", Value: m.Path},
						{Key: "buffer", Value: f.buf.InstanceID()}, {Key: "updated", Value: f.clock.Now().UTC()},
					}},
				}).SetUpsert(true))
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

// ReadLedger returns, for those of keys that the database's ledger holds,
// the offset counted and acknowledged.
func (f *Flusher) ReadLedger(ctx context.Context, keys []string) (map[string]int64, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	byID := make(map[string]string, len(keys))
	ids := make(bson.A, 0, len(keys))
	for _, k := range keys {
		id := LedgerID(k)
		byID[id] = k
		ids = append(ids, id)
	}
	coll := f.colls[minutePass].Database().Collection(LedgerCollection)
	octx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	cur, err := coll.Find(octx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}},
		options.Find().SetProjection(bson.D{{Key: "offset", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	var docs []struct {
		ID     string `bson:"_id"`
		Offset int64  `bson:"offset"`
	}
	if err := cur.All(octx, &docs); err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	out := make(map[string]int64, len(docs))
	for _, d := range docs {
		if k, ok := byID[d.ID]; ok {
			out[k] = d.Offset
		}
	}
	return out, nil
}
