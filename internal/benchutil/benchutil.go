// Package benchutil holds what the bench commands share: the monthly
// buckets' total (the check that every hit arrived) and number grouping.
package benchutil

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// MonthlyTotal sums the monthly buckets' totals in c.
func MonthlyTotal(c *mongo.Collection) (int64, error) {
	cur, err := c.Find(context.Background(), bson.D{}, options.Find().SetProjection(bson.D{{Key: "total", Value: 1}}))
	if err != nil {
		return 0, err
	}
	var docs []struct {
		Total int64 `bson:"total"`
	}
	if err := cur.All(context.Background(), &docs); err != nil {
		return 0, err
	}
	var n int64
	for _, d := range docs {
		n += d.Total
	}
	return n, nil
}
