package flusher

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/measure"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// benchKeys returns sorted batch keys for pages pages of one site, each
// hit in secs consecutive seconds (spanning a minute boundary), as the
// buffer would hold them.
func benchKeys(pages, secs int) [][]byte {
	var keys [][]byte
	base := int64(1_717_245_570) // 2024-06-01T12:39:30Z
	for p := range pages {
		page := fmt.Appendf(nil, "/articles/%d", p)
		for s := range secs {
			keys = append(keys, buffer.AppendKey(nil, []byte("www.example.com"), page, base+int64(s)))
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	return keys
}

// buildAll groups keys into chunks of maxOps buckets for each pass and
// builds their update models, as writeBatch does minus bbolt and the
// network; encode also marshals each update as the driver would.
func buildAll(b *testing.B, c *Chunker, keys [][]byte, encode bool) {
	three := measure.OfViews(3)
	for p := minutePass; p <= monthlyPass; p++ {
		for i := 0; i < len(keys); {
			c.Reset(p.level(), 1000)
			for i < len(keys) && c.Add(keys[i], &three) {
				i++
			}
			docs := make([]guarded, len(c.Docs))
			for i := range c.Docs {
				docs[i] = &c.Docs[i]
			}
			models := updates(docs, "applied.0123456789abcdef", "00112233445566778899aabb")
			if !encode {
				continue
			}
			for _, m := range models {
				u := m.(*mongo.UpdateOneModel)
				if _, err := bson.Marshal(u.Filter); err != nil {
					b.Fatal(err)
				}
				if _, err := bson.Marshal(u.Update); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkBuildUpdates measures the flusher's own CPU for a batch of
// 10,000 keys (3 hits each): 200 pages x 50 seconds, so 400 minute, 200
// daily and 200 monthly buckets. Reported per 1,000 hits.
func BenchmarkBuildUpdates(b *testing.B) {
	for _, encode := range []bool{false, true} {
		name := "models"
		if encode {
			name = "models+bson"
		}
		b.Run(name, func(b *testing.B) {
			keys := benchKeys(200, 50)
			hits := float64(3 * len(keys))
			var c Chunker
			b.ReportAllocs()
			for b.Loop() {
				buildAll(b, &c, keys, encode)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(hits/1000), "ns/1000hits")
		})
	}
}

// BenchmarkZeroDocs measures building and encoding the zero-filled
// documents of new buckets, the cost of a batch after an outage.
func BenchmarkZeroDocs(b *testing.B) {
	one := measure.OfViews(1)
	var c Chunker
	keys := benchKeys(1, 1)
	for p := minutePass; p <= monthlyPass; p++ {
		b.Run(p.String(), func(b *testing.B) {
			c.Reset(p.level(), 1)
			c.Add(keys[0], &one)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bson.Marshal(c.Docs[0].Zero()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
