package bucket

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// A new bucket is inserted whole: its zero-filled document (Zero) as the
// guarded update (Update) for this batch leaves it, counts and guard
// already in it. whole computes that document from the same Zero and
// Update, applying the update's operators as MongoDB does, so the one
// insert writes exactly what the insert of Zero and the update would.

// Whole returns d's document as Update(g) leaves Zero: the document a
// new bucket is inserted as, this batch's counts and its applied entry
// already in it.
func (d *Doc) Whole(g Guard) (bson.Raw, error) {
	_, update := d.Update(g)
	return whole(d.Zero(), update)
}

// Whole returns d's document as Update(g) leaves Zero (Doc.Whole).
func (d *SiteDoc) Whole(g Guard) (bson.Raw, error) {
	_, update := d.Update(g)
	return whole(d.Zero(), update)
}

// PeriodEnd returns the end of d's period (Unix seconds).
func (d *Doc) PeriodEnd() int64 { return d.End }

// PeriodEnd returns the end of d's day (Unix seconds).
func (d *SiteDoc) PeriodEnd() int64 {
	_, end := Daily.Bounds(d.Start)
	return end
}

// whole returns zero (a document) with update applied: $inc, $max and
// $set of int32, int64 and string values at dotted paths, as MongoDB
// applies them ($inc of two int32 stays int32 unless it overflows, any
// other pair of integers is int64; $max keeps the old value unless the
// new one is greater; a missing field or sub-document is added at the
// end). Anything else is an error: the caller then takes the update path.
// Counters keep their width in the common case and are overwritten in
// place; a value that changes width, or a new field, rebuilds the
// enclosing documents.
func whole(zero, update bson.D) (bson.Raw, error) {
	doc, err := bson.Marshal(zero)
	if err != nil {
		return nil, fmt.Errorf("whole document: %w", err)
	}
	var c cursor
	for _, op := range update {
		terms, ok := op.Value.(bson.D)
		if !ok {
			return nil, fmt.Errorf("whole document: %s is %T, want a document", op.Key, op.Value)
		}
		var apply func(old bsoncore.Value, found bool, v bsoncore.Value) (bsoncore.Value, error)
		switch op.Key {
		case "$inc":
			apply = incValue
		case "$max":
			apply = maxValue
		case "$set":
			apply = func(_ bsoncore.Value, _ bool, v bsoncore.Value) (bsoncore.Value, error) { return v, nil }
		default:
			return nil, fmt.Errorf("whole document: operator %s not supported", op.Key)
		}
		for _, t := range terms {
			v, err := coreValue(t.Value)
			if err != nil {
				return nil, fmt.Errorf("whole document: %s %s: %w", op.Key, t.Key, err)
			}
			if doc, err = c.set(doc, t.Key, func(old bsoncore.Value, found bool) (bsoncore.Value, error) {
				return apply(old, found, v)
			}); err != nil {
				return nil, fmt.Errorf("whole document: %s %s: %w", op.Key, t.Key, err)
			}
		}
	}
	return doc, nil
}

// coreValue encodes an update's value: int32, int64 or string.
func coreValue(x any) (bsoncore.Value, error) {
	switch x := x.(type) {
	case int32:
		return bsoncore.Value{Type: bsoncore.TypeInt32, Data: bsoncore.AppendInt32(nil, x)}, nil
	case int64:
		return bsoncore.Value{Type: bsoncore.TypeInt64, Data: bsoncore.AppendInt64(nil, x)}, nil
	case string:
		return bsoncore.Value{Type: bsoncore.TypeString, Data: bsoncore.AppendString(nil, x)}, nil
	}
	return bsoncore.Value{}, fmt.Errorf("value of type %T not supported", x)
}

// errNotInteger is an $inc or $max meeting something other than an int32
// or an int64.
var errNotInteger = errors.New("not an int32 or int64")

// integer returns v as an int64 and whether it is an int32.
func integer(v bsoncore.Value) (n int64, narrow bool, err error) {
	switch v.Type {
	case bsoncore.TypeInt32:
		return int64(v.Int32()), true, nil
	case bsoncore.TypeInt64:
		return v.Int64(), false, nil
	}
	return 0, false, errNotInteger
}

