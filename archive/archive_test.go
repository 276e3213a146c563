package archive

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
)

// Stream sends every line after from once, in order, long lines as skip
// chunks, the last unterminated line too, with checkpoints whose
// fingerprints are those of the decompressed stream: the same for a file
// and its archives.
func TestStreamChunksAndCheckpoints(t *testing.T) {
	withReadSize(t, 700) // chunks shorter than the tail check, skipped lines over many reads
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
		if err != nil || !bytes.Equal(head, plain[:stream.FingerprintSize]) {
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
			out := make(chan stream.Chunk)
			var c Counters
			var end int64
			var err error
			done := make(chan struct{})
			go func() {
				defer close(done)
				end, err = Stream(context.Background(), path, "src", head, start, false, maxLine, out, &c)
				close(out)
			}()
			var chunks []stream.Chunk
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
				n := min(int(cp.Offset), stream.FingerprintSize)
				if cp.FPLen != n || cp.FPSum != fnv1a.Extend(fnv1a.Offset, plain[:n]) || cp.Source != "src" {
					t.Fatalf("%s: checkpoint %+v", name, cp)
				}
				if tl, ts := stream.TailOf(plain[:cp.Offset]); cp.TailLen != tl || cp.TailSum != ts || cp.Stream == 0 {
					t.Fatalf("%s: checkpoint %+v: tail check, want %d %x, and a stream", name, cp, tl, ts)
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

// A replay starts at the furthest ledger position its own bytes pass: a
// position whose tail check fails (another stream with the same first
// bytes, counted further) is not taken, a nearer one that passes is (the
// file read again to it); an older logtally's position only at a line
// end; one beyond the stream's end only for the replay's own source.
func TestStreamStartsAtItsOwnPosition(t *testing.T) {
	withReadSize(t, 300) // chunks shorter than the tail check: it spans reads
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "line %05d %s\n", i, strings.Repeat("y", i%40))
	}
	plain := []byte(b.String())
	var gz bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(plain)
	gw.Close()
	path := filepath.Join(t.TempDir(), "a.log.gz")
	os.WriteFile(path, gz.Bytes(), 0o644)
	head := plain[:stream.FingerprintSize]
	lineEnd := func(i int) int64 { return int64(bytes.Index(plain, fmt.Appendf(nil, "line %05d", i))) }
	at := func(off int64, tailSum uint64) Candidate { // a position with a tail check
		c := Candidate{Position: tailer.Position{Offset: off}}
		c.TailLen, c.TailSum = stream.TailOf(plain[:off])
		if tailSum != 0 {
			c.TailSum = tailSum
		}
		return c
	}
	mid := lineEnd(800) + 3
	// Files counted further than the stream is long: a longer version of
	// it (the stream is its shorter copy), a look-alike (its first lines,
	// then others), and a look-alike whose check at its entry's offset
	// fails (not the entry's stream any more: it cannot tell).
	dir := filepath.Dir(path)
	longer := append(slices.Clone(plain), "more\nlines\n"...)
	lookAlike := append(slices.Clone(plain[:lineEnd(100)]), strings.Repeat("other line\n", 9000)...)
	for name, data := range map[string][]byte{"longer": longer, "lookalike": lookAlike, "changed": lookAlike} {
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	beyond := func(name string, data []byte, covers bool) Candidate {
		c := Candidate{Position: tailer.Position{Offset: int64(len(data))}, Covers: covers, Path: filepath.Join(dir, name)}
		c.TailLen, c.TailSum = stream.TailOf(data)
		if name == "changed" {
			c.TailSum++
		}
		return c
	}
	for _, tc := range []struct {
		name  string
		cands []Candidate
		from  int64
	}{
		{"none", []Candidate{}, 0},
		{"its own", []Candidate{at(lineEnd(500), 0)}, lineEnd(500)},
		{"another stream further, its own nearer", []Candidate{at(lineEnd(1500), 1), at(lineEnd(500), 0)}, lineEnd(500)},
		{"another stream only", []Candidate{at(lineEnd(1500), 1)}, 0},
		{"an older logtally's at a line end", []Candidate{{Position: tailer.Position{Offset: lineEnd(700)}}}, lineEnd(700)},
		{"an older logtally's mid-line", []Candidate{{Position: tailer.Position{Offset: mid}}, at(lineEnd(300), 0)}, lineEnd(300)},
		{"beyond its end, another source", []Candidate{at(lineEnd(300), 0), {Position: tailer.Position{Offset: 1 << 30, TailLen: 1024, TailSum: 5}}}, lineEnd(300)},
		{"beyond its end, its own source", []Candidate{at(lineEnd(300), 0), {Position: tailer.Position{Offset: 1 << 30, TailLen: 1024, TailSum: 5}, Covers: true}}, int64(len(plain))},
		{"beyond its end, its file has its bytes", []Candidate{beyond("longer", longer, false)}, int64(len(plain))},
		{"beyond its end, its file has others", []Candidate{beyond("lookalike", lookAlike, true)}, 0},
		{"beyond its end, its file changed, another source", []Candidate{beyond("changed", lookAlike, false)}, 0},
		{"beyond its end, its file changed, its own source", []Candidate{beyond("changed", lookAlike, true)}, int64(len(plain))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var chunks []stream.Chunk
			var cnt Counters
			from, end, err := ReadAt(context.Background(), path, "src", head, Start{Cands: tc.cands, Stream: 7}, false, 1<<20, func(ch stream.Chunk) error {
				ch.Data = bytes.Clone(ch.Data)
				chunks = append(chunks, ch)
				return nil
			}, &cnt)
			if err != nil || from != tc.from || end != int64(len(plain)) {
				t.Fatalf("from %d, end %d, %v; want from %d, end %d", from, end, err, tc.from, len(plain))
			}
			if cnt.Read.Load() != int64(gz.Len()) {
				t.Errorf("%d bytes read counted, want the file's %d once", cnt.Read.Load(), gz.Len())
			}
			var got []byte
			for _, ch := range chunks {
				cp := ch.Checkpoint
				if tl, ts := stream.TailOf(plain[:cp.Offset]); cp.TailLen != tl || cp.TailSum != ts || cp.Stream != 7 {
					t.Fatalf("checkpoint %+v", cp)
				}
				got = append(got, ch.Data...)
			}
			if !bytes.Equal(got, plain[tc.from:]) {
				t.Fatalf("read %d bytes, want the %d from %d", len(got), len(plain)-int(tc.from), tc.from)
			}
		})
	}
}

// withReadSize makes Read read n bytes at a time during the test: chunks
// cut in other places than DefaultChunkSize's.
func withReadSize(t *testing.T, n int) {
	old := ReadSize
	ReadSize = n
	t.Cleanup(func() { ReadSize = old })
}
