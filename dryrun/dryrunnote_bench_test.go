package dryrun

import (
	"testing"
	"time"

	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
)

// BenchmarkDryWorkerNote times a dry run worker's path over 200,000
// realistic lines (internal/loggen, as bench/gen writes them) cut into
// chunks of up to 256 KiB: Add of each chunk to its Summer and a drain
// every maxKeys keys held, each key drained noted (dryWorker.note); and,
// in the same run, the same with the keys noted as before the pair set
// (refNotes, a map of pages per site) and not noted at all. It reports
// ns per line of each, ns per key noted of both notes (the path's time
// less the one without notes) and their ratio.
//
//	go test -run '^$' -bench DryWorkerNote -count 3 ./replay
func BenchmarkDryWorkerNote(b *testing.B) {
	const lines = 200_000
	_, chunks := loggen.Chunks(1, lines, 256<<10, dryRunSource)
	newWorker := func() *dryWorker {
		pc := parser.Config{Format: "combined", Site: "bench.example.com"}
		pc.Page.MaxPagesPerMinute = 1000
		p, err := parser.New(pc)
		if err != nil {
			b.Fatal(err)
		}
		w := newDryWorker(p)
		w.mal = func(uint64, parser.Outcome, int) {}
		return w
	}
	// run sums the chunks on a new worker, passing each key drained to
	// note, and returns how long it took and the keys drained.
	run := func(note func(w *dryWorker) func([]byte) error) (time.Duration, int) {
		w := newWorker()
		f := note(w)
		keys := 0
		drain := func() {
			w.sum.Drain(func(key []byte, _ *measure.Vector) {
				keys++
				if err := f(key); err != nil {
					b.Fatal(err)
				}
			})
		}
		t0 := time.Now()
		for i := range chunks {
			c := chunks[i]
			if err := w.sum.Add(&c); err != nil {
				b.Fatal(err)
			}
			if w.sum.Held() >= maxKeys {
				drain()
			}
		}
		drain()
		return time.Since(t0), keys
	}
	noted := func(w *dryWorker) func([]byte) error { return w.note }
	before := func(*dryWorker) func([]byte) error {
		return (&refNotes{sites: map[string]map[string]struct{}{}}).note
	}
	none := func(*dryWorker) func([]byte) error { return func([]byte) error { return nil } }
	var tNew, tRef, tNone time.Duration
	var keys int
	for i := 0; b.Loop(); i++ {
		order := []*time.Duration{&tNew, &tRef, &tNone}
		fs := []func(*dryWorker) func([]byte) error{noted, before, none}
		for j := range 3 {
			k := (i + j) % 3 // rotate the order
			d, n := run(fs[k])
			*order[k] += d
			keys = n
		}
	}
	l := float64(b.N) * lines
	k := float64(b.N) * float64(keys)
	b.ReportMetric(float64(tNew.Nanoseconds())/l, "ns/line")
	b.ReportMetric(float64(tRef.Nanoseconds())/l, "ns/line_before")
	b.ReportMetric(float64(tNone.Nanoseconds())/l, "ns/line_no_notes")
	b.ReportMetric(float64((tNew-tNone).Nanoseconds())/k, "ns/key_noted")
	b.ReportMetric(float64((tRef-tNone).Nanoseconds())/k, "ns/key_noted_before")
	b.ReportMetric(float64(tNew-tNone)/float64(tRef-tNone), "x_note_before")
	b.ReportMetric(float64(keys)/lines, "keys/line")
}

// BenchmarkNoteKeys times dryWorker.note alone over the keys a dry run
// drains from 200,000 realistic lines (internal/loggen, drained every
// maxKeys keys as the dry run does), and, in the same run, refNotes.note
// (the keys noted as before the pair set) over the same keys. It reports
// ns per key of each and their ratio.
//
//	go test -run '^$' -bench NoteKeys -count 3 ./replay
func BenchmarkNoteKeys(b *testing.B) {
	g := loggen.New(1)
	pc := parser.Config{Format: "combined", Site: "bench.example.com"}
	pc.Page.MaxPagesPerMinute = 1000
	p, err := parser.New(pc)
	if err != nil {
		b.Fatal(err)
	}
	w := newDryWorker(p)
	w.mal = func(uint64, parser.Outcome, int) {}
	var arena []byte // the keys one after the other, read in order as a drain does
	var ends []int
	drain := func() {
		w.sum.Drain(func(key []byte, _ *measure.Vector) {
			arena = append(arena, key...)
			ends = append(ends, len(arena))
		})
	}
	var data []byte
	for i := range 200_000 {
		data = append(g.Append(data, false), '\n')
		if i%1000 == 999 {
			c := stream.Chunk{Checkpoint: stream.Checkpoint{Source: dryRunSource, Path: "/logs/gen.log",
				File: stream.FileID{Dev: 1, Ino: 3}, Offset: int64(i)}, Data: data}
			if err := w.sum.Add(&c); err != nil {
				b.Fatal(err)
			}
			data = data[:0]
			if w.sum.Held() >= maxKeys {
				drain()
			}
		}
	}
	drain()
	var tNew, tRef time.Duration
	timed := func(d *time.Duration, note func([]byte) error) {
		t0 := time.Now()
		start := 0
		for _, end := range ends {
			if err := note(arena[start:end]); err != nil {
				b.Fatal(err)
			}
			start = end
		}
		*d += time.Since(t0)
	}
	for i := 0; b.Loop(); i++ {
		nw := &dryWorker{sites: map[string]*pageSet{}}
		ref := &refNotes{sites: map[string]map[string]struct{}{}}
		if i%2 == 0 {
			timed(&tNew, nw.note)
			timed(&tRef, ref.note)
		} else {
			timed(&tRef, ref.note)
			timed(&tNew, nw.note)
		}
	}
	n := float64(b.N) * float64(len(ends))
	b.ReportMetric(float64(tNew.Nanoseconds())/n, "ns/key")
	b.ReportMetric(float64(tRef.Nanoseconds())/n, "ns/key_before")
	b.ReportMetric(float64(tNew)/float64(tRef), "x_before")
}
