package tailer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/stream"
)

// TestReleaseRecyclesBuffers: a consumer that releases every chunk gets
// each line once, in order, while the tailer reads into the same few
// buffers again; lines before an overlong line are copied, so no buffer
// goes back while another chunk still uses it.
func TestReleaseRecyclesBuffers(t *testing.T) {
	p := filepath.Join(t.TempDir(), "access.log")
	var b bytes.Buffer
	var wantLines []string
	for i := range 3000 {
		l := lineAt("r", i)
		if i%700 == 350 {
			l = strings.Repeat("x", 600) // overlong: skipped
		} else {
			wantLines = append(wantLines, l)
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	size := int64(b.Len())
	const readSize = 4096
	out := make(chan stream.Chunk, 2)
	tl, err := New(Config{Source: "s", Paths: []string{p}, ReadSize: readSize, MaxLineBytes: 500}, out)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- tl.Run(ctx) }()
	var got []string
	var kept []stream.Chunk // every chunk, Data dropped, for checkChunks
	bufs := map[*byte]bool{}
	pooled, skipped := 0, 0
	for off := int64(0); off < size; {
		c := <-out
		c.Lines(func(line []byte, _ int64) { got = append(got, string(line)) })
		if c.Buffer() != nil {
			pooled++
			bufs[unsafe.SliceData(c.Buffer())] = true
		}
		skipped += c.Skipped
		off = c.Checkpoint.Offset
		n := len(c.Data)
		c.Release()
		if c.Data != nil || c.Buffer() != nil {
			t.Fatal("Release left Data or the buffer in the chunk")
		}
		c.Release()              // a second call through the same variable is a no-op
		c.Data = make([]byte, n) // checkChunks looks at lengths only
		for i := range c.Data {
			c.Data[i] = '\n'
		}
		kept = append(kept, c)
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	sameLines(t, "lines", got, wantLines)
	if skipped != 4 {
		t.Errorf("%d lines skipped, want 4", skipped)
	}
	checkChunks(t, kept)
	if pooled < 20 {
		t.Fatalf("only %d chunks took a pooled buffer", pooled)
	}
	if len(bufs) > freeBuffers+4 {
		t.Errorf("%d chunks used %d distinct buffers, want them reused", pooled, len(bufs))
	}
}

// TestChunkReleaseNoPool: Release is a no-op on chunks not made by a Tailer.
func TestChunkReleaseNoPool(t *testing.T) {
	c := stream.Chunk{Start: 0, Data: []byte("a\n"), Checkpoint: stream.Checkpoint{Offset: 2}}
	c.Release()
	if c.Data != nil {
		t.Errorf("Data = %q after Release", c.Data)
	}
	var d stream.Chunk
	d.Release()
}

// TestFullQueueBuffersAreKept: a consumer that lets the output channel
// fill (a commit) and then releases every chunk in a row gets the same
// buffers back: the Tailer keeps as many as the channel holds, plus two,
// rather than dropping them and allocating new ones.
func TestFullQueueBuffersAreKept(t *testing.T) {
	p := filepath.Join(t.TempDir(), "access.log")
	var b bytes.Buffer
	const lines = 4000
	for i := range lines {
		b.WriteString(lineAt("q", i))
		b.WriteByte('\n')
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	const queue = 8
	out := make(chan stream.Chunk, queue)
	tl, err := New(Config{Source: "s", Paths: []string{p}, ReadSize: 4096}, out)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- tl.Run(ctx) }()
	bufs := map[*byte]bool{}
	var got []string
	for rounds := 0; len(got) < lines; rounds++ {
		// Let the channel fill, as while the consumer commits.
		began := time.Now()
		if !testenv.Until(waitLimit, func() bool {
			n := len(out)
			return n == queue || n > 0 && time.Since(began) > 200*time.Millisecond // the file's end: fewer chunks than the channel holds
		}) {
			t.Fatalf("round %d: the channel holds %d chunks, %d lines read", rounds, len(out), len(got))
		}
		for len(out) > 0 {
			c := <-out
			c.Lines(func(line []byte, _ int64) { got = append(got, string(line)) })
			if c.Buffer() != nil {
				bufs[unsafe.SliceData(c.Buffer())] = true
			}
			c.Release()
		}
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	sameLines(t, "lines", got, want("q", 0, lines))
	if len(bufs) > queue+2+1 {
		t.Errorf("%d distinct buffers for %d lines in rounds of a full channel of %d, want at most %d", len(bufs), lines, queue, queue+3)
	}
}
