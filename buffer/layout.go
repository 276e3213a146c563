package buffer

import (
	"fmt"
	"os"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// Layout is how a batch's counts are laid out in the database, fixed
// when the batch is sealed so that every attempt, resume and rebuild of
// it writes them to the same documents: a batch part of which went to
// one layout must go wholly to it, or a count lands twice (or never).
// The buffer only keeps the stamp; the flusher gives it its meaning.
type Layout uint8

// The layouts.
const (
	// LayoutPages: every page's counts in its own buckets. A batch sealed
	// by a logtally before layouts carries no stamp, and is this.
	LayoutPages Layout = 0
	// LayoutTails: each period's plan decides; a hot page's counts in
	// its own buckets, a cold page's in an entry of its site's tails.
	LayoutTails Layout = 1
)

// CurrentLayout is the layout of every batch sealed now (Seal), outside
// a test binary that sets SealLayoutEnv.
const CurrentLayout = LayoutTails

// SealLayoutEnv is the variable that, in a test binary only
// (testing.Testing), sets the layout Seal stamps: "pages" (LayoutPages)
// makes the process write as a logtally before layouts did, every page
// to its own buckets and no plan read or written by its batches, so that
// a test can run old and new hosts side by side (cmd/logtally's
// TestMixed*: the daemons they start are the test binary); "tails" is
// LayoutTails; unset or empty, CurrentLayout. Only the batches are the
// older version's: the preallocator stays this version's (it may insert
// the next period's plans), which changes no count (mixed_test.go says
// why). Other binaries never read it, as clock.OffsetEnv.
const SealLayoutEnv = "LOGTALLY_TEST_SEAL_LAYOUT"

// sealLayout is the layout Seal stamps: CurrentLayout except in a test
// binary run with SealLayoutEnv set.
var sealLayout = testSealLayout(testing.Testing(), os.Getenv(SealLayoutEnv))

// testSealLayout parses SealLayoutEnv's value in a test binary; a value
// it does not know stops the test binary at once rather than run in a
// layout the test did not ask for.
func testSealLayout(inTest bool, v string) Layout {
	if !inTest || v == "" {
		return CurrentLayout
	}
	switch v {
	case "pages":
		return LayoutPages
	case "tails":
		return LayoutTails
	}
	panic(fmt.Sprintf("buffer: %s=%q: want pages or tails", SealLayoutEnv, v))
}

// keyLayout holds, in sealed, the batch's layout (one byte); missing:
// LayoutPages.
var keyLayout = []byte("layout")

// readLayout returns the layout stamped on the sealed batch.
func readLayout(sealed *bolt.Bucket) Layout {
	if v := sealed.Get(keyLayout); len(v) == 1 {
		return Layout(v[0])
	}
	return LayoutPages
}

// putLayout stamps the batch being sealed (in its transaction).
func putLayout(sealed *bolt.Bucket, l Layout) error {
	if l == LayoutPages {
		return sealed.Delete(keyLayout)
	}
	return sealed.Put(keyLayout, []byte{byte(l)})
}
