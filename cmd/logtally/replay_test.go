package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/logtally/logtally/internal/testenv/testconfig"
	"github.com/logtally/logtally/tailer"
)

const replayLines = `10.0.0.1 - - [17/May/2015:10:05:03 +0000] "GET /a?x=1 HTTP/1.1" 200 1 "-" "Mozilla/5.0"
10.0.0.2 - - [17/May/2015:10:05:03 +0000] "GET /a HTTP/1.1" 200 1 "-" "Mozilla/5.0"
10.0.0.3 - - [17/May/2015:10:05:04 +0000] "GET /b HTTP/1.1" 404 1 "-" "Googlebot/2.1"
10.0.0.4 - - [31/Feb/2015:10:05:04 +0000] "GET /b HTTP/1.1" 200 1 "-" "Mozilla/5.0"
\x16\x03\x01 garbage
10.0.0.5 - - [17/May/2015:10:06:00 +0000] "POST /c HTTP/1.1" 500 1 "-" "Mozilla/5.0"` + "\r\n" +
	`10.0.0.6 - - [17/May/2015:10:06:01 +0000] "GET /b HTTP/1.1" 200 1 "-" "Mozilla/5.0"`

// summaryValue returns the number on the summary line named name.
func summaryValue(t *testing.T, out, name string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(strings.TrimPrefix(l, name)); strings.HasPrefix(l, name) && len(f) > 0 && strings.TrimSpace(l[:len(name)]) == strings.TrimSpace(name) {
			if len(l) > len(name) && l[len(name)] == ' ' {
				return f[0]
			}
		}
	}
	t.Fatalf("no %q in summary:\n%s", name, out)
	return ""
}

func TestReplayDryRun(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "access.log")
	os.WriteFile(plain, []byte(replayLines), 0o644)
	// The same lines gzipped: every count doubles, the keys do not.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(replayLines + "\n"))
	zw.Close()
	gzName := filepath.Join(dir, "access.log.1.gz")
	os.WriteFile(gzName, gz.Bytes(), 0o644)

	var out, errb bytes.Buffer
	if err := cmdReplay([]string{"-dry-run", "-site", "example.com", "-format", "combined", plain, gzName}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	s := out.String()
	for name, want := range map[string]string{
		"files": "2", "lines": "14", "hits": "10", "malformed": "4", "filtered": "0",
		"  malformed: bad time": "2", "  malformed: bad fields": "2",
		"sites": "1", "distinct pages": "3", "distinct seconds": "4", "keys committed": "4",
	} {
		if got := summaryValue(t, s, name); got != want {
			t.Errorf("%s = %s, want %s\n%s", name, got, want, s)
		}
	}
	if !strings.Contains(s, "lines/s") {
		t.Errorf("no lines/s:\n%s", s)
	}
	// Malformed lines are reported with file and line number.
	for _, w := range []string{"access.log:4: malformed: bad time", "access.log:5: malformed: bad fields", "access.log.1.gz:4: malformed: bad time"} {
		if !strings.Contains(errb.String(), w) {
			t.Errorf("stderr does not contain %q:\n%s", w, errb.String())
		}
	}
}

