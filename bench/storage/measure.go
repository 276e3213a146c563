package main

// Measuring what the collections hold: documents, BSON bytes, and zstd
// bytes over runs of documents in _id order.

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/klauspost/compress/zstd"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/ledger"
	"github.com/logtally/logtally/record"
	"github.com/logtally/logtally/salts"
)

// runSize is the size of the runs of documents compressed together,
// about a WiredTiger leaf page (leaf_page_max, 32 KiB), which is
// compressed as one block.
const runSize = 32 << 10

// bookkeeping are the collections that say what was counted and by whom,
// not the counts: the replay ledger (files' offsets, and replay claims on
// its documents), the progress records (a record per instance, the writer
// numbers), and the visitor salts (deleted a grace after their period).
// They do not grow with the traffic and are left out of the figures.
var bookkeeping = []string{ledger.Collection, record.DefaultCollection, salts.Collection}

// isBookkeeping reports whether the collection name is bookkeeping.
func isBookkeeping(name string) bool { return slices.Contains(bookkeeping, name) }

// size is what a collection holds.
type size struct {
	name string
	docs int64
	bson int64 // the documents' BSON, summed
	// zstd is the documents' BSON compressed in runs (type runs), in the
	// order the server returns them unsorted: its natural order, the
	// order WiredTiger stores and compresses a collection's records in
	// (by RecordId: as inserted), and FerretDB (by rowid).
	zstd int64
	// zstdByID is the same in _id order, or -1 when an _id is not a
	// string (the order is then not computed).
	zstdByID int64
	// pageBuckets counts what a reader reads as a bucket: a document of
	// its own (a page's bucket, a site day, a visitors document), or each
	// page entry of a tail (the cold page's bucket of that period); a
	// plan, none. It is the documents logtally wrote before tails.
	pageBuckets int64
}

// add adds o's figures to s.
func (s *size) add(o size) {
	s.docs, s.bson, s.zstd = s.docs+o.docs, s.bson+o.bson, s.zstd+o.zstd
	s.pageBuckets += o.pageBuckets
	if s.zstdByID < 0 || o.zstdByID < 0 {
		s.zstdByID = -1
	} else {
		s.zstdByID += o.zstdByID
	}
}

// collectionOrder puts the bucket collections first, in the order of
// the table, then the others by name.
func collectionOrder(names []string) []string {
	known := []string{bucket.DefaultDailyCollection, bucket.DefaultMinuteCollection, bucket.DefaultMonthlyCollection,
		bucket.DefaultSiteCollection, bucket.DefaultVisitorCollection}
	slices.SortFunc(names, func(a, b string) int {
		ia, ib := slices.Index(known, a), slices.Index(known, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		if a < b {
			return -1
		}
		if a > b {
			return 1
		}
		return 0
	})
	return names
}

// measureDB measures every collection of db: the counted ones (every one
// but the bookkeeping) and the bookkeeping apart, each in collectionOrder.
func measureDB(ctx context.Context, db *mongo.Database, enc *zstd.Encoder) (counted, kept []size, err error) {
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return nil, nil, fmt.Errorf("list collections: %w", err)
	}
	for _, name := range collectionOrder(names) {
		s, err := measureCollection(ctx, db.Collection(name), enc)
		if err != nil {
			return nil, nil, err
		}
		if isBookkeeping(name) {
			kept = append(kept, s)
		} else {
			counted = append(counted, s)
		}
	}
	return counted, kept, nil
}

