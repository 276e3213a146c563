package tailer

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/logtally/logtally/stream"
)

// bubble runs a Tailer on the real clock inside a synctest bubble: time
// moves only when every goroutine of the test waits, so after
// synctest.Wait every follower has polled and every chunk it read has been
// collected. File reads are plain system calls, done before the follower
// waits on its timer again.
type bubble struct {
	t      *testing.T
	tl     *Tailer
	cancel context.CancelFunc
	ran    chan error

	mu     sync.Mutex
	chunks []stream.Chunk
}

func startBubble(t *testing.T, cfg Config) *bubble {
	out := make(chan stream.Chunk)
	tl, err := New(cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	b := &bubble{t: t, tl: tl, cancel: cancel, ran: make(chan error, 1)}
	go func() { b.ran <- tl.Run(ctx) }()
	go func() {
		for {
			select {
			case c := <-out:
				b.mu.Lock()
				b.chunks = append(b.chunks, c)
				b.mu.Unlock()
			case <-ctx.Done():
				return
			}
		}
	}()
	synctest.Wait()
	return b
}

// after lets d of (fake) time pass and waits until everything settled.
func (b *bubble) after(d time.Duration) []stream.Chunk {
	time.Sleep(d)
	synctest.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.chunks)
}

// loggedKeys returns how many keys the Tailer's error log holds.
func (b *bubble) loggedKeys() int {
	b.tl.log.mu.Lock()
	defer b.tl.log.mu.Unlock()
	return len(b.tl.log.logged)
}

func (b *bubble) stop() []stream.Chunk {
	b.cancel()
	if err := <-b.ran; err != nil {
		b.t.Errorf("Run returned %v", err)
	}
	return b.after(0)
}

// TestRenameRotationGraceExact: a rotated file is read while it grows and
// finished exactly RotateGrace after its last growth, to the poll; the new
// file is found by the rescan the rotation triggers, with no wait for the
// RescanInterval. Deterministic: no real time passes.
func TestRenameRotationGraceExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "access.log")
		appendLines(t, p, "a", 0, 100)
		oldID := idOf(t, p)
		b := startBubble(t, Config{Source: "web", Paths: []string{p}})
		if n := len(allLines(b.after(0))); n != 100 {
			t.Fatalf("%d lines read at start, want 100", n)
		}

		if err := os.Rename(p, p+".1"); err != nil {
			t.Fatal(err)
		}
		appendLines(t, p+".1", "a", 100, 150) // the writer has not reopened yet
		appendLines(t, p, "b", 0, 10)
		newID := idOf(t, p)
		cs := b.after(DefaultPollInterval)
		sameLines(t, "old file after the rotation", linesOf(cs, oldID), want("a", 0, 150))
		sameLines(t, "new file", linesOf(cs, newID), want("b", 0, 10))
		if got := b.tl.Files(); !slices.Equal(got, []string{p, p + ".1"}) {
			t.Fatalf("Files() = %q", got)
		}

		// The last growth of the rotated file, one poll later.
		appendLines(t, p+".1", "a", 150, 160)
		b.after(DefaultPollInterval)
		cs = b.after(DefaultRotateGrace - DefaultPollInterval)
		if doneIndex(cs, oldID) >= 0 {
			t.Fatal("rotated file finished before RotateGrace")
		}
		cs = b.after(DefaultPollInterval)
		if doneIndex(cs, oldID) < 0 {
			t.Fatalf("rotated file not finished RotateGrace after its last growth:\n%s", dump(cs))
		}
		cs = b.stop()
		checkChunks(t, cs)
		sameLines(t, "old file", linesOf(cs, oldID), want("a", 0, 160))
		sameLines(t, "new file", linesOf(cs, newID), want("b", 0, 10))
	})
}
