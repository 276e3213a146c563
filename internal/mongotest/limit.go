package mongotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// MongoDB refuses an update statement whose document would be larger than
// 16 MiB after it (a write error of that statement, code 17419, "Resulting
// document after update is larger than 16777216"; the command's other
// statements are applied, or, in an ordered command, those before it).
// FerretDB v1.24 does not: it stores a 17 MiB document, inserted or grown
// by an update. MaxDocSize makes the proxy refuse such statements under a
// bound of the test's choosing, a few kB, so that a test of that refusal
// keeps its data small: under the write lock, before the command goes on
// (and before narrow.go), each statement naming its document by _id (no
// upsert, no multi) is tried on a copy of its document when the document
// matches the statement's filter (the copy in a scratch collection of the
// proxy's own, through the direct client: the server's own update
// semantics, exactly); a statement that leaves the copy over the bound is
// sent on with a filter no document matches (and, in an ordered command,
// the statements after it are not sent), and its write error is added to
// the server's reply. Inserts are not bounded.

// MaxDocSize makes the proxy refuse from now on, as MongoDB refuses one
// past 16 MiB, every update statement whose document would be larger than
// n bytes after it: code 17419, the statement not applied, the others as
// MongoDB treats them. n ≤ 0 lifts the bound (the default). Faults counts
// the statements refused.
func (s *Server) MaxDocSize(n int) { s.maxDoc.Store(int64(max(n, 0))) }

// codeTooLarge is MongoDB's code for an update whose document would pass
// the maximum size.
const codeTooLarge = 17419

// refusal is what the proxy refused of one update command: the
// statements' indexes, for the reply.
type refusal struct {
	max     int64
	indexes []int32
}

// limitUpdates returns update command m with the statements whose
// document would pass max bytes refused (see above), and their indexes; m
// itself and none when it refuses none or cannot tell.
func (s *Server) limitUpdates(m message, max int64) (message, []int32) {
	u, ok := parseUpdate(m)
	if !ok {
		return m, nil
	}
	c := s.directClient()
	if c == nil {
		return m, nil
	}
	coll := c.Database(u.db).Collection(u.coll)
	out := slices.Clone(u.stmts)
	var refused []int32
	for i, st := range u.stmts {
		big, err := s.tooLarge(coll, st, max)
		if err != nil || !big {
			continue
		}
		refused = append(refused, int32(i))
		out[i] = withFilter(st, bsoncore.Value{Type: bsoncore.TypeString,
			Data: bsoncore.AppendString(nil, s.scratchName+" refused "+strconv.Itoa(i))})
		if !u.unordered {
			out = out[:i+1] // an ordered command stops at its first error
			break
		}
	}
	if len(refused) == 0 {
		return m, nil
	}
	s.faults.mu.Lock()
	s.faults.tooLarge += int64(len(refused))
	s.faults.mu.Unlock()
	return u.encode(m, out), refused
}

// tooLarge reports whether update statement st, applied to its document in
// coll, would leave it larger than max bytes: false when it names no
// document by _id, is an upsert or multi update, or its document does not
// exist or does not match its filter.
func (s *Server) tooLarge(coll *mongo.Collection, st bsoncore.Document, max int64) (bool, error) {
	q, ok := st.Lookup("q").DocumentOK()
	if !ok {
		return false, nil
	}
	for _, k := range []string{"upsert", "multi"} {
		if b, ok := st.Lookup(k).BooleanOK(); ok && b {
			return false, nil
		}
	}
	update, ok := st.Lookup("u").DocumentOK()
	if !ok {
		return false, nil // a pipeline: not tried
	}
	id, err := q.LookupErr("_id")
	if err != nil {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), statementTimeout)
	defer cancel()
	byID := bson.Raw(bsoncore.BuildDocument(nil, bsoncore.AppendValueElement(nil, "_id", id)))
	doc, err := coll.FindOne(ctx, byID).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if match, err := matches(coll, id, q); err != nil || !match {
		return false, err
	}
	s.scratchUsed.Store(true)
	scratch := coll.Database().Client().Database(scratchDB).Collection(s.scratchName)
	defer func() { _, _ = scratch.DeleteOne(context.Background(), byID) }()
	if _, err := scratch.DeleteOne(ctx, byID); err != nil {
		return false, err
	}
	if _, err := scratch.InsertOne(ctx, doc); err != nil {
		return false, err
	}
	if _, err := scratch.UpdateOne(ctx, byID, bson.Raw(update)); err != nil {
		return false, err
	}
	after, err := scratch.FindOne(ctx, byID).Raw()
	if err != nil {
		return false, err
	}
	return int64(len(after)) > max, nil
}

// scratchDB holds the proxy's scratch collections.
const scratchDB = "mongotest_scratch"

// newScratchName returns a scratch collection name no other proxy uses.
func newScratchName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "maxdoc_" + hex.EncodeToString(b[:])
}

// withWriteErrors returns the reply r to an update command with a write
// error for each statement refused, merged by index with the server's
// own; r itself when it cannot read it or the command failed whole.
func withWriteErrors(r message, ref refusal) message {
	o, ok := parseMsg(r)
	if !ok {
		return r
	}
	if okv, ok := o.body.Lookup("ok").AsFloat64OK(); !ok || okv != 1 {
		return r
	}
	type writeError struct {
		index int32
		doc   bsoncore.Document
	}
	var errs []writeError
	if arr, ok := o.body.Lookup("writeErrors").ArrayOK(); ok {
		vals, err := arr.Values()
		if err != nil {
			return r
		}
		for _, v := range vals {
			d, ok := v.DocumentOK()
			if !ok {
				return r
			}
			i, _ := d.Lookup("index").AsInt64OK()
			errs = append(errs, writeError{int32(i), d})
		}
	}
	msg := "Resulting document after update is larger than " + strconv.FormatInt(ref.max, 10)
	for _, i := range ref.indexes {
		errs = append(errs, writeError{i, bsoncore.NewDocumentBuilder().
			AppendInt32("index", i).AppendInt32("code", codeTooLarge).AppendString("errmsg", msg).Build()})
	}
	slices.SortStableFunc(errs, func(a, b writeError) int { return int(a.index - b.index) })
	elems, err := o.body.Elements()
	if err != nil {
		return r
	}
	idx, b := bsoncore.AppendDocumentStart(nil)
	for _, e := range elems {
		if e.Key() != "writeErrors" {
			b = append(b, e...)
		}
	}
	aidx, b := bsoncore.AppendArrayElementStart(b, "writeErrors")
	for i, e := range errs {
		b = bsoncore.AppendDocumentElement(b, strconv.Itoa(i), e.doc)
	}
	b, _ = bsoncore.AppendArrayEnd(b, aidx)
	o.body, _ = bsoncore.AppendDocumentEnd(b, idx)
	return o.encode(r)
}
