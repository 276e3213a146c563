package query

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Shown escapes what would make a name look like another: bidirectional
// controls (/\u202etxt.exe shows as /exe.txt), invisible format
// characters, controls, separators and spaces other than ' '.
func TestShown(t *testing.T) {
	for in, want := range map[string]string{
		"/":                      "/",
		"/about/café-ünïcødé/日本": "/about/café-ünïcødé/日本",
		"/a%20b":                 "/a%20b",
		"/\u202etxt.exe":         `/\u202etxt.exe`,
		"/\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c": `/\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c`,
		"/zero\u200bwidth\u200c\u200d\u2060\ufeff":                                  `/zero\u200bwidth\u200c\u200d\u2060\ufeff`,
		"/soft\u00adhyphen":     `/soft\u00adhyphen`,
		"/nb\u00a0sp\u3000":     `/nb\u00a0sp\u3000`,
		"/c1\u009bcsi\x7f":      `/c1\u009bcsi\u007f`,
		"/line\u2028para\u2029": `/line\u2028para\u2029`,
		"/tag\U000e0041":        `/tag\U000e0041`,
		"/filler\u3164\u115f":   `/filler\u3164\u115f`,
		"/private\ue000":        `/private\ue000`,
		"/bad\xff\xfeutf8":      `/bad\xff\xfeutf8`,
		"/tab\there":            `/tab\u0009here`,
	} {
		if got := Shown(in); got != want {
			t.Errorf("Shown(%q) = %q, want %q", in, got, want)
		}
	}
}

// The table and the chart show page names through Shown; CSV and JSON
// keep them as they are (data for programs).
func TestWriteShowsNamesEscaped(t *testing.T) {
	res := &Result{Request: Request{Site: "s.test", From: utc("2026-11-01T00:00:00Z"), To: utc("2026-11-01T02:00:00Z"), Step: Hour},
		Times:  []time.Time{utc("2026-11-01T00:00:00Z"), utc("2026-11-01T01:00:00Z")},
		Series: []Series{{Page: "/\u202etxt.exe", Total: 3, Counts: []int64{1, 2}}, {Page: "/exe.txt", Total: 1, Counts: []int64{1, 0}}}, Pages: 2}
	for _, format := range []string{"table", "chart"} {
		var b bytes.Buffer
		if err := Write(&b, res, format, Options{}); err != nil {
			t.Fatal(err)
		}
		if s := b.String(); strings.ContainsRune(s, '\u202e') || !strings.Contains(s, `/\u202etxt.exe`) {
			t.Errorf("%s:\n%s", format, s)
		}
	}
	var b bytes.Buffer
	if err := Write(&b, res, "table", Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2026-11-01 00:00  /\\u202etxt.exe      1\n2026-11-01 00:00  /exe.txt            1\n") {
		t.Errorf("table not aligned on the shown names:\n%s", b.String())
	}
	b.Reset()
	if err := Write(&b, res, "json", Options{}); err != nil {
		t.Fatal(err)
	}
	var pts []Point
	if err := json.Unmarshal(b.Bytes(), &pts); err != nil || pts[0].Page != "/\u202etxt.exe" {
		t.Errorf("json: %v %+v", err, pts)
	}
}

// The bot classes' table names its page as Shown does.
func TestWriteClassesShowsPageEscaped(t *testing.T) {
	c := &Classes{Request: Request{Site: "s.test", Page: "/\u202etxt.exe", From: utc("2026-11-01T00:00:00Z"), To: utc("2026-11-02T00:00:00Z"), Step: Day},
		Collection: "monthly"}
	var b bytes.Buffer
	if err := WriteClasses(&b, c, "table", Options{}); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "(site s.test, page /\\u202etxt.exe, 2026-11-01") {
		t.Errorf("table:\n%s", s)
	}
}
