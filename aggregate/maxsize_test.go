package aggregate_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/stream"
)

// Issue 29: buffer.max_size was overshot twice over (1 MiB, MongoDB down,
// 40,000 lines appended: 2.1 MB before reading paused): what a commit
// interval read was committed whole. Reading pauses once the buffer's
// size and what the aggregator holds reach max_size: the buffer's size
// (its live data, Buffer.Size, which max_size bounds) passes it by one
// chunk's counts at most. Nothing is lost: once space is freed the rest
// is read, and every count is there.
func TestMaxSizeOvershootIsOneChunk(t *testing.T) {
	const maxSize = 1 << 20
	const perChunk = 1000 // lines, each its own key
	mk := func(i int, start int64) stream.Chunk {
		lines := make([]string, perChunk)
		for j := range lines {
			lines[j] = line(fmt.Sprintf("/p%d", i*perChunk+j), 0)
		}
		return chunk("src", 1, start, lines...)
	}
	// One chunk's counts, as the buffer holds them: the bound. (The
	// commit interval never passes here: only max_size commits.)
	one := start(t, buffer.Options{}, 0)
	one.send(mk(0, 0))
	one.tick()
	bound := one.buf.Size()

	h := start(t, buffer.Options{MaxSize: maxSize}, 0)
	var off int64
	sent, total := 0, 4*maxSize/int(bound)*perChunk // the lines of four times max_size
	var c stream.Chunk
	// Send until a chunk is refused while Run says reading is paused
	// (BufferFull): a slow Run (a loaded machine) is not a pause.
	for sent < total {
		c = mk(sent/perChunk, off)
		select {
		case h.in <- c:
			sent += perChunk
			off = c.Checkpoint.Offset
			continue
		case <-time.After(100 * time.Millisecond):
		}
		if !h.agg.BufferFull().IsZero() {
			break // reading paused
		}
	}
	if sent >= total {
		t.Fatalf("read all %d lines without pausing at max_size %d", total, maxSize)
	}
	h.eventually("the held counts committed", func(aggregate.Stats) bool { return h.buf.Full() })
	size := h.buf.Size()
	t.Logf("paused after %d lines: buffer size %d, max_size %d, one chunk's counts %d", sent, size, maxSize, bound)
	if !h.buf.Full() || size > maxSize+bound {
		t.Fatalf("buffer size %d (full %v): want at most max_size %d + one chunk's %d", size, h.buf.Full(), maxSize, bound)
	}

	// Space freed (the flusher's seal and acknowledgement): the rest is
	// read, and every line is counted once.
	got := drain(t, h.buf)
	for ; sent < total; sent += perChunk {
		if c.Checkpoint.Offset == off { // the last chunk was taken: the next one (else the one refused above)
			c = mk(sent/perChunk, off)
		}
		deadline := time.Now().Add(10 * time.Second)
		for taken := false; !taken; {
			select {
			case h.in <- c:
				taken = true
			case <-time.After(5 * time.Millisecond):
				if time.Now().After(deadline) {
					t.Fatalf("Run reads nothing with the buffer at %d of %d", h.buf.Size(), maxSize)
				}
				if h.buf.Full() {
					for k, v := range drain(t, h.buf) {
						got[k] += v
					}
				}
				h.clk.Advance(interval) // Run looks for space again
			}
		}
		off = c.Checkpoint.Offset
	}
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	for k, v := range drain(t, h.buf) {
		got[k] += v
	}
	if len(got) != total {
		t.Fatalf("%d keys counted, want %d", len(got), total)
	}
	for k, v := range got {
		if v != 1 {
			t.Fatalf("%v counted %d times", k, v)
		}
	}
}
