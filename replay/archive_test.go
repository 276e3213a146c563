package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/tailer"
)

// Stream sends every line after from once, in order, long lines as skip
// chunks, the last unterminated line too, with checkpoints whose
// fingerprints are those of the decompressed stream: the same for a file
// and its archives.
func TestStreamChunksAndCheckpoints(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		if i == 2000 { // longer than the read buffer too
			b.WriteString(strings.Repeat("z", 600<<10) + "\n")
			continue
		}
		if i%700 == 350 {
			b.WriteString(strings.Repeat("x", 300+i) + "\n") // longer than maxLine
			continue
		}
		fmt.Fprintf(&b, "line %05d %s\n", i, strings.Repeat("y", i%40))
	}
	b.WriteString("last line, unterminated")
	plain := []byte(b.String())
	var gz, zs bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(plain)
	gw.Close()
	zw, _ := zstd.NewWriter(&zs)
	zw.Write(plain)
	zw.Close()
	dir := t.TempDir()
	files := map[string][]byte{"a.log": plain, "a.log.gz": gz.Bytes(), "a.log.zst": zs.Bytes()}
	from := int64(bytes.Index(plain, []byte("line 01000")))
	for name, data := range files {
		path := filepath.Join(dir, name)
		os.WriteFile(path, data, 0o644)
		head, _, err := Head(path)
		if err != nil || !bytes.Equal(head, plain[:tailer.FingerprintSize]) {
			t.Fatalf("%s: head %d bytes, %v", name, len(head), err)
		}
		for _, tc := range []struct {
			start   int64
			maxLine int
		}{
			{0, 200}, {from, 200}, {int64(len(plain)) + 10, 200}, {0, 1 << 20}, {from, 1 << 20},
		} {
			start, maxLine := tc.start, tc.maxLine
			// Chunks are taken one at a time and released, as the
			// aggregator does: the buffers are read into again.
			out := make(chan tailer.Chunk)
			var c Counters
			var end int64
			var err error
			done := make(chan struct{})
			go func() {
				defer close(done)
				end, err = Stream(context.Background(), path, "src", head, start, false, maxLine, out, &c)
				close(out)
			}()
			var chunks []tailer.Chunk
			for ch := range out {
				kept := ch
				kept.Data = bytes.Clone(ch.Data)
				ch.Release()
				chunks = append(chunks, kept)
			}
			<-done
			if err != nil {
				t.Fatalf("%s from %d: %v", name, start, err)
			}
			if start > int64(len(plain)) {
				if end != start || len(chunks) != 0 {
					t.Errorf("%s from past its end: end %d, %d chunks", name, end, len(chunks))
				}
				continue
			}
			var got bytes.Buffer
			pos, skipped := start, 0
			for _, ch := range chunks {
				if !ch.Archive || ch.Start != pos || ch.Checkpoint.Offset != ch.Start+int64(len(ch.Data)) && ch.Skipped == 0 {
					t.Fatalf("%s: chunk at %d (want %d), %d bytes, checkpoint %d", name, ch.Start, pos, len(ch.Data), ch.Checkpoint.Offset)
				}
				cp := ch.Checkpoint
				n := min(int(cp.Offset), tailer.FingerprintSize)
				if cp.FPLen != n || cp.FPSum != fnv1a.Extend(fnv1a.Offset, plain[:n]) || cp.Source != "src" {
					t.Fatalf("%s: checkpoint %+v", name, cp)
				}
				skipped += ch.Skipped
				got.Write(ch.Data)
				pos = cp.Offset
			}
			var want bytes.Buffer
			wantSkipped := 0
			for _, l := range bytes.SplitAfter(plain[start:], []byte("\n")) {
				if len(bytes.TrimSuffix(l, []byte("\n"))) > maxLine {
					wantSkipped++
					continue
				}
				want.Write(l)
			}
			if n := int64(bytes.Count(want.Bytes(), []byte("\n"))) + 1; c.Lines.Load() != n {
				t.Errorf("%s from %d: %d lines counted, want %d", name, start, c.Lines.Load(), n)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) || skipped != wantSkipped {
				t.Errorf("%s from %d: %d bytes, %d skipped; want %d bytes, %d skipped", name, start, got.Len(), skipped, want.Len(), wantSkipped)
			}
			if c.Read.Load() != int64(len(data)) {
				t.Errorf("%s: %d bytes read counted, want %d", name, c.Read.Load(), len(data))
			}
		}
	}
}

// A stream shorter than the fingerprint is its own head.
func TestHeadShortStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "short.log")
	os.WriteFile(path, []byte("one\ntwo\n"), 0o644)
	head, kind, err := Head(path)
	if err != nil || string(head) != "one\ntwo\n" || kind != Plain {
		t.Fatalf("%q %s %v", head, kind, err)
	}
}
