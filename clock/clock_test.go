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

// The offset is read only in a test binary, and a bad one is refused.
func TestOffsetOnlyInTests(t *testing.T) {
	if d := testOffset(false, "43830h"); d != 0 {
		t.Errorf("outside a test binary: offset %v", d)
	}
	if d := testOffset(true, "43830h"); d != 43830*time.Hour {
		t.Errorf("in a test binary: offset %v", d)
	}
	if d := testOffset(true, ""); d != 0 {
		t.Errorf("unset: offset %v", d)
	}
	defer func() {
		if recover() == nil {
			t.Error("a malformed offset was accepted")
		}
	}()
	testOffset(true, "five years")
}

// Real follows the offset this test binary was started with.
func TestRealMovedByOffset(t *testing.T) {
	got := time.Until(Real{}.Now())
	if d := got - Offset(); d < -time.Second || d > time.Second {
		t.Errorf("Real is %v from the wall clock, offset %v", got, Offset())
	}
}
