package bucket

// What a batch's share of a tail adds: its growth (the bytes an update
// may add, which a tail's size sums and its Limit bounds), its parts and
// their spills when it is too large for one update, and the document a
// new tail is inserted as (Whole).

import (
	"fmt"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/logtally/logtally/measure"
)

// SpillPage returns the page field of part of the spill of shard's tail
// for the batch of guard g: "~<shard>.<writer>.<batch>.<part>", the
// writer and the batch as g names them (decimal numbers, or the hex
// digits of an IDGuard). No other batch's and no tail's: one writer's
// batch is written to it, once.
func SpillPage(shard int, g Guard, part int) string {
	batch := ""
	switch b := g.Batch.(type) {
	case int64:
		batch = strconv.FormatInt(b, 10)
	case string:
		batch = b
	}
	return TailPage(shard) + "." + strings.TrimPrefix(g.Field, FieldApplied+".") + "." + batch + "." + strconv.Itoa(part)
}

// counts reports whether e has a count: an entry without is not written.
func (e *tailEntry) counts() bool {
	for _, c := range e.cells {
		if c.v != (measure.Vector{}) {
			return true
		}
	}
	return false
}

// Fits reports whether doc, t's document as read (its size at least),
// has room for Update(g) under t's Limit. A document without a size
// has none (no update of a bounded tail applies to it). A document
// without room never has room again: sizes only grow.
func (t *Tail) Fits(doc bson.Raw, g Guard) bool {
	if t.Limit <= 0 {
		return true
	}
	v, err := doc.LookupErr(FieldSize)
	if err != nil {
		return false
	}
	n, ok := v.AsInt64OK()
	return ok && n <= t.Limit-t.Growth(g)
}

// Growth returns the most bytes Update(g) may add to t's document: its
// entries as a new tail holds them (an update of a page or slot already
// there adds less), and g's entry in the applied map.
func (t *Tail) Growth(g Guard) int64 {
	var n int64
	for i := range t.entries {
		n += t.entryBytes(&t.entries[i])
	}
	return n + int64(g.EntryBytes())
}

// entryBytes returns the BSON size of e as an element of a new tail's
// pages (what Whole writes): its key, then its cells (by slot but in a
// minute tail), each counter that has counts.
func (t *Tail) entryBytes(e *tailEntry) int64 {
	if !e.counts() {
		return 0
	}
	slotted := measureSlots[t.Level] != Whole
	body := int64(5) // the entry's document: length and terminator
	for _, c := range e.cells {
		if c.v == (measure.Vector{}) {
			continue
		}
		cell := int64(5)
		for m := measure.Views; m < measure.N; m++ {
			if c.v[m] == 0 {
				continue
			}
			width := int64(8)
			if _, narrow := measureValue(m, c.v[m], true).(int32); narrow && !m.IsMax() {
				width = 4
			}
			cell += 1 + int64(len(tailCodes[m])) + 1 + width
		}
		if !slotted {
			body = cell
			break // a minute tail's entry has one cell, the entry's document
		}
		body += 1 + int64(len(strconv.Itoa(c.slot))) + 1 + cell
	}
	return 1 + int64(len(e.key)) + 1 + body
}

// statementBytes returns a bound of the bytes e adds to Update's
// statement: each counter's dotted path and value.
func (t *Tail) statementBytes(e *tailEntry) int64 {
	var n int64
	for _, c := range e.cells {
		path := int64(len(t.cellPath(e.key, c.slot, "")))
		for m := measure.Views; m < measure.N; m++ {
			if c.v[m] != 0 {
				n += 1 + path + int64(len(tailCodes[m])) + 1 + 8
			}
		}
	}
	return n
}

// Split returns t's entries in parts, in their order, each part's
// entries within maxGrowth bytes as a new tail holds them and within
// maxStatement bytes of an update's statement (a part holds one entry
// at least): t itself when it fits whole. The parts are the same
// whenever t holds the same entries in the same order.
func (t *Tail) Split(maxGrowth, maxStatement int64) []Tail {
	var parts []Tail
	from := 0
	var growth, stmt int64
	for i := range t.entries {
		e := &t.entries[i]
		eg, es := t.entryBytes(e), t.statementBytes(e)
		if i > from && (growth+eg > maxGrowth || stmt+es > maxStatement) {
			parts = append(parts, t.part(from, i))
			from, growth, stmt = i, 0, 0
		}
		growth += eg
		stmt += es
	}
	if from == 0 {
		return []Tail{*t}
	}
	return append(parts, t.part(from, len(t.entries)))
}

// part returns t with its entries [from, to) only.
func (t *Tail) part(from, to int) Tail {
	p := *t
	p.entries = t.entries[from:to:to]
	p.index = nil // Add is not called on a part
	p.Total = 0
	for _, e := range p.entries {
		for _, c := range e.cells {
			p.Total += int64(c.v[measure.Views])
		}
	}
	return p
}

// Spill returns t's entries as part part of its spill for the batch of
// guard g (SpillPage): a document of its own, without a Limit, inserted
// whole (Whole) once.
func (t *Tail) Spill(g Guard, part int) Tail {
	s := *t
	s.Page = SpillPage(t.Shard, g, part)
	s.ID = t.Level.ID(t.Start, t.Site, s.Page)
	s.Limit = 0
	s.index = nil
	return s
}

// Whole returns t's document as Update(g) leaves Zero: the document a
// new tail is inserted as (Doc.Whole). Every entry of a new tail is a new
// field, so it is built directly, in the order the update's terms would
// add them (each cell's sums in measure order, then its maximum), rather
// than by applying the update (whole), which would copy the document
// once per counter.
func (t *Tail) Whole(g Guard) (bson.Raw, error) {
	slotted := measureSlots[t.Level] != Whole
	pi, pages := bsoncore.AppendDocumentStart(nil)
	for _, e := range t.entries {
		if !e.counts() {
			continue
		}
		ei, b := bsoncore.AppendDocumentElementStart(pages, e.key)
		for _, c := range e.cells {
			if c.v == (measure.Vector{}) {
				continue
			}
			ci := ei
			if slotted {
				ci, b = bsoncore.AppendDocumentElementStart(b, strconv.Itoa(c.slot))
			}
			for _, maxima := range []bool{false, true} {
				for m := measure.Views; m < measure.N; m++ {
					if c.v[m] == 0 || m.IsMax() != maxima {
						continue
					}
					switch v := measureValue(m, c.v[m], !maxima).(type) {
					case int32:
						b = bsoncore.AppendInt32Element(b, tailCodes[m], v)
					case int64:
						b = bsoncore.AppendInt64Element(b, tailCodes[m], v)
					}
				}
			}
			if slotted {
				b, _ = bsoncore.AppendDocumentEnd(b, ci)
			}
		}
		pages, _ = bsoncore.AppendDocumentEnd(b, ei)
	}
	pages, err := bsoncore.AppendDocumentEnd(pages, pi)
	if err != nil {
		return nil, fmt.Errorf("whole tail: %w", err)
	}
	doc := markerDoc(t.Level, t.ID, t.Site, t.Page, t.Start)
	doc = append(doc,
		bson.E{Key: FieldPages, Value: bson.Raw(pages)},
		bson.E{Key: FieldSize, Value: t.Growth(g)},
		bson.E{Key: FieldApplied, Value: bson.D{{Key: strings.TrimPrefix(g.Field, FieldApplied+"."), Value: g.Batch}}})
	raw, err := bson.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("whole tail: %w", err)
	}
	return raw, nil
}
