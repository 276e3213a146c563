package loggen

import (
	"bytes"
	"regexp"
	"testing"
)

var combined = regexp.MustCompile(`^[0-9a-f:.]+ - - \[\d\d/May/2024:\d\d:\d\d:\d\d \+0200\] "(GET|POST|HEAD) /[^ ]+ HTTP/1\.1" \d{3} \d+ "[^"]*" "[^"]+"$`)

func TestLinesAreCombinedAndRepeatable(t *testing.T) {
	a, b := New(7), New(7)
	var total int
	for i := 0; i < 1000; i++ {
		la, lb := a.Append(nil, false), b.Append(nil, false)
		if !bytes.Equal(la, lb) {
			t.Fatalf("line %d differs for the same seed:\n%s\n%s", i, la, lb)
		}
		if !combined.Match(la) {
			t.Fatalf("line %d is not combined format: %s", i, la)
		}
		total += len(la)
	}
	if avg := total / 1000; avg < 150 || avg > 250 {
		t.Fatalf("average line %d bytes, want about 200", avg)
	}
	if c := New(7).Append(nil, true); bytes.Contains(c, []byte(`"-"`)) || bytes.Count(c, []byte(`"`)) != 2 {
		t.Fatalf("common line has more than the request quoted: %s", c)
	}
}
