package bucket

import (
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Read is what a reader takes from a bucket document: its page, the start
// of its period, its total and its counter families, those the document
// (or the projection it was read with) holds.
type Read struct {
	Page  string
	Start time.Time
	Total int64
	// Counters holds each family present by its field name, its counters
	// by slot ("7", or "13.5" for the minutes of a day).
	Counters map[string]map[string]int64
}

// Decode reads an l document into r. Fields the document lacks stay zero;
// a field of the wrong type is an error naming it.
func (l Level) Decode(doc bson.Raw, r *Read) error {
	*r = Read{}
	for _, f := range []struct {
		path string
		to   any
	}{{l.PageField(), &r.Page}, {l.TimeField(), &r.Start}, {l.TotalField(), &r.Total}} {
		v, err := doc.LookupErr(strings.Split(f.path, ".")...)
		if err != nil { // absent
			continue
		}
		if err := v.Unmarshal(f.to); err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
	}
	for _, f := range shapes[l].families {
		v, err := doc.LookupErr(f.Field)
		if err != nil {
			continue
		}
		m := map[string]int64{}
		if f.Slots == ByMinuteOfDay {
			var nested map[string]map[string]int64
			if err := v.Unmarshal(&nested); err != nil {
				return fmt.Errorf("%s: %w", f.Field, err)
			}
			for h, mins := range nested {
				for mi, n := range mins {
					m[h+"."+mi] = n
				}
			}
		} else if err := v.Unmarshal(&m); err != nil {
			return fmt.Errorf("%s: %w", f.Field, err)
		}
		if r.Counters == nil {
			r.Counters = map[string]map[string]int64{}
		}
		r.Counters[f.Field] = m
	}
	return nil
}
