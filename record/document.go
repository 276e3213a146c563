package record

// The stored form of a Record: one flat document, as logtally has always
// written it, whatever the Go type. A record written by an older logtally
// is read by this one and the other way round (a fleet mid-upgrade), so
// the field names, their BSON types and which fields an insert leaves out
// when empty stay as they were (testdata/record-v1.json, written by the
// flat Record of before, is the reference).

import (
	"fmt"
	"reflect"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// keys names one snapshot's fields in the document. Empty: not stored.
type keys struct {
	batch, sealedAt, checkpoints, minuteOnly, layout string
	// finished names the files, and with "_known" and "_left_out" the
	// other two fields of Finished; archives the parts, and with
	// "_left_out" ArchivesLeftOut.
	finished, archives string
	// kept: an insert writes batch and checkpoints even when empty
	// (sealed_at always).
	kept bool
}

var (
	currentKeys  = keys{"batch", "sealed_at", "to", "minute_only", "layout", "finished", "archives", true}
	previousKeys = keys{"from_batch", "from_sealed_at", "from", "", "", "", "", true}
	coarseKeys   = keys{"coarse_batch", "coarse_sealed_at", "coarse", "", "", "coarse_finished", "coarse_archives", false}
)

// field is one field of the document: its key, a pointer to the Record's
// value, and whether an insert writes it even when empty.
type field struct {
	key  string
	ptr  any
	kept bool
	// sparse: Begin leaves it out when empty (else it sets every field,
	// clearing the previous batch's), as a stale value is never read.
	sparse bool
	// read, when not nil, is called once the document is read.
	read func()
}

// layoutMark is a batch's layout as stored: with the batch it is the
// layout of, so that a value left by an earlier batch (Begin leaves the
// field out for layout 0; an older logtally never touches it) is not
// taken for a later batch's.
type layoutMark struct {
	Batch  string `bson:"batch"`
	Layout int    `bson:"n"`
}

// get returns the field's value.
func (f field) get() any { return reflect.ValueOf(f.ptr).Elem().Interface() }

// empty reports whether the value is empty as BSON's omitempty means it.
func (f field) empty() bool {
	v := reflect.ValueOf(f.ptr).Elem()
	if v.Kind() == reflect.Slice {
		return v.Len() == 0
	}
	return v.IsZero()
}

// fields returns every field of r's document, pointing into r.
func (r *Record) fields() []field {
	fs := append([]field{{key: "_id", ptr: &r.Instance, kept: true}}, r.batchFields()...)
	return append(fs, field{key: "lease", ptr: &r.Lease, kept: true}, field{key: "updated", ptr: &r.Updated, kept: true})
}

// batchFields returns the fields Begin writes: the buffer, the batches'
// positions and whether Current was acknowledged.
func (r *Record) batchFields() []field {
	fs := []field{{key: "buffer_id", ptr: &r.BufferID, kept: true}, {key: "acked", ptr: &r.Acked, kept: true}}
	fs = r.Current.fields(fs, currentKeys)
	fs = r.Previous.fields(fs, previousKeys)
	return r.Coarse.fields(fs, coarseKeys)
}

// fields appends the fields of s named by k to fs.
func (s *Snapshot) fields(fs []field, k keys) []field {
	fs = append(fs, field{key: k.batch, ptr: &s.Batch, kept: k.kept}, field{key: k.sealedAt, ptr: &s.SealedAt, kept: true},
		field{key: k.checkpoints, ptr: &s.Checkpoints, kept: k.kept})
	if k.minuteOnly != "" {
		fs = append(fs, field{key: k.minuteOnly, ptr: &s.MinuteOnly})
	}
	if k.layout != "" {
		m := &layoutMark{}
		if s.Layout != 0 {
			*m = layoutMark{Batch: s.Batch, Layout: s.Layout}
		}
		fs = append(fs, field{key: k.layout, ptr: m, sparse: true, read: func() {
			if s.Layout = 0; m.Batch == s.Batch {
				s.Layout = m.Layout
			}
		}})
	}
	if k.finished != "" {
		fs = append(fs, field{key: k.finished, ptr: &s.Finished.Files}, field{key: k.finished + "_known", ptr: &s.Finished.Known},
			field{key: k.finished + "_left_out", ptr: &s.Finished.LeftOut})
	}
	if k.archives != "" {
		fs = append(fs, field{key: k.archives, ptr: &s.Archives}, field{key: k.archives + "_left_out", ptr: &s.ArchivesLeftOut})
	}
	return fs
}

// MarshalBSON encodes r as its flat document, leaving out the empty
// fields that were always left out.
func (r Record) MarshalBSON() ([]byte, error) {
	var d bson.D
	for _, f := range r.fields() {
		if f.kept || !f.empty() {
			d = append(d, bson.E{Key: f.key, Value: f.get()})
		}
	}
	return bson.Marshal(d)
}

// UnmarshalBSON decodes r from its flat document; a field missing is
// zero.
func (r *Record) UnmarshalBSON(data []byte) error {
	doc := bson.Raw(data)
	if err := doc.Validate(); err != nil {
		return fmt.Errorf("progress record: %w", err)
	}
	elems, err := doc.Elements()
	if err != nil {
		return fmt.Errorf("progress record: %w", err)
	}
	*r = Record{}
	fs := r.fields()
	byKey := make(map[string]field)
	for _, f := range fs {
		byKey[f.key] = f
	}
	for _, e := range elems {
		f, ok := byKey[e.Key()]
		if !ok {
			continue
		}
		if err := e.Value().Unmarshal(f.ptr); err != nil {
			return fmt.Errorf("progress record: %s: %w", f.key, err)
		}
	}
	for _, f := range fs {
		if f.read != nil {
			f.read()
		}
	}
	return nil
}
