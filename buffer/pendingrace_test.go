package buffer

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// The pending counts kept in memory (Pending, and the keys and hits each
// commit writes on from them) stay those of the file while commits and
// seals run at once.
func TestPendingCountsWhileSealing(t *testing.T) {
	b := open(t, filepath.Join(t.TempDir(), "buffer.db"))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var sealed uint64
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			batch, err := b.Seal(Seal{})
			if err != nil {
				t.Error(err)
				return
			}
			if batch != nil {
				sealed += batch.Hits
				if err := b.Ack(batch.ID); err != nil {
					t.Error(err)
					return
				}
			}
		}
	})
	const commits = 500
	for i := range commits {
		k := key("s", fmt.Sprintf("/p%d", i), 60)
		if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{k: 1}))}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	_, memHits := b.Pending()
	var diskKeys int
	var diskHits uint64
	must(t, b.View(func(tx *ReadTx) error { diskKeys, diskHits = tx.Unacked(); return nil }))
	if memHits != diskHits || sealed+diskHits != commits {
		t.Errorf("pending %d hits in memory, %d in the file (%d keys); %d sealed: want %d in all", memHits, diskHits, diskKeys, sealed, commits)
	}
}
