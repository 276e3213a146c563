package mongotest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// TestFerretDBLooksUpByIDWithAnIndex checks that once a collection exists,
// the query FerretDB runs for a lookup by _id (its own SQL, for a find or
// an update with the filter {_id: v}) is answered from an index: without
// the index the proxy adds, SQLite scans the table (every row parsed).
func TestFerretDBLooksUpByIDWithAnIndex(t *testing.T) {
	s := Start(t)
	if s.dir == "" {
		t.Skip("MONGODB_URI: not the embedded server")
	}
	db := s.Database(t)
	coll := db.Collection("c")
	ctx := context.Background()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: int64(1)}}); err != nil {
		t.Fatal(err)
	}
	// The insert made the table; the next command naming it indexes it.
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: "a"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	conn, err := sql.Open("sqlite", "file:"+filepath.ToSlash(filepath.Join(s.dir, db.Name()+".sqlite"))+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var table string
	if err := conn.QueryRow(`SELECT table_name FROM "_ferretdb_collections" WHERE name = 'c'`).Scan(&table); err != nil {
		t.Fatal(err)
	}
	// FerretDB v1.24.0's lookup (backends/sqlite: collection.Query and
	// UpdateAll, metadata.IDColumn).
	rows, err := conn.Query(fmt.Sprintf(`EXPLAIN QUERY PLAN SELECT _ferretdb_sjson FROM %q WHERE _ferretdb_sjson->'$._id' = ?`, table), `"a"`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if got := strings.Join(plan, "; "); !strings.Contains(got, "USING INDEX "+table+idIndexName) {
		t.Fatalf("FerretDB's lookup by _id: %q, want a search using the index %s", got, table+idIndexName)
	}
	if n, _ := s.Lookups(); n != 1 {
		t.Fatalf("%d indexes added, want 1", n)
	}
}

// TestNarrowedUpdatesAnswerAsFerretDB sends the same update commands
// through the proxy, which narrows guarded updates to their _id, and
// straight to FerretDB, on two copies of the same documents: the replies
// and the documents must be the same, and the narrowable commands
// narrowed.
func TestNarrowedUpdatesAnswerAsFerretDB(t *testing.T) {
	s := Start(t)
	if s.dir == "" {
		t.Skip("MONGODB_URI: not the embedded server")
	}
	ctx := context.Background()
	proxied := s.Database(t).Collection("c")
	direct := s.Direct(proxied.Database().Name() + "_direct").Collection("c")
	t.Cleanup(func() { _ = direct.Database().Drop(context.Background()) })
	seed := []any{
		bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: int64(0)}, {Key: "applied", Value: bson.D{{Key: "1", Value: int64(1)}}}},
		bson.D{{Key: "_id", Value: "b"}, {Key: "n", Value: int64(0)}, {Key: "applied", Value: bson.D{{Key: "1", Value: int64(1)}}}, {Key: "s", Value: "text"}},
		bson.D{{Key: "_id", Value: "c"}, {Key: "n", Value: int64(5)}, {Key: "site", Value: "x"}},
	}
	for _, c := range []*mongo.Collection{proxied, direct} {
		if _, err := c.InsertMany(ctx, seed); err != nil {
			t.Fatal(err)
		}
	}
	guard := func(id string, seq int64) bson.D {
		return bson.D{{Key: "_id", Value: id}, {Key: "applied.1", Value: bson.D{{Key: "$ne", Value: seq}}}}
	}
	inc := func(seq int64) bson.D {
		return bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int64(1)}}}, {Key: "$set", Value: bson.D{{Key: "applied.1", Value: seq}}}}
	}
	upd := func(f, u bson.D) mongo.WriteModel { return mongo.NewUpdateOneModel().SetFilter(f).SetUpdate(u) }
	for _, tc := range []struct {
		name    string
		models  []mongo.WriteModel
		ordered bool
		narrow  bool
	}{
		{"guarded: one matches, one took the batch, one missing", []mongo.WriteModel{
			upd(guard("a", 2), inc(2)), upd(guard("b", 1), inc(1)), upd(guard("zz", 2), inc(2))}, false, true},
		{"the same again: none matches", []mongo.WriteModel{
			upd(guard("a", 2), inc(2)), upd(guard("b", 1), inc(1)), upd(guard("zz", 2), inc(2))}, false, true},
		{"other conditions, and a filter of _id alone", []mongo.WriteModel{
			upd(bson.D{{Key: "_id", Value: "c"}, {Key: "site", Value: "x"}, {Key: "n", Value: bson.D{{Key: "$gte", Value: 5}}}}, inc(3)),
			upd(bson.D{{Key: "_id", Value: "a"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int64(10)}}}}),
			upd(bson.D{{Key: "_id", Value: "b"}, {Key: "site", Value: "x"}}, inc(3))}, true, true},
		{"ordered, the second fails", []mongo.WriteModel{
			upd(guard("a", 4), inc(4)),
			upd(guard("b", 4), bson.D{{Key: "$inc", Value: bson.D{{Key: "s", Value: int64(1)}}}}),
			upd(guard("c", 4), inc(4))}, true, true},
		{"one document twice: not narrowed", []mongo.WriteModel{
			upd(bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: bson.D{{Key: "$lt", Value: 100}}}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: int64(100)}}}}),
			upd(bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: bson.D{{Key: "$lt", Value: 100}}}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int64(1)}}}})}, true, false},
		{"an upsert: not narrowed", []mongo.WriteModel{
			upd(guard("a", 5), inc(5)),
			mongo.NewUpdateOneModel().SetFilter(guard("new", 5)).SetUpdate(inc(5)).SetUpsert(true)}, false, false},
	} {
		_, before := s.Lookups()
		want, werr := direct.BulkWrite(ctx, tc.models, options.BulkWrite().SetOrdered(tc.ordered))
		got, gerr := proxied.BulkWrite(ctx, tc.models, options.BulkWrite().SetOrdered(tc.ordered))
		w, g := summary(want, werr), summary(got, gerr)
		if w != g {
			t.Errorf("%s: through the proxy %s, FerretDB alone %s", tc.name, g, w)
		}
		t.Logf("%s: %s", tc.name, g)
		_, after := s.Lookups()
		if narrowed := after > before; narrowed != tc.narrow {
			t.Errorf("%s: narrowed %v (%d statements), want %v", tc.name, narrowed, after-before, tc.narrow)
		}
		if w, g := docs(t, direct), docs(t, proxied); !reflect.DeepEqual(w, g) {
			t.Fatalf("%s: documents through the proxy\n%v\nFerretDB alone\n%v", tc.name, g, w)
		}
	}

	// A command with its statements in the body (not a document
	// sequence), as RunCommand sends it.
	_, before := s.Lookups()
	cmd := func(c *mongo.Collection) bson.D {
		return bson.D{{Key: "update", Value: c.Name()}, {Key: "updates", Value: bson.A{
			bson.D{{Key: "q", Value: guard("c", 9)}, {Key: "u", Value: inc(9)}},
			bson.D{{Key: "q", Value: guard("zz", 9)}, {Key: "u", Value: inc(9)}},
		}}}
	}
	var w, g bson.M
	if err := direct.Database().RunCommand(ctx, cmd(direct)).Decode(&w); err != nil {
		t.Fatal(err)
	}
	if err := proxied.Database().RunCommand(ctx, cmd(proxied)).Decode(&g); err != nil {
		t.Fatal(err)
	}
	if _, after := s.Lookups(); after != before+2 || fmt.Sprint(w["n"], w["nModified"]) != fmt.Sprint(g["n"], g["nModified"]) || g["n"] != int32(1) {
		t.Errorf("a command's updates array: through the proxy %v (%d narrowed), FerretDB alone %v", g, after-before, w)
	}
	if w, g := docs(t, direct), docs(t, proxied); !reflect.DeepEqual(w, g) {
		t.Fatalf("documents through the proxy\n%v\nFerretDB alone\n%v", g, w)
	}
}

