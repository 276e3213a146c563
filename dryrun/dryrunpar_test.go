package dryrun

import (
	"bytes"
	"errors"
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

// dryRunBoth runs the dry run over files on one goroutine (New) and
// on jobs (NewParallel), and returns their summaries without the
// rows that depend on timing or on how the sums were batched (elapsed,
// lines/s, keys committed), their messages, errors, and the parallel
// run's number of sequential re-reads.
func dryRunBoth(t *testing.T, cfg parser.Config, maxLine, jobs int, files []string) (seq, par [3]string, rereads int) {
	t.Helper()
	run := func(d *DryRun, stderr *bytes.Buffer) [3]string {
		var out bytes.Buffer
		err := d.ReadFiles(files)
		if err == nil {
			if err := d.Summary(&out, time.Second); err != nil {
				t.Fatal(err)
			}
		}
		return [3]string{out.String(), stderr.String(), fmt.Sprint(err)}
	}
	// The keys committed are compared when no worker drained before the
	// end (fewer keys than maxKeys in all).
	drop := func(summary string, keys bool) string {
		var keep []string
		for _, l := range strings.Split(summary, "\n") {
			if !strings.HasPrefix(l, "elapsed ") && !strings.HasPrefix(l, "lines/s ") && (keys || !strings.HasPrefix(l, "keys committed ")) {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	defer func() {
		keys := false
		if seq[2] == "<nil>" {
			n, _ := strconv.Atoi(summaryRow(t, seq[0], "keys committed"))
			keys = n < maxKeys
		}
		seq[0], par[0] = drop(seq[0], keys), drop(par[0], keys)
	}()
	p, err := parser.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var e1, e2 bytes.Buffer
	seq = run(New(p, maxLine, &e1), &e1)
	d, err := NewParallel(cfg, maxLine, jobs, &e2)
	if err != nil {
		t.Fatal(err)
	}
	if d.par == nil {
		t.Fatalf("%d jobs: not a parallel dry run", jobs)
	}
	par = run(d, &e2)
	return seq, par, d.par.reread
}

// withReadSize makes archive.Read read n bytes at a time during the test:
// chunks cut in other places than archive.DefaultChunkSize's.
func withReadSize(t *testing.T, n int) {
	old := archive.ReadSize
	archive.ReadSize = n
	t.Cleanup(func() { archive.ReadSize = old })
}

// The parallel dry run's summary and messages are the sequential one's:
// on the real Apache log, with the default bounds and with bounds that
// fold (read again in order), and over several files with chunks cut in
// awkward places.
func TestParallelDryRunMatchesSequential(t *testing.T) {
	real := filepath.Join("..", "testdata", "apache_combined_real.log")
	for _, tc := range []struct {
		name     string
		cfg      parser.Config
		readSize int
		jobs     int
		files    []string
		rereads  int
	}{
		{"real log", parser.Config{Site: "s", Format: "combined"}, archive.DefaultChunkSize, 2, []string{real}, 0},
		{"real log, small chunks, 3 jobs", parser.Config{Site: "s", Format: "combined"}, 4093, 3, []string{real}, 0},
		{"real log, default bound not reached", parser.Config{Site: "s", Format: "combined", Page: parser.PageConfig{MaxPagesPerMinute: 2000}}, 8191, 2, []string{real}, 0},
		{"real log, pages folded", parser.Config{Site: "s", Format: "combined", Page: parser.PageConfig{MaxPagesPerMinute: 3}}, 8191, 2, []string{real}, 1},
		{"real log, more pages than the bound, none in a minute", parser.Config{Site: "s", Format: "combined", Page: parser.PageConfig{MaxPagesPerMinute: 1000}}, 8191, 2, []string{real}, 1},
		{"real log, more pages than the bound in all, not in a worker", parser.Config{Site: "s", Format: "combined", Page: parser.PageConfig{MaxPagesPerMinute: 1367}}, 8191, 2, []string{real}, 1},
		{"real log twice", parser.Config{Site: "s", Format: "combined"}, 16381, 2, []string{real, real}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withReadSize(t, tc.readSize)
			seq, par, rereads := dryRunBoth(t, tc.cfg, 1<<20, tc.jobs, tc.files)
			if seq != par {
				t.Errorf("parallel:\n%s\n%s\n%s\nsequential:\n%s\n%s\n%s", par[0], par[1], par[2], seq[0], seq[1], seq[2])
			}
			if rereads != tc.rereads {
				t.Errorf("read again in order %d times, want %d", rereads, tc.rereads)
			}
		})
	}
}

// A generated log with what a chunk cut can split: CRLF lines, malformed
// and overlong lines (around the cuts), a last line without '\n', hosts
// folded by max_sites; plain and compressed, one and several files, and
// a damaged file among them.
func TestParallelDryRunAwkwardCuts(t *testing.T) {
	const maxLine = 300
	dir := t.TempDir()
	t0 := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	for n := 1; n <= 3000; n++ {
		ts := t0.Add(time.Duration(n/2) * time.Second).Format("02/Jan/2006:15:04:05 -0700")
		page := fmt.Sprintf("/p%d", n*7%53)
		end := "\n"
		switch {
		case n%97 == 0:
			ts = "not a time"
		case n%211 == 0:
			page = "/" + strings.Repeat("y", maxLine+n%7)
		case n%5 == 0:
			end = "\r\n"
		}
		fmt.Fprintf(&b, "h%d.test:80 10.0.0.%d - - [%s] \"GET %s HTTP/1.1\" %d %d \"-\" \"agent %d\"%s",
			n%6, n%250, ts, page, 200+n%4*100, n, n%9, end)
	}
	plain := bytes.TrimSuffix(b.Bytes(), []byte("\n")) // no final newline
	files := map[string][]byte{"a.log": plain}
	for kind, data := range compressAll(t, plain) {
		files["a.log."+string(kind)] = data
	}
	var names []string
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, path)
	}
	cfg := parser.Config{Site: parser.SiteFromLine, Format: "vhost_combined"}
	for _, size := range []int{97, 1000, 4099} {
		withReadSize(t, size)
		for _, name := range names {
			seq, par, _ := dryRunBoth(t, cfg, maxLine, 2, []string{name})
			if seq != par {
				t.Errorf("%s, reads of %d: parallel:\n%s\n%s\n%s\nsequential:\n%s\n%s\n%s", name, size, par[0], par[1], par[2], seq[0], seq[1], seq[2])
			}
		}
		seq, par, _ := dryRunBoth(t, cfg, maxLine, 2, names)
		if seq != par {
			t.Errorf("all files, reads of %d: parallel:\n%s\n%s\nsequential:\n%s\n%s", size, par[0], par[1], seq[0], seq[1])
		}
		if !strings.Contains(seq[0], "files                                 4") && !strings.Contains(seq[0], "files                                 3") {
			t.Errorf("summary:\n%s", seq[0])
		}
	}

	// max_sites folds hosts: read again in order, the same figures.
	withReadSize(t, 1000)
	folding := cfg
	folding.MaxSites = 3
	seq, par, rereads := dryRunBoth(t, folding, maxLine, 2, names[:1])
	if seq != par || rereads != 1 {
		t.Errorf("max_sites 3: read again %d times; parallel:\n%s\nsequential:\n%s", rereads, par[0], seq[0])
	}

	// A damaged file between intact ones: the same messages and error,
	// and the files after it are not summed.
	damaged := filepath.Join(dir, "damaged.gz")
	whole := files["a.log.gzip"]
	if err := os.WriteFile(damaged, whole[:len(whole)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	list := []string{names[0], damaged, names[0]}
	seq, par, _ = dryRunBoth(t, cfg, maxLine, 2, list)
	if seq != par || !strings.Contains(par[2], "damaged at decompressed byte") {
		t.Errorf("with a damaged file: parallel:\n%s\n%s\nsequential:\n%s\n%s", par[1], par[2], seq[1], seq[2])
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.log")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	seq, par, _ = dryRunBoth(t, cfg, maxLine, 2, []string{names[0], filepath.Join(dir, "missing.log"), names[0]})
	if seq != par || !strings.Contains(par[2], "missing.log") {
		t.Errorf("with a missing file: parallel:\n%s\n%s\nsequential:\n%s\n%s", par[1], par[2], seq[1], seq[2])
	}
}
