package bucket

import (
	"errors"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/measure"
)

// BreakEven returns the hits in one of l's plan periods (PlanUnit) at
// which a page's own buckets cost no more bytes than its entries in the
// tails would: the zero-filled bytes of the period's buckets (an hour of
// 60 minute buckets, a day's bucket, a 31-day month's bucket) over the
// bytes of a tail entry holding one hit (a cell of its views and
// measures; what TestTailSizes prints). A cold hit costs at most that
// (the next hits of a page's slot only raise its counters), so a page
// below it costs fewer bytes cold than hot. For a page of 22 bytes:
// minute 1,257, daily 331, monthly 72 (docs/buckets.md).
func (l Level) BreakEven() int64 { return breakEven()[l] }

// breakEvenPage is the page the sizes are taken with: a typical path.
const breakEvenPage = "/blog/2026/hello-world"

var breakEven = sync.OnceValue(func() (out [Levels]int64) {
	sec := time.Date(2026, 1, 15, 10, 20, 30, 0, time.UTC).Unix() // a 31-day month
	var v measure.Vector
	v.Add(&measure.Hit{Status: 200, Bytes: 5120, RT: -1})
	for l := range Level(Levels) {
		empty := NewTail(l, "www.example.com", 0, sec)
		one := NewTail(l, "www.example.com", 0, sec)
		one.Add(breakEvenPage, sec, &v)
		d := NewDoc(l, "www.example.com", breakEvenPage, sec)
		g := NumberedGuard(7, 42) // the same in both: it cancels out
		e, err1 := empty.Whole(g)
		o, err2 := one.Whole(g)
		z, err3 := bson.Marshal(d.Zero())
		if err := errors.Join(err1, err2, err3); err != nil {
			panic("bucket: the break-even's documents: " + err.Error())
		}
		buckets := int64(1)
		if l == Minute {
			buckets = 60 // an hour's plan
		}
		entry := int64(len(o) - len(e))
		out[l] = (buckets*int64(len(z)) + entry - 1) / entry
	}
	return out
})