// incValue is $inc: old + v.
func incValue(old bsoncore.Value, found bool, v bsoncore.Value) (bsoncore.Value, error) {
	n, nNarrow, err := integer(v)
	if err != nil || !found {
		return v, err
	}
	o, oNarrow, err := integer(old)
	if err != nil {
		return old, err
	}
	if oNarrow && nNarrow {
		if s := o + n; s >= math.MinInt32 && s <= math.MaxInt32 {
			return bsoncore.Value{Type: bsoncore.TypeInt32, Data: bsoncore.AppendInt32(nil, int32(s))}, nil
		}
	}
	s := o + n
	if (n > 0 && s < o) || (n < 0 && s > o) {
		return old, errors.New("int64 overflow")
	}
	return bsoncore.Value{Type: bsoncore.TypeInt64, Data: bsoncore.AppendInt64(nil, s)}, nil
}

// maxValue is $max: v when it is greater than old (or old is missing),
// else old unchanged.
func maxValue(old bsoncore.Value, found bool, v bsoncore.Value) (bsoncore.Value, error) {
	n, _, err := integer(v)
	if err != nil || !found {
		return v, err
	}
	o, _, err := integer(old)
	if err != nil {
		return old, err
	}
	if n > o {
		return v, nil
	}
	return old, nil
}

// setPath returns doc with the value at the dotted path replaced by
// what f returns for the old one (found false: there is none; it is
// added at the end of its document, and missing sub-documents on the
// way are created). A value of the same type and size is written in
// place (doc is modified); otherwise the enclosing documents are rebuilt.
func setPath(doc []byte, path string, f func(old bsoncore.Value, found bool) (bsoncore.Value, error)) ([]byte, error) {
	key, rest, nested := strings.Cut(path, ".")
	if len(doc) < 5 {
		return nil, errors.New("malformed document")
	}
	for pos := 4; pos < len(doc)-1; {
		el, _, ok := bsoncore.ReadElement(doc[pos:])
		if !ok {
			return nil, errors.New("malformed document")
		}
		start, end := pos, pos+len(el)
		pos = end
		if string(el.KeyBytes()) != key {
			continue
		}
		old := el.Value()
		if nested {
			if old.Type != bsoncore.TypeEmbeddedDocument {
				return nil, fmt.Errorf("%s is a %s, not a document", key, old.Type)
			}
			sub, err := setPath(old.Data, rest, f)
			if err != nil {
				return nil, err
			}
			if len(sub) == len(old.Data) && &sub[0] == &old.Data[0] {
				return doc, nil // written in place
			}
			return splice(doc, start, end, bsoncore.AppendDocumentElement(nil, key, sub)), nil
		}
		v, err := f(old, true)
		if err != nil {
			return nil, err
		}
		if v.Type == old.Type && len(v.Data) == len(old.Data) {
			copy(old.Data, v.Data)
			return doc, nil
		}
		return splice(doc, start, end, bsoncore.AppendValueElement(nil, key, v)), nil
	}
	// Not there: add it (and the sub-documents leading to it) at the end.
	var el []byte
	if nested {
		sub, err := setPath(bsoncore.NewDocumentBuilder().Build(), rest, f)
		if err != nil {
			return nil, err
		}
		el = bsoncore.AppendDocumentElement(nil, key, sub)
	} else {
		v, err := f(bsoncore.Value{}, false)
		if err != nil {
			return nil, err
		}
		el = bsoncore.AppendValueElement(nil, key, v)
	}
	return splice(doc, len(doc)-1, len(doc)-1, el), nil
}

// splice returns a new document: doc with its bytes [start, end) (whole
// elements) replaced by el, and its length updated.
func splice(doc []byte, start, end int, el []byte) []byte {
	out := make([]byte, 0, len(doc)-(end-start)+len(el))
	out = append(out, doc[:start]...)
	out = append(out, el...)
	out = append(out, doc[end:]...)
	binary.LittleEndian.PutUint32(out, uint32(len(out)-0))
	return out
}
