package bucket

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// cursor is whole's way to its fields: it remembers where the previous
// term's path was found, so that the next term, most often the next field
// of the same sub-document (an update's terms come in the zero document's
// order), is found by reading on from there rather than from the start of
// the document: a minute bucket's update writes its 60 seconds' counters
// one after the other. The offsets stay true while values are overwritten
// in place; anything that moves bytes (a new field, a value changing
// width) goes through setPath, which rebuilds, and forgets them.
type cursor struct {
	keys []string // the previous path's components
	at   []int    // at[i]: the offset in the document of keys[i]'s element
}

// set is setPath(doc, path, f) using and updating c.
func (c *cursor) set(doc []byte, path string, f func(old bsoncore.Value, found bool) (bsoncore.Value, error)) ([]byte, error) {
	if out, ok, err := c.inPlace(doc, path, f); ok || err != nil {
		return out, err
	}
	c.keys, c.at = c.keys[:0], c.at[:0]
	return setPath(doc, path, f)
}

// inPlace finds path's value from c's offsets and overwrites it with what
// f returns when that has the old value's type and size (ok). It changes
// nothing and reports !ok when the value is missing, is of another size,
// or the document is not as expected: setPath decides then.
func (c *cursor) inPlace(doc []byte, path string, f func(old bsoncore.Value, found bool) (bsoncore.Value, error)) (out []byte, ok bool, err error) {
	if len(doc) < 5 {
		return nil, false, nil
	}
	start, end := 4, len(doc)-1 // the elements of the document searched at this depth
	same := true                // the path so far is the previous one's
	// The path found is written over the previous one as it is read:
	// keys[depth] and at[depth] are read before c's are appended.
	keys, at := c.keys, c.at
	c.keys, c.at = c.keys[:0], c.at[:0]
	for depth, rest := 0, path; ; depth++ {
		key, tail, nested := strings.Cut(rest, ".")
		pos := -1
		from := start
		if same && depth < len(keys) {
			if keys[depth] == key {
				pos = at[depth]
			} else {
				// Read on after the previous path's field at this depth.
				if el, _, ok := bsoncore.ReadElement(doc[at[depth]:end]); ok {
					from = at[depth] + len(el)
				}
				same = false
			}
		} else {
			same = false
		}
		if pos < 0 {
			pos = find(doc, key, from, end)
			if pos < 0 && from != start {
				pos = find(doc, key, start, from)
			}
			if pos < 0 {
				return nil, false, nil
			}
		}
		el, _, ok := bsoncore.ReadElement(doc[pos:end])
		if !ok {
			return nil, false, nil
		}
		c.keys, c.at = append(c.keys, key), append(c.at, pos)
		old := el.Value()
		if nested {
			if old.Type != bsoncore.TypeEmbeddedDocument || len(old.Data) < 5 {
				return nil, false, nil
			}
			vstart := pos + len(el) - len(old.Data)
			start, end = vstart+4, vstart+len(old.Data)-1
			rest = tail
			continue
		}
		v, err := f(old, true)
		if err != nil {
			return nil, false, err
		}
		if v.Type != old.Type || len(v.Data) != len(old.Data) {
			return nil, false, nil
		}
		copy(old.Data, v.Data)
		return doc, true, nil
	}
}

// find returns the offset of the element named key among the elements of
// doc[from:end] (from at an element's start), or -1.
func find(doc []byte, key string, from, end int) int {
	for pos := from; pos < end; {
		el, _, ok := bsoncore.ReadElement(doc[pos:end])
		if !ok {
			return -1
		}
		if string(el.KeyBytes()) == key {
			return pos
		}
		pos += len(el)
	}
	return -1
}
