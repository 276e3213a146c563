// Reading the buckets back from MongoDB.

package bucketcheck

import (
	"context"
	"testing"
	"time"

	"github.com/logtally/logtally/bucket"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Read reads every non-zero counter and measure of every bucket in db's
// bucket collections and of every document of its site collection
// (default names).
func Read(t testing.TB, db *mongo.Database) Counts {
	t.Helper()
	c := newCounts()
	var names bucket.Collections
	for l, b := range [bucket.Levels + 1]Buckets{c.Minute, c.Daily, c.Monthly, c.Sites} {
		name := bucket.DefaultSiteCollection
		if l < bucket.Levels {
			name = names.Name(bucket.Level(l))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cur, err := db.Collection(name).Find(ctx, bson.D{})
		if err != nil {
			cancel()
			t.Fatalf("read %s: %v", name, err)
		}
		var docs []bson.M
		err = cur.All(ctx, &docs)
		cancel()
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		for _, d := range docs {
			id := d["_id"].(string)
			b[id] = map[string]int64{}
			flatten(b[id], "", d)
			if l == int(bucket.Monthly) {
				c.MonthTotal += b[id][bucket.Monthly.TotalField()]
			}
		}
	}
	return c
}
func flatten(out map[string]int64, prefix string, m bson.M) {
	for k, v := range m {
		switch k {
		case bucket.FieldID, bucket.FieldApplied, bucket.FieldMetadata, bucket.FieldSite, bucket.FieldPage, bucket.FieldTimestamp:
			if prefix == "" {
				continue
			}
		}
		switch v := v.(type) {
		case bson.M:
			flatten(out, prefix+k+".", v)
		case bson.D:
			m := bson.M{}
			for _, e := range v {
				m[e.Key] = e.Value
			}
			flatten(out, prefix+k+".", m)
		case int64:
			if v != 0 {
				out[prefix+k] = v
			}
		case int32:
			if v != 0 {
				out[prefix+k] = int64(v)
			}
		}
	}
}
