package recovery

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	logarchive "github.com/logtally/logtally/archive"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/dryrun"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
)

// pathLine is one line as a reader handed it on: [Start, End) of the
// stream, skipped (a skip chunk) or a line of a data chunk.
type pathLine struct {
	Start, End int64
	Skipped    bool
}

func (l pathLine) String() string {
	if l.Skipped {
		return fmt.Sprintf("skip[%d,%d)", l.Start, l.End)
	}
	return fmt.Sprintf("[%d,%d)", l.Start, l.End)
}

// chunkLines appends the lines of c (the stream's bytes are logBytes) to
// out.
func chunkLines(out []pathLine, c stream.Chunk, logBytes []byte) []pathLine {
	if c.Skipped > 0 {
		return append(out, pathLine{c.Start, c.Checkpoint.Offset, true})
	}
	c.Lines(func(line []byte, end int64) {
		start := end - int64(len(line))
		if logBytes[end-1] == '\n' {
			start--
		}
		out = append(out, pathLine{start, end, false})
	})
	return out
}

// cutPathsStream is the bytes every reader must cut alike (max line 8):
// an empty line, CRLF, a '\r' alone, NULs, lines of exactly the maximum,
// one byte over and far over it, repeated so that a gzip of it cut in the
// middle is damaged within a line, and an unterminated last line.
func cutPathsStream() []byte {
	var b bytes.Buffer
	for i := range 300 {
		fmt.Fprintf(&b, "a%d\n\nb\r\nx\ry\n\x00c\x00\n12345678\n123456789\n%030d\n12345678\r\n", i%10, i)
	}
	b.WriteString("tail")
	return b.Bytes()
}