// summary is what a bulk write answered: its counts and its write errors'
// indexes and codes.
func summary(r *mongo.BulkWriteResult, err error) string {
	var b strings.Builder
	if r != nil {
		fmt.Fprintf(&b, "matched %d modified %d upserted %d", r.MatchedCount, r.ModifiedCount, r.UpsertedCount)
	}
	var bwe mongo.BulkWriteException
	switch {
	case errors.As(err, &bwe):
		for _, we := range bwe.WriteErrors {
			fmt.Fprintf(&b, "; write error at %d, code %d", we.Index, we.Code)
		}
	case err != nil:
		fmt.Fprintf(&b, "; error %v", err)
	}
	return b.String()
}

// docs returns every document of c, by _id.
func docs(t *testing.T, c *mongo.Collection) []bson.M {
	t.Helper()
	cur, err := c.Find(context.Background(), bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.M
	if err := cur.All(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMsgPartsRoundTrip takes an OP_MSG with a body and a document
// sequence apart and writes it again byte for byte.
func TestMsgPartsRoundTrip(t *testing.T) {
	body := bsoncore.BuildDocument(nil, bsoncore.AppendStringElement(nil, "update", "c"), bsoncore.AppendStringElement(nil, "$db", "d"))
	st := bsoncore.BuildDocument(nil, bsoncore.AppendStringElement(nil, "q", "x"))
	var m []byte
	m = binary.LittleEndian.AppendUint32(m, 0)
	m = binary.LittleEndian.AppendUint32(m, 7)
	m = binary.LittleEndian.AppendUint32(m, 0)
	m = binary.LittleEndian.AppendUint32(m, opMsg)
	m = binary.LittleEndian.AppendUint32(m, 0)
	m = append(append(m, 0), body...)
	seq := bsoncore.AppendKey(nil, "updates")
	seq = append(append(seq, st...), st...)
	m = append(m, 1)
	m = binary.LittleEndian.AppendUint32(m, uint32(4+len(seq)))
	m = append(m, seq...)
	binary.LittleEndian.PutUint32(m, uint32(len(m)))

	o, ok := parseMsg(m)
	if !ok || len(o.seqs) != 1 || o.seqs[0].id != "updates" || len(o.seqs[0].docs) != 2 || !bytes.Equal(o.body, body) {
		t.Fatalf("parsed %v %+v", ok, o)
	}
	if got := o.encode(m); !bytes.Equal(got, m) {
		t.Fatalf("encoded\n%x\nwant\n%x", got, m)
	}
	withSum := append(message(nil), m...)
	binary.LittleEndian.PutUint32(withSum[16:], flagChecksum)
	if _, ok := parseMsg(withSum); ok {
		t.Fatal("a message with a checksum was taken apart")
	}
}