// measureCollection reads every document of c, in its natural order.
func measureCollection(ctx context.Context, c *mongo.Collection, enc *zstd.Encoder) (size, error) {
	s := size{name: c.Name()}
	cur, err := c.Find(ctx, bson.D{}, options.Find().SetBatchSize(1000))
	if err != nil {
		return s, fmt.Errorf("read %s: %w", c.Name(), err)
	}
	defer cur.Close(ctx)
	type doc struct {
		id  string
		raw []byte
	}
	var docs []doc
	byID := true
	r := runs{enc: enc}
	for cur.Next(ctx) {
		s.docs++
		s.bson += int64(len(cur.Current))
		s.pageBuckets += pageBuckets(cur.Current)
		r.add(cur.Current)
		id, ok := cur.Current.Lookup("_id").StringValueOK()
		byID = byID && ok
		if byID {
			docs = append(docs, doc{id, slices.Clone(cur.Current)})
		}
	}
	if err := cur.Err(); err != nil {
		return s, fmt.Errorf("read %s: %w", c.Name(), err)
	}
	s.zstd = r.close()
	s.zstdByID = -1
	if byID {
		// MongoDB orders string _ids by their bytes (no collation).
		slices.SortFunc(docs, func(a, b doc) int { return strings.Compare(a.id, b.id) })
		r := runs{enc: enc}
		for _, d := range docs {
			r.add(d.raw)
		}
		s.zstdByID = r.close()
	}
	return s, nil
}

// pageBuckets returns the page buckets doc stands for (size.pageBuckets).
func pageBuckets(doc bson.Raw) int64 {
	if pages, err := doc.LookupErr(bucket.FieldPages); err == nil {
		if d, ok := pages.DocumentOK(); ok {
			els, _ := d.Elements()
			return int64(len(els))
		}
	}
	if _, err := doc.LookupErr(bucket.FieldHot); err == nil {
		return 0 // a plan
	}
	return 1
}

// runs compresses documents in runs: consecutive documents are gathered
// until the run holds runSize bytes or more, then the run is compressed
// alone (one zstd frame, as a page is one block). A run is at least
// runSize bytes (but the last), and at most one document more. (Measured
// so, the figures are reproduced: its 84, 22 and 15 bytes per hit
// for the daily, minute and monthly buckets of the real log.)
type runs struct {
	enc        *zstd.Encoder
	buf, out   []byte
	compressed int64
	n          int // runs compressed
}

// add adds one document.
func (r *runs) add(doc []byte) {
	r.buf = append(r.buf, doc...)
	if len(r.buf) >= runSize {
		r.flush()
	}
}

// flush compresses the run gathered.
func (r *runs) flush() {
	if len(r.buf) == 0 {
		return
	}
	r.out = r.enc.EncodeAll(r.buf, r.out[:0])
	r.compressed += int64(len(r.out))
	r.n++
	r.buf = r.buf[:0]
}

// close compresses the last run and returns the compressed bytes of all.
func (r *runs) close() int64 {
	r.flush()
	return r.compressed
}

// compressFile is the zstd size of the file at path cut in runs of
// runSize bytes, for the raw log's figure beside the documents'.
func compressFile(path string, enc *zstd.Encoder) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := runs{enc: enc}
	chunk := make([]byte, runSize)
	for {
		n, err := io.ReadFull(f, chunk)
		if n > 0 {
			r.add(chunk[:n])
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return r.close(), nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// checkSources checks that each site day of c holds, in each dimension,
// values summing to its views (every hit under one value of each) and
// returns the site days read.
func checkSources(ctx context.Context, c *mongo.Collection) (int, error) {
	cur, err := c.Find(ctx, bson.D{})
	if err != nil {
		return 0, err
	}
	defer cur.Close(ctx)
	n := 0
	for ; cur.Next(ctx); n++ {
		id, _ := cur.Current.Lookup(bucket.FieldID).StringValueOK()
		views, _ := cur.Current.Lookup(bucket.FieldViews).AsInt64OK()
		src, err := bucket.SiteSources(cur.Current)
		if err != nil {
			return n, fmt.Errorf("%s: %w", id, err)
		}
		for d, vals := range src {
			var sum int64
			for _, v := range vals {
				sum += v
			}
			if sum != views {
				return n, fmt.Errorf("%s: %d views, %d by %s", id, views, sum, dims.Dim(d))
			}
		}
	}
	return n, cur.Err()
}
