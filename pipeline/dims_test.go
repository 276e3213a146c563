package pipeline_test

import (
	"bufio"
	"os"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/parser"
)

// checkDims compares the counts by dimension of every site day in the
// sites collection (bucketcheck.ReadDims) with the sites' files parsed
// with parser.Config.Dims: every value of every dimension exact
// (bucketcheck.CompareDims; the files hold fewer values than a day
// keeps), so each dimension sums to the day's views.
func checkDims(t *testing.T, db *mongo.Database, sites ...site) {
	t.Helper()
	want := bucketcheck.Dims{}
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
				want[id] = &[dims.N]map[string]int64{}
				for d := range want[id] {
					want[id][d] = map[string]int64{}
				}
			}
			for d := range dims.N {
				want[id][d][h.Dims[d]]++
			}
		}
		f.Close()
	}
	bucketcheck.CompareDims(t, want, bucketcheck.ReadDims(t, db))
}
