package mongotest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Under MaxDocSize, an update statement that would leave its document
// larger than the bound gets MongoDB's write error (17419) and changes
// nothing; the command's other statements are applied (unordered) or
// those before it (ordered); a statement whose filter does not match, or
// that stays within the bound, is as ever; without the bound the same
// update applies.
func TestMaxDocSizeRefusesUpdates(t *testing.T) {
	s := Start(t)
	db := s.Database(t)
	coll := db.Collection("c")
	ctx := context.Background()
	const bound = 2000
	reset := func() {
		t.Helper()
		if _, err := coll.DeleteMany(ctx, bson.D{}); err != nil {
			t.Fatal(err)
		}
		_, err := coll.InsertMany(ctx, []any{
			bson.D{{Key: "_id", Value: "a"}, {Key: "s", Value: strings.Repeat("x", 1500)}, {Key: "applied", Value: bson.D{}}},
			bson.D{{Key: "_id", Value: "b"}, {Key: "n", Value: int64(1)}, {Key: "applied", Value: bson.D{}}},
			bson.D{{Key: "_id", Value: "c"}, {Key: "n", Value: int64(1)}, {Key: "applied", Value: bson.D{{Key: "1", Value: int64(7)}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// guarded is logtally's kind of update: {_id, "applied.1": {$ne: 7}}.
	guarded := func(id string, set bson.D) mongo.WriteModel {
		return mongo.NewUpdateOneModel().
			SetFilter(bson.D{{Key: "_id", Value: id}, {Key: "applied.1", Value: bson.D{{Key: "$ne", Value: int64(7)}}}}).
			SetUpdate(bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int64(1)}}}, {Key: "$set", Value: append(set, bson.E{Key: "applied.1", Value: int64(7)})}})
	}
	grow := bson.D{{Key: "t", Value: strings.Repeat("y", 600)}} // a: 1.5 kB → over 2 kB
	stay := bson.D{{Key: "t", Value: "z"}}
	n := func(id string) (int64, bool) {
		t.Helper()
		var d bson.M
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
			t.Fatal(err)
		}
		v, _ := d["n"].(int64)
		_, grown := d["t"]
		return v, grown
	}
	refusedAt := func(err error) []int {
		t.Helper()
		var bwe mongo.BulkWriteException
		if !errors.As(err, &bwe) {
			t.Fatalf("error %v, want a bulk write exception", err)
		}
		var at []int
		for _, we := range bwe.WriteErrors {
			if we.Code != codeTooLarge || !strings.Contains(we.Message, "larger than 2000") {
				t.Errorf("write error %d: %v", we.Code, we.Message)
			}
			at = append(at, we.Index)
		}
		return at
	}

	s.MaxDocSize(bound)
	reset()
	res, err := coll.BulkWrite(ctx, []mongo.WriteModel{guarded("b", stay), guarded("a", grow), guarded("c", stay)}, options.BulkWrite().SetOrdered(false))
	if at := refusedAt(err); len(at) != 1 || at[0] != 1 {
		t.Errorf("unordered: refused %v, want [1]", at)
	}
	if res == nil || res.MatchedCount != 1 {
		t.Errorf("unordered: result %+v, want 1 matched (b)", res)
	}
	if v, grown := n("a"); v != 0 || grown {
		t.Errorf("a refused, yet changed: n %d, t set %v", v, grown)
	}
	if v, _ := n("b"); v != 2 {
		t.Errorf("b: n = %d, want 2", v)
	}
	if v, _ := n("c"); v != 1 {
		t.Errorf("c (guard held) changed: n = %d", v)
	}

	reset()
	_, err = coll.BulkWrite(ctx, []mongo.WriteModel{guarded("a", grow), guarded("b", stay)}, options.BulkWrite().SetOrdered(true))
	if at := refusedAt(err); len(at) != 1 || at[0] != 0 {
		t.Errorf("ordered: refused %v, want [0]", at)
	}
	if v, _ := n("b"); v != 1 {
		t.Errorf("ordered: b after the refused statement applied: n = %d", v)
	}

	reset()
	if _, err := coll.BulkWrite(ctx, []mongo.WriteModel{guarded("a", stay), guarded("b", grow)}); err != nil {
		t.Errorf("updates within the bound: %v", err)
	}
	if v, _ := n("a"); v != 1 {
		t.Errorf("a within the bound: n = %d, want 1", v)
	}
	if got := s.Faults().TooLarge; got != 2 {
		t.Errorf("Faults().TooLarge = %d, want 2", got)
	}

	s.MaxDocSize(0)
	reset()
	if _, err := coll.BulkWrite(ctx, []mongo.WriteModel{guarded("a", grow)}); err != nil {
		t.Errorf("without the bound: %v", err)
	}
	if _, grown := n("a"); !grown {
		t.Error("without the bound, a was not updated")
	}
}
