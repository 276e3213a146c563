package pipeline_test

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/parser"
)

// checkDims compares the counts by dimension of every site day in the
// sites collection with the sites' files parsed with parser.Config.Dims:
// every value of every dimension exact (the files hold fewer values than
// a day keeps), so each dimension sums to the day's views.
func checkDims(t *testing.T, db *mongo.Database, sites ...site) {
	t.Helper()
	want := map[string]map[string]int64{} // site day id -> "dim=value" -> hits
	for _, s := range sites {
		p, err := parser.New(parser.Config{Format: "combined", Site: s.name, Dims: &parser.DimsConfig{}})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(s.path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		var h parser.Hit
		for sc.Scan() {
			if p.Parse(sc.Bytes(), &h) != parser.OK {
				continue
			}
			id := bucket.SiteID(h.Time, string(h.Site))
			if want[id] == nil {
				want[id] = map[string]int64{}
			}
			for d := range dims.N {
				want[id][fmt.Sprintf("%s=%s", d, h.Dims[d])]++
			}
		}
		f.Close()
	}
	cur, err := db.Collection("sites").Find(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]int64{}
	for _, d := range docs {
		id := d.Lookup("_id").StringValue()
		src, err := bucket.SiteSources(d)
		if err != nil {
			t.Fatal(err)
		}
		got[id] = map[string]int64{}
		for dm := range dims.N {
			for v, n := range src[dm] {
				got[id][fmt.Sprintf("%s=%s", dm, v)] = n
			}
		}
	}
	if !maps.EqualFunc(got, want, func(a, b map[string]int64) bool { return maps.Equal(a, b) }) {
		t.Errorf("counts by dimension\n %v\nwant (from the files)\n %v", got, want)
	}
}
