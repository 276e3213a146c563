package dryrun

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/archive"
	"github.com/logtally/logtally/parser"
)

// summaryRow returns the value of the summary row name, without its digit
// grouping.
func summaryRow(t *testing.T, summary, name string) string {
	t.Helper()
	for _, l := range strings.Split(summary, "\n") {
		if rest, ok := strings.CutPrefix(l, name+" "); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return strings.ReplaceAll(f[0], ",", "")
			}
		}
	}
	t.Fatalf("no row %q in\n%s", name, summary)
	return ""
}

// The dry run's figures over a file of many chunks and several drains of
// the aggregator (more keys than maxKeys): hits, sites, distinct pages and
// distinct seconds as counted independently from the lines written, and
// the malformed and overlong lines reported by their line numbers across
// chunk boundaries.
func TestDryRunFiguresAcrossChunks(t *testing.T) {
	const lines = 20000
	t0 := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	sites, pages, seconds := map[string]bool{}, map[string]bool{}, map[int64]bool{}
	malformedAt := map[int]bool{3001: true, 9002: true, 17003: true}
	const tooLongAt, maxLine = 12004, 4096
	hits := 0
	for n := 1; n <= lines; n++ {
		ts := t0.Add(time.Duration(n/3) * time.Second)
		host, page := fmt.Sprintf("h%d.test", n%4), fmt.Sprintf("/p%d", n*7%113)
		stamp := ts.Format("02/Jan/2006:15:04:05 -0700")
		switch {
		case malformedAt[n]:
			stamp = "not a time"
		case n == tooLongAt:
			page = "/" + strings.Repeat("x", maxLine)
		default:
			hits++
			sites[host] = true
			pages[host+" "+page] = true
			seconds[ts.Unix()] = true
		}
		fmt.Fprintf(&b, "%s:80 10.0.0.1 - - [%s] \"GET %s HTTP/1.1\" 200 1 \"-\" \"t\"\n", host, stamp, page)
	}
	if b.Len() < 3*archive.DefaultChunkSize {
		t.Fatalf("%d bytes: want several chunks", b.Len())
	}
	name := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := parser.New(parser.Config{Format: "vhost_combined", Site: parser.SiteFromLine})
	if err != nil {
		t.Fatal(err)
	}
	var stderr, out bytes.Buffer
	d := New(p, maxLine, &stderr)
	if err := d.ReadFile(name); err != nil {
		t.Fatal(err)
	}
	if err := d.Summary(&out, time.Second); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for row, want := range map[string]int{
		"files": 1, "lines": lines, "hits": hits, "malformed": len(malformedAt), "too long": 1,
		"sites": len(sites), "distinct pages": len(pages), "distinct seconds": len(seconds),
	} {
		if got := summaryRow(t, s, row); got != fmt.Sprint(want) {
			t.Errorf("%s = %s, want %d\n%s", row, got, want, s)
		}
	}
	if got, _ := strconv.Atoi(summaryRow(t, s, "keys committed")); got <= maxKeys {
		t.Errorf("keys committed = %d: want more than one batch of %d", got, maxKeys)
	}
	for n := range malformedAt {
		if w := fmt.Sprintf("%s:%d: malformed: bad time (", name, n); !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
		}
	}
	if w := fmt.Sprintf("%s:%d: line longer than %d bytes skipped", name, tooLongAt, maxLine); !strings.Contains(stderr.String(), w) {
		t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
	}
	if strings.Contains(stderr.String(), "not a time") {
		t.Errorf("a line's contents printed:\n%s", stderr.String())
	}
}

// max_sites and max_pages_per_minute apply as in the daemon: the hosts past
// max_sites count under the site "(other)", the pages past the limit of a
// minute under the page "(other)".
func TestDryRunFoldsSitesAndPages(t *testing.T) {
	var b bytes.Buffer
	for n := range 40 {
		fmt.Fprintf(&b, "h%d.test:80 10.0.0.1 - - [01/Mar/2024:10:00:%02d +0000] \"GET /p%d HTTP/1.1\" 200 1 \"-\" \"t\"\n", n%8, n, n%5)
	}
	name := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	pc := parser.Config{Format: "vhost_combined", Site: parser.SiteFromLine, MaxSites: 3}
	pc.Page.MaxPagesPerMinute = 2
	p, err := parser.New(pc)
	if err != nil {
		t.Fatal(err)
	}
	var stderr, out bytes.Buffer
	d := New(p, 1<<20, &stderr)
	if err := d.ReadFile(name); err != nil {
		t.Fatal(err)
	}
	if err := d.Summary(&out, time.Second); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	// 3 sites and (other); each with at most 2 pages and (other) in the
	// one minute; 40 seconds.
	if got := summaryRow(t, s, "sites"); got != "4" {
		t.Errorf("sites = %s, want 4\n%s", got, s)
	}
	if got := summaryRow(t, s, "hits"); got != "40" {
		t.Errorf("hits = %s, want 40\n%s", got, s)
	}
	if got := summaryRow(t, s, "distinct seconds"); got != "40" {
		t.Errorf("distinct seconds = %s, want 40\n%s", got, s)
	}
	if got := summaryRow(t, s, "distinct pages"); got != "12" {
		t.Errorf("distinct pages = %s, want 12\n%s", got, s)
	}
	// (other) pages: 3 hits of each named site, 15 of the site (other).
	if got := summaryRow(t, s, "hits under (other)"); got != "24" {
		t.Errorf("hits under (other) = %s, want 24\n%s", got, s)
	}
}