func TestReplayConfigFiltersAndLimit(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	extra := "\n10.0.0.7 - - [17/May/2015:10:05:09 +0000] \"GET /d HTTP/1.1\" 200 1 \"-\" \"Mozilla/5.0\"\n"
	os.WriteFile(log, []byte(replayLines+extra), 0o644)
	src := testconfig.Source("example.com", "/x")
	src.Page.MaxPagesPerMinute = new(1)
	src.Filter.Status, src.Filter.ExcludeUserAgents = []string{"2xx", "4xx"}, []string{"bots"}
	cfgFile := testconfig.Write(t, filepath.Join(dir, "c.toml"), testconfig.New(dir, testconfig.Sources(src)))
	var out, errb bytes.Buffer
	if err := cmdReplay([]string{"-dry-run", "-config", cfgFile, log}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	s := out.String()
	// Hits: /a, /a, /d (10:05; /d is the second page of the minute, so
	// "(other)"), /b (10:06). /c is a 500, /b at 10:05 from a bot.
	for name, want := range map[string]string{
		"hits": "4", "filtered": "2", "  filtered: status": "1", "  filtered: user agent": "1",
		"hits under (other)": "1", "distinct pages": "3",
	} {
		if got := summaryValue(t, s, name); got != want {
			t.Errorf("%s = %s, want %s\n%s", name, got, want, s)
		}
	}
}

func TestReplayLongLines(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	good := `10.0.0.1 - - [17/May/2015:10:05:03 +0000] "GET /a HTTP/1.1" 200 1`
	huge := strings.Repeat("x", tailer.DefaultMaxLineBytes+1) // one byte over max_line_bytes
	atMax := strings.Repeat("y", tailer.DefaultMaxLineBytes)  // kept (and malformed), as the tailer keeps it
	os.WriteFile(log, []byte(good+"\n"+huge+"\n"+good+"\n"+atMax+"\n"+huge), 0o644)
	var out, errb bytes.Buffer
	if err := cmdReplay([]string{"-dry-run", "-site", "s", "-format", "common", log}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for name, want := range map[string]string{"lines": "5", "hits": "2", "too long": "2", "malformed": "1"} {
		if got := summaryValue(t, s, name); got != want {
			t.Errorf("%s = %s, want %s\n%s", name, got, want, s)
		}
	}
	if !strings.Contains(errb.String(), "access.log:2: line longer than") {
		t.Errorf("stderr: %s", errb.String())
	}
}

func TestReplayErrors(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "a.log")
	os.WriteFile(log, []byte("x\n"), 0o644)
	zst := filepath.Join(dir, "a.log.zst")
	os.WriteFile(zst, []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0}, 0o644)
	a, b := testconfig.Source("a", "/a"), testconfig.Source("b", "/b")
	a.Format, b.Format = "common", "common"
	two := testconfig.Write(t, filepath.Join(dir, "two.toml"), testconfig.New(dir, testconfig.Sources(a, b)))
	for _, tc := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"-site", "s", "-format", "combined", log}, true, "-config is required"},
		{[]string{"-dry-run", "-site", "s", "-format", "combined"}, true, "no log FILE"},
		{[]string{"-dry-run", "-site", "s", "-format", "nginx", log}, true, "log_format: must not be empty"},
		{[]string{"-dry-run", "-format", "combined", log}, true, "site: must not be empty"},
		{[]string{"-dry-run", "-config", two, log}, true, "2 sources: choose one with -source"},
		{[]string{"-dry-run", "-config", two, "-source", "c", log}, true, `no source named "c"`},
		{[]string{"-dry-run", "-bogus"}, true, "flag provided but not defined"},
		{[]string{"-dry-run", "-site", "s", "-format", "common", filepath.Join(dir, "missing.log")}, false, "no such file"},
		{[]string{"-dry-run", "-site", "s", "-format", "common", zst}, false, "a.log.zst (zstd): damaged at decompressed byte 0: unexpected EOF"},
	} {
		var out, errb bytes.Buffer
		err := cmdReplay(tc.args, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
			continue
		}
		if _, ok := err.(usageError); ok != tc.usage {
			t.Errorf("%v: usage error %v, want %v", tc.args, ok, tc.usage)
		}
	}
	// -config with -source picks the source.
	var out, errb bytes.Buffer
	if err := cmdReplay([]string{"-dry-run", "-config", two, "-source", "b", log}, &out, &errb); err != nil {
		t.Fatal(err)
	}
}

// Archives are read by their magic bytes: the bzip2 fixture of the sample
// log's first 200 lines, and the same lines as zstd under a plain name.
func TestReplayCompressed(t *testing.T) {
	dir := t.TempDir()
	bz := "../../testdata/compressed/access.log.bz2"
	plain := filepath.Join(dir, "access.log")
	data, err := os.ReadFile("../../testdata/sample/access.log")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	os.WriteFile(plain, bytes.Join(lines[:200], nil), 0o644)
	var zs bytes.Buffer
	zw, _ := zstd.NewWriter(&zs)
	zw.Write(bytes.Join(lines[:200], nil))
	zw.Close()
	zst := filepath.Join(dir, "access.log.1") // no extension: told by its bytes
	os.WriteFile(zst, zs.Bytes(), 0o644)
	summary := func(file string) string {
		var out, errb bytes.Buffer
		if err := cmdReplay([]string{"-dry-run", "-site", "s", "-format", "combined", file}, &out, &errb); err != nil {
			t.Fatalf("%s: %v\n%s", file, err, errb.String())
		}
		return out.String()
	}
	want := summary(plain)
	for _, f := range []string{bz, zst} {
		got := summary(f)
		for _, name := range []string{"lines", "hits", "malformed", "distinct pages"} {
			if g, w := summaryValue(t, got, name), summaryValue(t, want, name); g != w {
				t.Errorf("%s: %s = %s, want %s as for the plain file", f, name, g, w)
			}
		}
	}
	if summaryValue(t, want, "lines") != "200" {
		t.Fatalf("plain file: lines %s, want 200", summaryValue(t, want, "lines"))
	}
}

// -since and -until keep the hits inside the window; the others are
// filtered by reason "window". Bad values are usage errors.
func TestReplayWindow(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "access.log")
	os.WriteFile(plain, []byte(replayLines), 0o644)
	var out, errb bytes.Buffer
	err := cmdReplay([]string{"-dry-run", "-site", "example.com", "-format", "combined",
		"-since", "2015-05-17T10:05:04Z", "-until", "2015-05-17T10:06:01Z", plain}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	// Of the 5 good hits, 10:05:03 (two) and 10:06:01 fall outside.
	for name, want := range map[string]string{"hits": "2", "  filtered: window": "3"} {
		if got := summaryValue(t, out.String(), name); got != want {
			t.Errorf("%s = %s, want %s\n%s", name, got, want, out.String())
		}
	}
	for _, args := range [][]string{
		{"-since", "yesterday"},
		{"-since", "2015-05-18", "-until", "2015-05-17"},
	} {
		err := cmdReplay(append(append([]string{"-dry-run", "-site", "s", "-format", "combined"}, args...), plain), &out, &errb)
		if _, ok := err.(usageError); !ok {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if got, _ := parseWhen("since", "2026-11-23"); !got.Equal(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("a date is its UTC midnight: %v", got)
	}
}
