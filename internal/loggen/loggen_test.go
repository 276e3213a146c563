package loggen

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/logtally/logtally/botclass"
)

var combined = regexp.MustCompile(`^[0-9a-f:.]+ - - \[\d\d/May/2024:\d\d:\d\d:\d\d \+0200\] "(GET|POST|HEAD) /[^ ]+ HTTP/1\.1" (\d{3}) \d+ "[^"]*" "([^"]+)"$`)

func TestLinesAreCombinedAndRepeatable(t *testing.T) {
	a, b := New(7), New(7)
	var total int
	statuses := map[string]int{}
	classes := map[botclass.Class]int{}
	for i := 0; i < 1000; i++ {
		la, lb := a.Append(nil, false), b.Append(nil, false)
		if !bytes.Equal(la, lb) {
			t.Fatalf("line %d differs for the same seed:\n%s\n%s", i, la, lb)
		}
		m := combined.FindSubmatch(la)
		if m == nil {
			t.Fatalf("line %d is not combined format: %s", i, la)
		}
		statuses[string(m[2][:1])]++
		c, ok := Class(string(m[3]))
		if !ok {
			t.Fatalf("line %d: user agent %q not in Agents", i, m[3])
		}
		classes[c]++
		total += len(la)
	}
	if avg := total / 1000; avg < 150 || avg > 250 {
		t.Fatalf("average line %d bytes, want about 200", avg)
	}
	if statuses["2"] < 500 || statuses["1"] == 0 || statuses["3"] == 0 || statuses["4"] == 0 || statuses["5"] == 0 {
		t.Errorf("status mix by class %v: want mostly 2xx and some of every other", statuses)
	}
	if classes[botclass.Person] < 500 {
		t.Errorf("%d of 1000 lines from people, want most", classes[botclass.Person])
	}
	for c := range botclass.NumClasses {
		if classes[c] == 0 {
			t.Errorf("no line of class %v", c)
		}
	}
	if c := New(7).Append(nil, true); bytes.Contains(c, []byte(`"-"`)) || bytes.Count(c, []byte(`"`)) != 2 {
		t.Fatalf("common line has more than the request quoted: %s", c)
	}
}

var measured = regexp.MustCompile(`^[0-9a-f:.]+ - - \[[^\]]+\] "[A-Z]+ /[^ ]+ HTTP/1\.1" (\d{3}) (\d+|-) "[^"]*" "[^"]+" rt=(\d+\.\d{3}|-) urt="(-|\d+\.\d{3}(?:(?:, | : )\d+\.\d{3})*)"$`)

// TestMeasuresLines checks the lines of Gen.Measures: sizes "-" for
// responses without a body only, and every form of the timing fields.
func TestMeasuresLines(t *testing.T) {
	g := New(3)
	g.Measures = true
	seen := map[string]bool{}
	for i := 0; i < 2000; i++ {
		l := g.Append(nil, false)
		m := measured.FindSubmatch(l)
		if m == nil {
			t.Fatalf("line %d: %s", i, l)
		}
		status, size, rt, urt := string(m[1]), string(m[2]), string(m[3]), string(m[4])
		if size == "-" {
			if status[0] != '1' && status != "204" && status != "304" {
				t.Errorf("line %d: size - with status %s", i, status)
			}
			seen["size -"] = true
		}
		if rt == "-" {
			seen["rt -"] = true
		}
		switch {
		case urt == "-":
			seen["urt -"] = true
		case bytes.Contains(m[4], []byte(",")):
			seen["urt list"] = true
		default:
			seen["urt one"] = true
		}
	}
	for _, k := range []string{"size -", "rt -", "urt -", "urt list", "urt one"} {
		if !seen[k] {
			t.Errorf("no line with %s", k)
		}
	}
	if b := New(3).AppendRest(nil); !regexp.MustCompile(`^ \d{3} \d+ "[^"]*" "[^"]+"$`).Match(b) {
		t.Errorf("AppendRest: %q", b)
	}
}

func TestAgentsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range Agents {
		if seen[a.UA] || a.Weight <= 0 || a.Class >= botclass.NumClasses {
			t.Errorf("agent %q: duplicate, or weight %d, or class %v", a.UA, a.Weight, a.Class)
		}
		seen[a.UA] = true
	}
	if c, ok := Class("GPTBot/1.0"); ok || c != botclass.Person {
		t.Errorf("Class of an agent not in the table: %v, %v", c, ok)
	}
}
