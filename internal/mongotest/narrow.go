package mongotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// FerretDB looks a document up by its _id with an index only when the
// filter is exactly {_id: <string or ObjectID>} (and idIndexer has added
// the index it needs). A guarded update, {_id: v, "applied.1": {$ne: 7}},
// has more keys: FerretDB reads and parses the whole collection to find
// the one document, where MongoDB looks it up by _id and then tests the
// rest. The narrower makes FerretDB do what MongoDB does: for an update
// command whose every statement names its document by _id (distinct _ids,
// no upsert, no multi, no collation), it asks FerretDB for each statement
// whether its document matches the whole filter now (an aggregation whose
// first stage, {$match: {_id: v}}, FerretDB pushes down), and sends the
// statement on with the filter {_id: v} if it does, {_id: <an id no
// document has>} if it does not. Each statement keeps its place, so the
// reply (n, nModified, writeErrors' indexes) is FerretDB's own for the
// command as sent. It runs under the proxy's write lock, between the
// request and its reply, so no proxied write can change a document between
// the test and the update; the statements name distinct documents, so none
// changes what another's filter sees. Any other command, and any update
// it cannot read whole, goes on unchanged.

// narrower rewrites guarded updates (see above).
type narrower struct {
	direct  func() *mongo.Client // the upstream, not through the proxy
	nomatch string               // an _id no document has
	done    atomic.Int64         // statements narrowed
}

func newNarrower(direct func() *mongo.Client) *narrower {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return &narrower{direct: direct, nomatch: "mongotest: no document " + hex.EncodeToString(b[:])}
}

// statementTimeout bounds the test of one statement.
const statementTimeout = 30 * time.Second

// narrow returns the update command m with its statements narrowed to
// their _id, or m itself when it is not such a command.
func (n *narrower) narrow(m message) message {
	if n == nil {
		return m
	}
	u, ok := parseUpdate(m)
	if !ok {
		return m
	}
	db, coll, stmts := u.db, u.coll, u.stmts
	// Every statement names one document by _id, each a different one.
	ids := make([]bsoncore.Value, len(stmts))
	guarded := make([]bool, len(stmts))
	seen := map[string]bool{}
	narrowable := false
	for i, st := range stmts {
		q, ok := st.Lookup("q").DocumentOK()
		if !ok {
			return m
		}
		if b, ok := st.Lookup("upsert").BooleanOK(); ok && b {
			return m
		}
		if b, ok := st.Lookup("multi").BooleanOK(); ok && b {
			return m
		}
		if _, err := st.LookupErr("collation"); err == nil {
			return m
		}
		if positional(st.Lookup("u")) {
			return m
		}
		id, err := q.LookupErr("_id")
		if err != nil || (id.Type != bsoncore.TypeString && id.Type != bsoncore.TypeObjectID) {
			return m
		}
		k := string(append([]byte{byte(id.Type)}, id.Data...))
		if seen[k] {
			return m
		}
		seen[k] = true
		elems, err := q.Elements()
		if err != nil {
			return m
		}
		ids[i], guarded[i] = id, len(elems) > 1
		narrowable = narrowable || guarded[i]
	}
	if !narrowable {
		return m // {_id: v} alone: FerretDB looks it up by itself
	}
	c := n.direct()
	if c == nil {
		return m
	}
	out := make([]bsoncore.Document, len(stmts))
	for i, st := range stmts {
		if !guarded[i] {
			out[i] = st
			continue
		}
		match, err := matches(c.Database(db).Collection(coll), ids[i], st.Lookup("q").Document())
		if err != nil {
			return m // FerretDB decides, slowly
		}
		id := ids[i]
		if !match {
			id = bsoncore.Value{Type: bsoncore.TypeString, Data: bsoncore.AppendString(nil, n.nomatch)}
		}
		out[i] = withFilter(st, id)
	}
	for _, g := range guarded {
		if g {
			n.done.Add(1)
		}
	}
	return u.encode(m, out)
}

// updateCommand is an update command taken apart: its database,
// collection and statements, from its "updates" document sequence (what
// drivers send) or its body's "updates" array.
type updateCommand struct {
	o         msgParts
	db, coll  string
	stmts     []bsoncore.Document
	seq       int  // the sequence's index in o.seqs, or -1: the array
	unordered bool // ordered: false
}

