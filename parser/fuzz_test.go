package parser

import (
	"bufio"
	"bytes"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/logtally/logtally/botclass"
)

// FuzzParse checks, for any bytes: Parse does not panic and does not
// modify the line; a hit has a page that starts with '/', is valid UTF-8
// and within MaxPageLen, a time >= 0, a status in 100..599, a token
// method, an RT >= -1 and a Bot < NumClasses, a Client and UA within
// their bounds and inside the line (checkClientUA); a non-hit is malformed
// with a zero Hit; parsing the same line
// again (after another line) gives the same result; and a "\r\n" ending
// changes nothing.
func FuzzParse(f *testing.F) {
	for _, tc := range append(append([]lineCase{}, goodLines...), badLines...) {
		f.Add([]byte(tc.line))
	}
	for _, l := range benchLines(8, false) {
		f.Add(l)
	}
	if file, err := os.Open(realLog); err == nil {
		sc := bufio.NewScanner(file)
		for n := 0; n < 20 && sc.Scan(); n++ {
			f.Add(bytes.Clone(sc.Bytes()))
		}
		file.Close()
	}
	parsers := []*Parser{
		mustNew(f, Config{Format: "combined"}),
		mustNew(f, Config{Format: "common", MaxPageLen: MinMaxPageLen}),
	}
	other := []byte(pre + `"GET /` + string(bytes.Repeat([]byte(`\xFF`), 200)) + ` HTTP/1.1" 200 1`)

	f.Fuzz(func(t *testing.T, line []byte) {
		orig := bytes.Clone(line)
		for _, p := range parsers {
			var h Hit
			o := p.Parse(line, &h)
			if !bytes.Equal(line, orig) {
				t.Fatalf("Parse modified the line to %q", line)
			}
			checkHit(t, p, line, o, &h)
			first := cloneHit(h)

			var h2 Hit
			p.Parse(other, &h2)
			if o2 := p.Parse(line, &h2); o2 != o || !sameHit(first, h2) {
				t.Fatalf("Parse(%q) = %v %+v, then %v %+v", line, o, first, o2, h2)
			}
			if n := len(line); n == 0 || line[n-1] != '\r' && line[n-1] != '\n' {
				crlf := append(bytes.Clone(line), '\r', '\n')
				if o3 := p.Parse(crlf, &h2); o3 != o || !sameHit(first, h2) {
					t.Fatalf("Parse(%q) = %v %+v, but %v %+v with CR LF", line, o, first, o3, h2)
				}
			}
		}
	})
}

func checkHit(t *testing.T, p *Parser, line []byte, o Outcome, h *Hit) {
	t.Helper()
	if o != OK {
		if !o.Malformed() {
			t.Fatalf("Parse(%q) = %v: neither ok nor malformed", line, o)
		}
		if h.Site != nil || h.Page != nil || h.Method != nil || h.Time != 0 || h.Status != 0 || h.Bytes != 0 || h.RT != 0 || h.Bot != 0 || h.Client != nil || h.UA != nil {
			t.Fatalf("Parse(%q) = %v with hit %+v", line, o, h)
		}
		return
	}
	if len(h.Page) == 0 || h.Page[0] != '/' || len(h.Page) > p.maxPageLen || !utf8.Valid(h.Page) {
		t.Fatalf("Parse(%q): page %q (%d bytes, max %d)", line, h.Page, len(h.Page), p.maxPageLen)
	}
	if h.Time < 0 || h.Status < 100 || h.Status > 599 {
		t.Fatalf("Parse(%q): time %d status %d", line, h.Time, h.Status)
	}
	checkMeasures(t, line, h)
	checkClientUA(t, p, line, h)
	if len(h.Method) == 0 || len(h.Method) > maxMethodLen {
		t.Fatalf("Parse(%q): method %q", line, h.Method)
	}
	for _, c := range h.Method {
		if !isTchar[c] {
			t.Fatalf("Parse(%q): method %q", line, h.Method)
		}
	}
	if string(h.Site) != "example.com" {
		t.Fatalf("Parse(%q): site %q", line, h.Site)
	}
}

// checkMeasures checks a hit's measures: RT is NoRT or 0..MaxRT, Bytes
// at most MaxBytes, Bot a class.
func checkMeasures(t *testing.T, line []byte, h *Hit) {
	t.Helper()
	if h.RT < NoRT || h.RT > MaxRT || h.Bytes > MaxBytes || h.Bot >= botclass.NumClasses {
		t.Fatalf("Parse(%q): bytes %d rt %d bot %v", line, h.Bytes, h.RT, h.Bot)
	}
}

func cloneHit(h Hit) Hit {
	h.Site = bytes.Clone(h.Site)
	h.Page = bytes.Clone(h.Page)
	h.Method = bytes.Clone(h.Method)
	h.Client = bytes.Clone(h.Client)
	h.UA = bytes.Clone(h.UA)
	return h
}

func sameHit(a, b Hit) bool {
	return bytes.Equal(a.Site, b.Site) && bytes.Equal(a.Page, b.Page) && bytes.Equal(a.Method, b.Method) &&
		a.Time == b.Time && a.Status == b.Status && (a.Page == nil) == (b.Page == nil) &&
		a.Bytes == b.Bytes && a.RT == b.RT && a.Bot == b.Bot &&
		bytes.Equal(a.Client, b.Client) && (a.Client == nil) == (b.Client == nil) &&
		bytes.Equal(a.UA, b.UA) && (a.UA == nil) == (b.UA == nil)
}
