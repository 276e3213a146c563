package flusher

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/ledger"
	"github.com/logtally/logtally/stream"
)

// LedgerCollection holds the database's copy of the ledger, which the
// flusher writes (writeMarks) and expires: ledger.Collection.
const LedgerCollection = ledger.Collection

// writeMarks copies batch's ledger marks to the database's ledger. It runs
// after the batch's bucket updates and before its acknowledgement: an
// entry there never runs ahead of counts that are in the buckets. A
// stream's entry is set to the mark, offset and tail check together: its
// marks come from one buffer, batch after batch, each at least the one
// before (or lowered, a file shrunk in place), and a retry sets the same.
// An older logtally's kind of entry (no stream) keeps the greatest offset
// ($max). So a retry changes nothing.
func (f *Flusher) writeMarks(ctx context.Context, batch *buffer.Batch) error {
	var marks []stream.Entry
	err := f.buf.View(func(tx *buffer.ReadTx) (err error) {
		marks, err = tx.BatchMarks(batch.ID)
		return err
	})
	if err != nil || len(marks) == 0 {
		return err
	}
	coll := f.colls[minutePass].Database().Collection(LedgerCollection)
	for start := 0; start < len(marks); start += f.chunk.ops {
		var models []mongo.WriteModel
		for _, m := range marks[start:min(start+f.chunk.ops, len(marks))] {
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
		f.stats.bulkWrites.Add(1)
		if err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
	}
	return nil
}
