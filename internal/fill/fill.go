// Package fill writes hits into the buckets the way the daemon does, for
// tests: counted into a buffer, then flushed by the real flusher to every
// level and the sites collection, in one batch (Write); or built here,
// split between page buckets and tails as a test says (Docs).
package fill

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/measure"
)

// Hit is one hit of a page at a time, with its facts.
type Hit struct {
	Page string
	At   time.Time
	F    measure.Hit
}

// Write writes hits of site to db through a buffer and the real flusher
// (every level and the sites collection), in one batch: each period's
// plan decides, as in the daemon (a page under its level's break-even is
// an entry of its site's tails).
func Write(t testing.TB, db *mongo.Database, site string, hits []Hit) {
	t.Helper()
	write(t, db, site, hits, 0)
}

// WriteHot is Write with every page hot: each page's counts in its own
// buckets, in the shapes logtally wrote every page in before tails (a
// test of those shapes: old documents, widened counts).
func WriteHot(t testing.TB, db *mongo.Database, site string, hits []Hit) {
	t.Helper()
	write(t, db, site, hits, 1)
}

// write is Write with the flusher's PreallocateMinHits (0: each level's
// break-even).
func write(t testing.TB, db *mongo.Database, site string, hits []Hit, minHits int) {
	t.Helper()
	buf := testenv.OpenBuffer(t, filepath.Join(t.TempDir(), "buffer.db"), buffer.Options{})
	counts := map[string]measure.Vector{}
	for _, h := range hits {
		k := string(buffer.AppendKey(nil, []byte(site), []byte(h.Page), h.At.Unix()))
		v := counts[k]
		v.Add(&h.F)
		counts[k] = v
	}
	if err := buf.Commit(buffer.Commit{Counts: buffer.CountsOf(counts)}); err != nil {
		t.Fatal(err)
	}
	f, err := flusher.New(flusher.Config{Buffer: buf, DB: db, MaxOps: 40, Timeout: 30 * time.Second, PreallocateMinHits: minHits})
	if err != nil {
		t.Fatal(err)
	}
	if sent, err := f.Flush(context.Background()); err != nil || !sent {
		t.Fatalf("flush: %v, %v", sent, err)
	}
}
