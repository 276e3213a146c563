package query

import (
	"context"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
)

// MaxSites bounds the sites Sites returns.
const MaxSites = 10000

// Sites returns the sites that have buckets, sorted, at most MaxSites
// (the first ones): the sites of the sites collection (one document per
// site and day), or when it has none (buckets written before it
// existed), of the monthly buckets.
func (r *Reader) Sites(ctx context.Context) ([]string, error) {
	for _, src := range []struct{ coll, field string }{
		{r.Collections.SiteName(), bucket.FieldMetadata + "." + bucket.FieldSite},
		{r.Collections.Name(bucket.Monthly), bucket.Monthly.SiteField()},
	} {
		// A $group, not distinct: the embedded test server answers a
		// distinct with a deadline (maxTimeMS) with a body the driver
		// cannot decode.
		cur, err := r.DB.Collection(src.coll).Aggregate(ctx, mongo.Pipeline{
			{{Key: "$group", Value: bson.D{{Key: bucket.FieldID, Value: "$" + src.field}}}},
			{{Key: "$sort", Value: bson.D{{Key: bucket.FieldID, Value: 1}}}},
			{{Key: "$limit", Value: MaxSites}},
		})
		if err != nil {
			return nil, fmt.Errorf("read %s: the sites: %w", src.coll, err)
		}
		var docs []struct {
			Site any `bson:"_id"`
		}
		if err := cur.All(ctx, &docs); err != nil {
			return nil, fmt.Errorf("read %s: the sites: %w", src.coll, err)
		}
		var sites []string
		for _, d := range docs {
			if s, ok := d.Site.(string); ok && s != "" {
				sites = append(sites, s)
			}
		}
		if len(sites) > 0 {
			slices.Sort(sites)
			return sites, nil
		}
	}
	return nil, nil
}
