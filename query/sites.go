package query

import (
	"context"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

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
		res := r.DB.Collection(src.coll).Distinct(ctx, src.field, bson.D{})
		var sites []string
		if err := res.Decode(&sites); err != nil {
			return nil, fmt.Errorf("read %s: the sites: %w", src.coll, err)
		}
		if len(sites) > 0 {
			slices.Sort(sites)
			return sites[:min(len(sites), MaxSites)], nil
		}
	}
	return nil, nil
}
