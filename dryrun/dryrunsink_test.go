package dryrun

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
)

// sumSink keeps a dry run's sums by file and key.
type sumSink struct {
	sums map[int]map[string]measure.Vector
}

func (s *sumSink) Sums(file int, key []byte, v *measure.Vector) {
	if s.sums[file] == nil {
		s.sums[file] = map[string]measure.Vector{}
	}
	acc := s.sums[file][string(key)]
	acc.Merge(v)
	s.sums[file][string(key)] = acc
}

// sinkSums reads files with a dry run of jobs (1: New's) whose
// sinks keep the sums, and returns them merged by file and key, and the
// stats.
func sinkSums(t *testing.T, cfg parser.Config, jobs int, files []string) (map[int]map[string]measure.Vector, uint64) {
	t.Helper()
	d, err := NewParallel(cfg, 1<<20, jobs, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	d.SumsTo(func() Sink { return &sumSink{sums: map[int]map[string]measure.Vector{}} })
	if err := d.ReadFiles(files); err != nil {
		t.Fatal(err)
	}
	st, err := d.Drain()
	if err != nil {
		t.Fatal(err)
	}
	all := map[int]map[string]measure.Vector{}
	for _, s := range d.Sinks() {
		(&sumSink{sums: all}).merge(s.(*sumSink))
	}
	return all, st.Hits
}

func (s *sumSink) merge(o *sumSink) {
	for f, m := range o.sums {
		for k, v := range m {
			s.Sums(f, []byte(k), &v)
		}
	}
}

// A dry run's sinks get every hit once, each with the file it came
// from, on one goroutine and on several (the sums merged are the same),
// also when a bound makes the files be read again in order (the earlier
// workers' sinks are dropped).
func TestDryRunSinks(t *testing.T) {
	dir := t.TempDir()
	var files []string
	spans := map[int][2]int64{}
	for f := range 4 {
		var b bytes.Buffer
		t0 := time.Date(2024, 3, 1+f, 0, 0, 0, 0, time.UTC)
		for n := range 5000 {
			ts := t0.Add(time.Duration(n) * time.Second)
			fmt.Fprintf(&b, "h%d.test:80 10.0.0.%d - - [%s] \"GET /p%d HTTP/1.1\" 200 %d \"-\" \"a\"\n",
				n%5, n%250, ts.Format("02/Jan/2006:15:04:05 -0700"), n*7%61, n)
		}
		path := filepath.Join(dir, fmt.Sprintf("%d.log", f))
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
		spans[f] = [2]int64{t0.Unix(), t0.Unix() + 4999}
	}
	files = append(files, files[0]) // the first again: a fifth file
	spans[4] = spans[0]
	withReadSize(t, 8191)
	cfg := parser.Config{Site: parser.SiteFromLine, Format: "vhost_combined"}
	seq, hits := sinkSums(t, cfg, 1, files)
	if hits != 25000 {
		t.Fatalf("%d hits, want 25000", hits)
	}
	var views uint64
	for f, m := range seq {
		for k, v := range m {
			views += v[measure.Views]
			_, _, sec, err := buffer.DecodeKey([]byte(k))
			if err != nil || sec < spans[f][0] || sec > spans[f][1] {
				t.Fatalf("file %d: a sum at %d (%v), outside the file's [%d, %d]", f, sec, err, spans[f][0], spans[f][1])
			}
		}
	}
	if views != hits || len(seq) != 5 {
		t.Fatalf("sinks: %d views in %d files, want %d in 5", views, len(seq), hits)
	}
	for _, jobs := range []int{2, 3} {
		par, _ := sinkSums(t, cfg, jobs, files)
		if !maps.EqualFunc(seq, par, func(a, b map[string]measure.Vector) bool { return maps.Equal(a, b) }) {
			t.Errorf("%d jobs: the sinks' sums differ from one job's", jobs)
		}
	}
	folding := cfg
	folding.MaxSites = 3
	seq, _ = sinkSums(t, folding, 1, files)
	par, _ := sinkSums(t, folding, 2, files)
	if !maps.EqualFunc(seq, par, func(a, b map[string]measure.Vector) bool { return maps.Equal(a, b) }) {
		t.Errorf("max_sites 3, read again in order: the sinks' sums differ from one job's")
	}
}

// dimSink is a sumSink that keeps the counts by dimension too, by key.
type dimSink struct {
	sumSink
	dims map[string]uint64
}

func (s *dimSink) Dims(_ int, key []byte, n uint64) { s.dims[string(key)] += n }

// A DimSink gets each value's hits of the files by name, past the
// daemon's bound of values per site day (dims.DefaultLimits: 100
// referrer hosts), on one goroutine and on several, each dimension's
// counts of a site day summing to its views.
func TestDryRunDimSinks(t *testing.T) {
	dir := t.TempDir()
	var files []string
	const hosts, perFile = 250, 3000
	for f := range 3 {
		var b bytes.Buffer
		t0 := time.Date(2024, 3, 1, 20, 0, 0, 0, time.UTC) // two UTC days
		for n := range perFile {
			ts := t0.Add(time.Duration(f*perFile+n) * 10 * time.Second)
			fmt.Fprintf(&b, "10.0.0.%d - - [%s] \"GET /p%d HTTP/1.1\" 200 10 \"https://r%d.example/x\" \"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\"\n",
				n%250, ts.Format("02/Jan/2006:15:04:05 -0700"), n%7, (f*perFile+n)%hosts)
		}
		path := filepath.Join(dir, fmt.Sprintf("%d.log", f))
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	cfg := parser.Config{Format: "combined", Site: "dims.test", Dims: &parser.DimsConfig{}}
	for _, jobs := range []int{1, 3} {
		d, err := NewParallel(cfg, 1<<20, jobs, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		d.SumsTo(func() Sink { return &dimSink{sumSink{sums: map[int]map[string]measure.Vector{}}, map[string]uint64{}} })
		if err := d.ReadFiles(files); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Drain(); err != nil {
			t.Fatal(err)
		}
		views := map[int64]uint64{}               // by day
		byDim := map[dims.Dim]map[string]uint64{} // every day
		sums := map[int64]map[dims.Dim]uint64{}   // by day and dimension
		for _, s := range d.Sinks() {
			ds := s.(*dimSink)
			for _, m := range ds.sums {
				for k, v := range m {
					_, _, sec, err := buffer.DecodeKey([]byte(k))
					if err != nil {
						t.Fatal(err)
					}
					views[sec-sec%86400] += v[measure.Views]
				}
			}
			for k, n := range ds.dims {
				site, dm, value, day, err := buffer.DecodeDimKey([]byte(k))
				if err != nil || string(site) != "dims.test" {
					t.Fatalf("key %q: site %q, %v", k, site, err)
				}
				if byDim[dm] == nil {
					byDim[dm] = map[string]uint64{}
				}
				byDim[dm][string(value)] += n
				if sums[day] == nil {
					sums[day] = map[dims.Dim]uint64{}
				}
				sums[day][dm] += n
			}
		}
		if len(views) != 2 {
			t.Fatalf("jobs %d: %d days, want 2", jobs, len(views))
		}
		for day, v := range views {
			for dm := range dims.N {
				if sums[day][dm] != v {
					t.Errorf("jobs %d: day %d: %s sums to %d, want its views %d", jobs, day, dm, sums[day][dm], v)
				}
			}
		}
		ref := byDim[dims.Referrer]
		if len(ref) != hosts || ref[dims.Other] != 0 || byDim[dims.Browser]["Firefox"] != 3*perFile {
			t.Errorf("jobs %d: %d referrer values ((other) %d), Firefox %d; want %d, none, %d",
				jobs, len(ref), ref[dims.Other], byDim[dims.Browser]["Firefox"], hosts, 3*perFile)
		}
	}
}
