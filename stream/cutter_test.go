package stream

import (
	"bytes"
	"slices"
	"testing"
)

// cutLine is one line as a reader handed it on: [Start, End) of the
// stream, skipped (a skip chunk) or a line of a data chunk.
type cutLine struct {
	Start, End int64
	Skipped    bool
}

// wantLines cuts stream by the rules written out plainly, line by line:
// the model every reader must match. final: the unterminated last line is
// a line.
func wantLines(stream []byte, maxLine int, final bool) []cutLine {
	var out []cutLine
	var pos int64
	for len(stream) > 0 {
		i := bytes.IndexByte(stream, '\n')
		n, size := i, i+1
		if i < 0 {
			if !final {
				break
			}
			n, size = len(stream), len(stream)
		}
		out = append(out, cutLine{pos, pos + int64(size), n > maxLine})
		pos += int64(size)
		stream = stream[size:]
	}
	return out
}

// nastyStream holds the cases every reader must cut alike, for maxLine 8.
func nastyStream(tail string) []byte {
	return []byte("abc\n" + // a line
		"\n" + // an empty line
		"a\r\n" + // CRLF: the '\r' stays in the line
		"x\ry\n" + // a '\r' alone
		"\x00b\x00\n" + // NULs
		"12345678\n" + // exactly maxLine
		"123456789\n" + // one byte too long
		"123456789012345678901234567890\n" + // far too long
		"\n" +
		"12345678\r\n" + // too long with its '\r'
		"ok\n" +
		tail) // the unterminated last line
}

// cutAll feeds stream to a Cutter in blocks of block bytes, carrying the
// partial line as a reader does, and returns the lines handed on and the
// Cutter's end offset. final: the last block is cut as the stream's end.
func cutAll(t *testing.T, stream []byte, maxLine, block int, final bool) ([]cutLine, int64) {
	t.Helper()
	cut := Cutter{MaxLine: maxLine}
	var got []cutLine
	var carry []byte
	pos := int64(0) // offset of the next byte to read
	for {
		n := min(block, len(stream)-int(pos))
		end := pos+int64(n) == int64(len(stream))
		at := pos
		data := stream[pos : pos+int64(n)]
		if !cut.Skipping {
			at = cut.Off
			data = append(slices.Clip(carry), data...)
			if at+int64(len(carry)) != pos {
				t.Fatalf("block %d: carried %d bytes from %d, next read at %d", block, len(carry), at, pos)
			}
		}
		pos += int64(n)
		kept, sentLast := false, false
		err := cut.Cut(data, at, final && end, func(p []byte) {
			if kept {
				t.Fatalf("block %d: keep called twice", block)
			}
			kept, carry = true, bytes.Clone(p)
		}, func(c Chunk, last bool) error {
			if !kept {
				t.Fatalf("block %d: chunk sent before keep", block)
			}
			if sentLast {
				t.Fatalf("block %d: chunk sent after the last", block)
			}
			sentLast = last
			if c.Skipped > 0 {
				if c.Skipped != 1 || len(c.Data) != 0 {
					t.Fatalf("block %d: skip chunk %+v", block, c)
				}
				got = append(got, cutLine{c.Start, c.Checkpoint.Offset, true})
				return nil
			}
			if c.Start+int64(len(c.Data)) != c.Checkpoint.Offset || !bytes.Equal(c.Data, stream[c.Start:c.Checkpoint.Offset]) {
				t.Fatalf("block %d: data chunk [%d, %d) holds %q", block, c.Start, c.Checkpoint.Offset, c.Data)
			}
			c.Lines(func(line []byte, end int64) {
				got = append(got, cutLine{end - int64(len(line)) - 1, end, false})
			})
			if l := &got[len(got)-1]; c.Data[len(c.Data)-1] != '\n' {
				l.Start++ // the unterminated last line has no '\n'
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !kept {
			t.Fatalf("block %d: keep not called", block)
		}
		if end {
			return got, cut.Off
		}
	}
}

func TestCutterRules(t *testing.T) {
	const maxLine = 8
	for _, tail := range []string{"", "tail", "\r", "0123456789abc"} {
		stream := nastyStream(tail)
		for _, final := range []bool{false, true} {
			want := wantLines(stream, maxLine, final)
			wantOff := int64(0)
			if len(want) > 0 {
				wantOff = want[len(want)-1].End
			}
			for block := 1; block <= len(stream)+1; block++ {
				got, off := cutAll(t, stream, maxLine, block, final)
				if !slices.Equal(got, want) {
					t.Fatalf("tail %q final %v block %d:\n got %v\nwant %v", tail, final, block, got, want)
				}
				if off != wantOff {
					t.Fatalf("tail %q final %v block %d: ends at %d, want %d", tail, final, block, off, wantOff)
				}
			}
		}
	}
}

// TestCutterDamaged cuts a stream whose reading stopped mid-line (a
// damaged archive): only the whole lines before the damage, not the tail
// cut by it, and the end offset is the last whole line's.
func TestCutterDamaged(t *testing.T) {
	stream := nastyStream("ok\n")
	for damage := 0; damage <= len(stream); damage++ {
		want := wantLines(stream[:damage], 8, false)
		for _, block := range []int{1, 3, 16, 1 << 10} {
			got, off := cutAll(t, stream[:damage], 8, block, false)
			if !slices.Equal(got, want) {
				t.Fatalf("damage at %d, block %d:\n got %v\nwant %v", damage, block, got, want)
			}
			if len(want) > 0 && off != want[len(want)-1].End {
				t.Fatalf("damage at %d, block %d: ends at %d", damage, block, off)
			}
		}
	}
}

// TestCutterNoScan: lines that cannot be too long come out as one chunk
// holding data itself, the last one sent.
func TestCutterNoScan(t *testing.T) {
	data := []byte("a\nbb\nccc\npartial")
	cut := Cutter{MaxLine: 9}
	var sent []Chunk
	err := cut.Cut(data, 0, false, func(p []byte) {
		if string(p) != "partial" {
			t.Fatalf("kept %q", p)
		}
	}, func(c Chunk, last bool) error {
		if !last {
			t.Fatal("the only chunk is not last")
		}
		sent = append(sent, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 || &sent[0].Data[0] != &data[0] || len(sent[0].Data) != 9 || cut.Off != 9 || cut.Skipping {
		t.Fatalf("sent %v, cutter %+v", sent, cut)
	}
	if cap(sent[0].Data) != 9 {
		t.Fatalf("chunk data may grow into the partial line: cap %d", cap(sent[0].Data))
	}
}
