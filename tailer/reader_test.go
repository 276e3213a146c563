package tailer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
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
	out := make(chan Chunk, 2)
	tl, err := New(Config{Source: "s", Paths: []string{p}, ReadSize: readSize, MaxLineBytes: 500}, out)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- tl.Run(ctx) }()
	var got []string
	var kept []Chunk // every chunk, Data dropped, for checkChunks
	bufs := map[*byte]bool{}
	pooled, skipped := 0, 0
	for off := int64(0); off < size; {
		c := <-out
		c.Lines(func(line []byte, _ int64) { got = append(got, string(line)) })
		if c.buf != nil {
			pooled++
			bufs[unsafe.SliceData(c.buf)] = true
		}
		skipped += c.Skipped
		off = c.Checkpoint.Offset
		n := len(c.Data)
		c.Release()
		if c.Data != nil || c.buf != nil {
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
	c := Chunk{Start: 0, Data: []byte("a\n"), Checkpoint: Checkpoint{Offset: 2}}
	c.Release()
	if c.Data != nil {
		t.Errorf("Data = %q after Release", c.Data)
	}
	var d Chunk
	d.Release()
}
