package ledger

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/stream"
)

// Claimants racing for one document: exactly one gets it, whether the
// document is new or its claim was just released.
func TestLedgerClaimRace(t *testing.T) {
	st := New(mongotest.Start(t).Database(t), 0)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for round := range 20 {
		key := stream.LedgerKey(60+round%2, uint64(round/2)) // a new document, then a released one
		if round%2 == 1 {
			if _, ok, err := st.Claim(ctx, key, Claim{Holder: "first", Until: t0.Add(time.Minute)}, t0); err != nil || !ok {
				t.Fatal(ok, err)
			}
			if err := st.Release(ctx, key, "first"); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		var won atomic.Int32
		for i := range 4 {
			wg.Go(func() {
				_, ok, err := st.Claim(ctx, key, Claim{Holder: fmt.Sprint("h", i), Until: t0.Add(time.Minute)}, t0)
				if err != nil {
					t.Error(err)
				}
				if ok {
					won.Add(1)
				}
			})
		}
		wg.Wait()
		if won.Load() != 1 {
			t.Errorf("round %d: %d claimants won", round, won.Load())
		}
	}
}
