package flusher

// The visitors step of a flush: before a batch is acknowledged, every
// visitor register that rose in the buffer since it was last sent is
// written with $max to its site's visitors document, then marked sent. So
// when a batch is acknowledged, the registers of its lines (and of every
// line committed before it) are in MongoDB: a lost state dir, rebuilt from
// the acknowledged position, loses none. $max is idempotent: a step cut
// short and done again, or two hosts writing the same register, cannot
// overcount.

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/visitor"
)

// visitorDest is where the visitor registers go: the visitors collection
// and the salt period that keys its documents.
type visitorDest struct {
	coll   *mongo.Collection
	period visitor.Period
}

// sketchKeep is how long past its period's end a visitor sketch is kept
// in the buffer: late lines and replays within the salt's grace (2 hours
// by default) still find it. A sketch dropped and made again only holds
// registers that rose since: their $max takes nothing away.
const sketchKeep = 24 * time.Hour

// writeVisitors sends the risen registers, marks them sent, and drops
// the sketches of periods long over whose registers are all sent. The
// registers of a period past its documents' retention (the level of the
// salt period, bucket.VisitorLevel) are not sent, as the counts of an
// expired bucket are not written: they would make its document again,
// holding only them, for the next expiry to delete. They are marked sent
// all the same.
func (f *Flusher) writeVisitors(ctx context.Context) error {
	var rises []buffer.VisitorRise
	err := f.buf.View(func(tx *buffer.ReadTx) (err error) {
		rises, err = tx.VisitorRises()
		return err
	})
	if err != nil || len(rises) == 0 {
		return err
	}
	send := rises
	if l := bucket.VisitorLevel(f.visitors.period); f.maint.retention.Of(l) > 0 {
		now := f.clock.Now()
		send = make([]buffer.VisitorRise, 0, len(rises))
		for _, r := range rises {
			if !f.maint.retention.Expired(l, r.Start, now) {
				send = append(send, r)
			}
		}
		if n := len(rises) - len(send); n > 0 {
			f.log.Debug("registers of visitors documents past their retention not sent", "collection", f.visitors.coll.Name(), "documents", n)
		}
	}
	for from := 0; from < len(send); {
		n := min(len(send)-from, f.chunk.ops)
		if err := f.maxRegisters(ctx, send[from:from+n]); err != nil {
			return err
		}
		from += n
	}
	// A period's sketch is kept sketchKeep past its end (late lines,
	// replays within the salt's grace), then dropped once all is sent.
	cutoff := f.visitors.period.Unit().Cutoff(f.clock.Now(), sketchKeep).Unix()
	return f.buf.Update(func(tx *buffer.Tx) error {
		if err := tx.MarkVisitorsSent(rises); err != nil {
			return err
		}
		_, err := tx.DropVisitors(cutoff)
		return err
	})
}

// maxRegisters applies rises with $max, creating the documents missing
// zero-filled (a document another host created first is kept).
func (f *Flusher) maxRegisters(ctx context.Context, rises []buffer.VisitorRise) error {
	models := make([]mongo.WriteModel, len(rises))
	for i, r := range rises {
		mx := make(bson.D, len(r.Regs))
		for j, g := range r.Regs {
			mx[j] = bson.E{Key: bucket.RegisterPath(int(g.I)), Value: int32(g.R)}
		}
		models[i] = mongo.NewUpdateOneModel().
			SetFilter(bucket.VisitorKey(f.visitors.period, r.Start, r.Site, r.Page)).
			SetUpdate(bson.D{{Key: "$max", Value: mx}})
	}
	matched, err := f.bulkWrite(ctx, f.visitors.coll, models)
	if err != nil {
		return fmt.Errorf("%s: %w", f.visitors.coll.Name(), err)
	}
	f.stats.bucketWrites.Add(uint64(len(rises)))
	if matched == len(rises) {
		return nil
	}
	// Some documents are missing: create every one (duplicates ignored),
	// then apply all again ($max: the ones applied take nothing).
	docs := make([]bson.D, len(rises))
	for i, r := range rises {
		docs[i] = bucket.VisitorZero(f.visitors.period, r.Start, r.Site, r.Page, r.P)
	}
	ictx, cancel := context.WithTimeout(ctx, f.timeout)
	f.stats.insertCalls.Add(1)
	_, insErr := f.visitors.coll.InsertMany(ictx, docs, options.InsertMany().SetOrdered(false))
	cancel()
	dups, err := ignoreDuplicates(insErr)
	if err != nil {
		return fmt.Errorf("%s: insert %d documents: %w", f.visitors.coll.Name(), len(docs), err)
	}
	f.stats.inserts.Add(uint64(len(docs) - dups))
	f.stats.insertDups.Add(uint64(dups))
	if matched, err = f.bulkWrite(ctx, f.visitors.coll, models); err != nil {
		return fmt.Errorf("%s: %w", f.visitors.coll.Name(), err)
	}
	if matched != len(rises) {
		return fmt.Errorf("%s: %d of %d documents did not take the registers", f.visitors.coll.Name(), len(rises)-matched, len(rises))
	}
	return nil
}