// parseUpdate takes the update command m apart; false when m is no
// update command or one it cannot read whole.
func parseUpdate(m message) (updateCommand, bool) {
	u := updateCommand{seq: -1}
	o, ok := parseMsg(m)
	if !ok || o.flags&flagMoreToCome != 0 {
		return u, false
	}
	u.o = o
	first, err := o.body.IndexErr(0)
	if err != nil || first.Key() != "update" {
		return u, false
	}
	coll, ok := first.Value().StringValueOK()
	db, ok2 := o.body.Lookup("$db").StringValueOK()
	if !ok || !ok2 {
		return u, false
	}
	u.db, u.coll = db, coll
	if b, ok := o.body.Lookup("ordered").BooleanOK(); ok && !b {
		u.unordered = true
	}
	for i, s := range o.seqs {
		if s.id == "updates" {
			if u.seq >= 0 {
				return u, false
			}
			u.seq, u.stmts = i, s.docs
		}
	}
	if arr, ok := o.body.Lookup("updates").ArrayOK(); ok {
		if u.seq >= 0 {
			return u, false
		}
		vals, err := arr.Values()
		if err != nil {
			return u, false
		}
		for _, v := range vals {
			d, ok := v.DocumentOK()
			if !ok {
				return u, false
			}
			u.stmts = append(u.stmts, d)
		}
	} else if u.seq < 0 {
		return u, false
	}
	return u, true
}

// encode returns the command as message m with stmts for its statements.
func (u updateCommand) encode(m message, stmts []bsoncore.Document) message {
	o := u.o
	if u.seq >= 0 {
		o.seqs = slices.Clone(o.seqs)
		o.seqs[u.seq].docs = stmts
	} else {
		o.body = replaceArray(o.body, "updates", stmts)
	}
	return o.encode(m)
}

// matches reports whether the document whose _id is id matches filter q,
// asking FerretDB: {$match: {_id: id}} first, which it looks up by the
// index, then {$match: q}, which it tests on that document alone.
func matches(c *mongo.Collection, id bsoncore.Value, q bsoncore.Document) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), statementTimeout)
	defer cancel()
	byID := bsoncore.BuildDocument(nil, bsoncore.AppendValueElement(nil, "_id", id))
	cur, err := c.Aggregate(ctx, bson.A{
		bson.D{{Key: "$match", Value: bson.Raw(byID)}},
		bson.D{{Key: "$match", Value: bson.Raw(q)}},
		bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: 1}}}},
	})
	if err != nil {
		return false, err
	}
	defer cur.Close(ctx)
	found := cur.Next(ctx)
	return found, cur.Err()
}

// withFilter returns statement st with its filter replaced by {_id: id}.
func withFilter(st bsoncore.Document, id bsoncore.Value) bsoncore.Document {
	elems, _ := st.Elements() // read whole before
	idx, b := bsoncore.AppendDocumentStart(nil)
	for _, e := range elems {
		if e.Key() == "q" {
			b = bsoncore.BuildDocumentElement(b, "q", bsoncore.AppendValueElement(nil, "_id", id))
			continue
		}
		b = append(b, e...)
	}
	b, _ = bsoncore.AppendDocumentEnd(b, idx)
	return b
}

// replaceArray returns doc with its array key replaced by docs.
func replaceArray(doc bsoncore.Document, key string, docs []bsoncore.Document) bsoncore.Document {
	elems, _ := doc.Elements() // read whole before
	idx, b := bsoncore.AppendDocumentStart(nil)
	for _, e := range elems {
		if e.Key() != key {
			b = append(b, e...)
			continue
		}
		aidx, ab := bsoncore.AppendArrayElementStart(b, key)
		for i, d := range docs {
			ab = bsoncore.AppendDocumentElement(ab, strconv.Itoa(i), d)
		}
		b, _ = bsoncore.AppendArrayEnd(ab, aidx)
	}
	b, _ = bsoncore.AppendDocumentEnd(b, idx)
	return b
}

// positional reports whether update u is not a document of operators
// over plain paths: a replacement, a pipeline, or a path with a positional
// part ("a.$", "a.$[]", "a.$[x]"), which refers to the array elements the
// filter matched: narrowing the filter would change it.
func positional(u bsoncore.Value) bool {
	doc, ok := u.DocumentOK()
	if !ok {
		return true
	}
	ops, err := doc.Elements()
	if err != nil || len(ops) == 0 {
		return true
	}
	for _, op := range ops {
		if !strings.HasPrefix(op.Key(), "$") {
			return true
		}
		fields, ok := op.Value().DocumentOK()
		if !ok {
			return true
		}
		fs, err := fields.Elements()
		if err != nil {
			return true
		}
		for _, f := range fs {
			if strings.Contains(f.Key(), "$") {
				return true
			}
		}
	}
	return false
}