// TestOneCutterForEveryReader feeds the same bytes through the four
// readers of log lines (the follower, logarchive.Stream, the dry run through
// it, and the state-dir rebuild's re-read, feedRange) and requires the same
// lines, skip chunks and offsets: the rebuild is exact only if its re-read
// cuts as the follower did.
func TestOneCutterForEveryReader(t *testing.T) {
	const maxLine = 8
	logBytes := cutPathsStream()
	lastEnd := int64(bytes.LastIndexByte(logBytes, '\n') + 1) // before the unterminated tail
	dir := t.TempDir()
	plain := filepath.Join(dir, "access.log")
	if err := os.WriteFile(plain, logBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(logBytes)
	zw.Close()
	archive := filepath.Join(dir, "access.log.1.gz")
	if err := os.WriteFile(archive, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "access.log.2.gz")
	if err := os.WriteFile(damaged, gz.Bytes()[:gz.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}

	// The follower, reading blocks of 1 byte up to a whole file.
	var followed []pathLine
	for _, rs := range []int{1, 7, 9, 64, 4096} {
		got := followLines(t, plain, logBytes, maxLine, rs, lastEnd)
		if followed == nil {
			followed = got
		} else if !slices.Equal(got, followed) {
			t.Fatalf("follower, read size %d:\n got %v\nwant %v", rs, got, followed)
		}
	}
	if len(followed) == 0 || followed[len(followed)-1].End != lastEnd {
		t.Fatalf("follower: %v, want lines to %d", followed, lastEnd)
	}
	skips := 0
	for _, l := range followed {
		if l.Skipped {
			skips++
		}
	}
	if skips != 3*300 {
		t.Fatalf("follower: %d skip chunks, want %d", skips, 3*300)
	}
	final := append(slices.Clone(followed), pathLine{lastEnd, int64(len(logBytes)), false})

	// The rebuild's re-read of what the follower handed on, whole and from
	// every checkpoint the follower could have left.
	rebuilt := func(from, to int64) []pathLine {
		var got []pathLine
		cp := stream.Checkpoint{Source: "web", Path: plain}
		read, err := feedRange(func(c *stream.Chunk) error {
			if c.Checkpoint.Source != "web" {
				t.Fatalf("feedRange: chunk checkpoint %+v", c.Checkpoint)
			}
			got = chunkLines(got, *c, logBytes)
			return nil
		}, cp, plain, from, to, maxLine)
		if err != nil || read != to-from {
			t.Fatalf("feedRange [%d, %d): read %d, %v", from, to, read, err)
		}
		return got
	}
	if got := rebuilt(0, lastEnd); !slices.Equal(got, followed) {
		t.Fatalf("feedRange:\n got %v\nwant %v", got, followed)
	}
	for i := 0; i < len(followed); i += 7 {
		from := followed[i].Start
		if got := rebuilt(from, lastEnd); !slices.Equal(got, followed[i:]) {
			t.Fatalf("feedRange from %d:\n got %v\nwant %v", from, got, followed[i:])
		}
	}

	// logarchive.Stream: a live stream as the follower, a finished one with its
	// last line; the gzip archive as the plain file.
	streamed := func(name string, live bool) ([]pathLine, int64, error) {
		head, _, _ := logarchive.Head(name)
		out := make(chan stream.Chunk, 4)
		var got []pathLine
		var end int64
		var err error
		go func() {
			defer close(out)
			end, err = logarchive.Stream(context.Background(), name, "web", head, 0, live, maxLine, out, &logarchive.Counters{})
		}()
		for c := range out {
			got = chunkLines(got, c, logBytes)
			c.Release()
		}
		return got, end, err
	}
	for _, name := range []string{plain, archive} {
		got, end, err := streamed(name, true)
		if err != nil || end != lastEnd || !slices.Equal(got, followed) {
			t.Fatalf("Stream %s, live: to %d, %v:\n got %v\nwant %v", name, end, err, got, followed)
		}
		got, end, err = streamed(name, false)
		if err != nil || end != int64(len(logBytes)) || !slices.Equal(got, final) {
			t.Fatalf("Stream %s, finished: to %d, %v:\n got %v\nwant %v", name, end, err, got, final)
		}
	}
	// A damaged archive: the whole lines before the damage, as the
	// follower cut them, never the tail the damage cut.
	got, end, err := streamed(damaged, false)
	var de *logarchive.DamagedError
	if !errors.As(err, &de) {
		t.Fatalf("Stream of a damaged archive: %v", err)
	}
	var want []pathLine
	for _, l := range followed {
		if l.End <= de.Offset {
			want = append(want, l)
		}
	}
	if len(want) == 0 || len(want) == len(followed) || !slices.Equal(got, want) || end != want[len(want)-1].End {
		t.Fatalf("Stream of an archive damaged at %d: to %d:\n got %v\nwant %v", de.Offset, end, got, want)
	}

	// The dry run: the finished stream's lines and skips.
	p, err := parser.New(parser.Config{Site: "s", Format: "combined"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{plain, archive} {
		dr := dryrun.New(p, maxLine, &bytes.Buffer{})
		if err := dr.ReadFile(name); err != nil {
			t.Fatal(err)
		}
		var sum bytes.Buffer
		dr.Summary(&sum, time.Second)
		for _, row := range []string{
			fmt.Sprintf("lines %d", len(final)),
			fmt.Sprintf("too long %d", skips),
		} {
			if !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(sum.String(), ",", "")), " "), row) {
				t.Fatalf("dry run of %s: no %q in\n%s", name, row, sum.String())
			}
		}
	}
}

// followLines runs a Tailer over path with a fake clock and read size rs
// until it has handed on the lines to end, and returns them.
func followLines(t *testing.T, path string, logBytes []byte, maxLine, rs int, end int64) []pathLine {
	t.Helper()
	clk := clock.NewFake(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	out := make(chan stream.Chunk, 4)
	tl, err := tailer.New(tailer.Config{Source: "web", Paths: []string{path}, MaxLineBytes: maxLine, ReadSize: rs, Clock: clk}, out)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- tl.Run(ctx) }()
	defer func() {
		cancel()
		for {
			select {
			case <-out:
			case err := <-ran:
				if err != nil {
					t.Errorf("tailer: %v", err)
				}
				return
			}
		}
	}()
	var got []pathLine
	deadline := time.After(30 * time.Second)
	for {
		select {
		case c := <-out:
			got = chunkLines(got, c, logBytes)
			c.Release()
			if c.Checkpoint.Offset == end {
				return got
			}
		case <-time.After(2 * time.Millisecond):
			clk.Advance(time.Second)
		case <-deadline:
			t.Fatalf("follower, read size %d: lines to %d not handed on; got %v", rs, end, got)
		}
	}
}
