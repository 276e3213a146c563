package buffer

import bolt "go.etcd.io/bbolt"

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

// CurrentLayout is the layout of every batch sealed now (Seal,
// SealMinuteOnly).
const CurrentLayout = LayoutTails

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
