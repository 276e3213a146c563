package clock

import (
	"testing"
	"time"
)

func TestFakeFiresOnlyWhenDue(t *testing.T) {
	f := NewFake(time.Unix(1000, 0))
	ch := f.After(10 * time.Second)
	done := make(chan struct{})
	go func() { f.BlockUntil(1); close(done) }()
	<-done
	f.Advance(9 * time.Second)
	select {
	case <-ch:
		t.Fatal("fired before due")
	default:
	}
	f.Advance(time.Second)
	select {
	case got := <-ch:
		if !got.Equal(time.Unix(1010, 0)) {
			t.Fatalf("fired at %v, want 1010", got.Unix())
		}
	default:
		t.Fatal("did not fire when due")
	}
	if f.Waiters() != 0 {
		t.Fatalf("waiters = %d, want 0", f.Waiters())
	}
}
