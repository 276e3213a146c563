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
	batch, sealedAt, checkpoints, minuteOnly string
	// finished names the files, and with "_known" and "_left_out" the
	// other two fields of Finished; archives the parts, and with
	// "_left_out" ArchivesLeftOut.
	finished, archives string
	// kept: an insert writes batch and checkpoints even when empty
	// (sealed_at always).
	kept bool
}

var (
	currentKeys  = keys{"batch", "sealed_at", "to", "minute_only", "finished", "archives", true}
	previousKeys = keys{"from_batch", "from_sealed_at", "from", "", "", "", true}
	coarseKeys   = keys{"coarse_batch", "coarse_sealed_at", "coarse", "", "coarse_finished", "coarse_archives", false}
)

// field is one field of the document: its key, a pointer to the Record's
// value, and whether an insert writes it even when empty.
type field struct {
	key  string
	ptr  any
	kept bool
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
	fs := append([]field{{"_id", &r.Instance, true}}, r.batchFields()...)
	return append(fs, field{"lease", &r.Lease, true}, field{"updated", &r.Updated, true})
}

// batchFields returns the fields Begin writes: the buffer, the batches'
// positions and whether Current was acknowledged.
func (r *Record) batchFields() []field {
	fs := []field{{"buffer_id", &r.BufferID, true}, {"acked", &r.Acked, true}}
	fs = r.Current.fields(fs, currentKeys)
	fs = r.Previous.fields(fs, previousKeys)
	return r.Coarse.fields(fs, coarseKeys)
}

// fields appends the fields of s named by k to fs.
func (s *Snapshot) fields(fs []field, k keys) []field {
	fs = append(fs, field{k.batch, &s.Batch, k.kept}, field{k.sealedAt, &s.SealedAt, true},
		field{k.checkpoints, &s.Checkpoints, k.kept})
	if k.minuteOnly != "" {
		fs = append(fs, field{k.minuteOnly, &s.MinuteOnly, false})
	}
	if k.finished != "" {
		fs = append(fs, field{k.finished, &s.Finished.Files, false}, field{k.finished + "_known", &s.Finished.Known, false},
			field{k.finished + "_left_out", &s.Finished.LeftOut, false})
	}
	if k.archives != "" {
		fs = append(fs, field{k.archives, &s.Archives, false}, field{k.archives + "_left_out", &s.ArchivesLeftOut, false})
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
	byKey := make(map[string]field)
	for _, f := range r.fields() {
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
	return nil
}
