package stream

import (
	"slices"
	"testing"
)

func TestChunkLines(t *testing.T) {
	c := Chunk{Start: 100, Data: []byte("a\nbc\r\n\nd\n")}
	var lines []string
	var ends []int64
	c.Lines(func(l []byte, end int64) { lines = append(lines, string(l)); ends = append(ends, end) })
	if !slices.Equal(lines, []string{"a", "bc\r", "", "d"}) || !slices.Equal(ends, []int64{102, 106, 107, 109}) {
		t.Fatalf("lines %q ends %v", lines, ends)
	}
}
