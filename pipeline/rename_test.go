package pipeline

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/replay"
	"github.com/logtally/logtally/stream"
)

// renameBuffer opens a buffer holding cps and marks, committed at a last-
// commit time the takeover must keep.
func renameBuffer(t *testing.T, cps []stream.Checkpoint, marks []buffer.Mark) (*buffer.Buffer, time.Time) {
	t.Helper()
	buf := testenv.OpenBuffer(t, filepath.Join(t.TempDir(), "buffer.db"), buffer.Options{})
	stored := map[string][]byte{}
	for _, cp := range cps {
		stored[cp.Key()] = encoded(t, cp)
	}
	if err := buf.Commit(buffer.Commit{Checkpoints: stored, Marks: marks}); err != nil {
		t.Fatal(err)
	}
	var last time.Time
	err := buf.View(func(tx *buffer.ReadTx) error { last = tx.LastCommit(); return nil })
	if err != nil || last.IsZero() {
		t.Fatalf("last commit %v, %v", last, err)
	}
	return buf, last
}

// A source renamed in the config (same globs) takes over its old name's
// checkpoints and ledger entries, in the buffer, under its own name: its
// tailer resumes them, and its ledger look-up takes the old name's mark of
// a finished file as its own. Other sources' are left alone.
func TestRenamedSourceTakesOver(t *testing.T) {
	head := []byte("10.0.0.1 - - [01/Feb/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"t\"\n")
	sum := fnv1a.Extend(fnv1a.Offset, head)
	live := stream.Checkpoint{Source: "default", Path: "/l/a.log", File: stream.FileID{Dev: 1, Ino: 1}, Offset: 500, FPLen: 500, FPSum: 7, Stream: 11}
	rotated := stream.Checkpoint{Source: "default", Path: "/l/a.log.1", File: stream.FileID{Dev: 1, Ino: 2}, Offset: 900, FPLen: 900, FPSum: 8, Stream: 12}
	elsewhere := stream.Checkpoint{Source: "default", Path: "/x/a.log", File: stream.FileID{Dev: 1, Ino: 3}, Offset: 40}
	kept := stream.Checkpoint{Source: "kept", Path: "/k/k.log", File: stream.FileID{Dev: 1, Ino: 4}, Offset: 30}
	// A file of default finished (its checkpoint deleted): only its
	// ledger entry says it is counted; and a replay's entry.
	finished := buffer.Mark{FPLen: len(head), FPSum: sum, Offset: int64(len(head)), Stream: 13, Source: "default", Path: "/l/a.log.2"}
	replayed := buffer.Mark{FPLen: len(head), FPSum: sum, Offset: 3, Stream: 14, Source: replay.SourcePrefix + "default", Path: "/l/a.log.3"}
	buf, last := renameBuffer(t, []stream.Checkpoint{live, rotated, elsewhere, kept}, []buffer.Mark{finished, replayed})

	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	sources := []Source{{Name: "shop", Paths: []string{"/l/*.log"}}, {Name: "kept", Paths: []string{"/k/*.log", "/l/a.log"}}}
	r, err := loadRestart(buf, sources, log)
	if err != nil {
		t.Fatal(err)
	}
	got := r.bySource["shop"]
	if len(got) != 2 {
		t.Fatalf("shop restarts from %+v, want default's two checkpoints of its files", got)
	}
	for i, want := range []stream.Checkpoint{live, rotated} {
		want.Source = "shop"
		if got[i] != want {
			t.Errorf("shop's checkpoint %d: %+v, want %+v", i, got[i], want)
		}
	}
	if len(r.bySource["kept"]) != 1 || r.orphans["default"] != 1 || len(r.orphans) != 1 {
		t.Errorf("kept %+v, orphans %v: want kept's own and default's checkpoint of /x/a.log left", r.bySource["kept"], r.orphans)
	}
	if !r.since.Equal(last) {
		t.Errorf("since %v, want the last commit %v", r.since, last)
	}
	var now time.Time
	var stored map[string][]byte
	if err := buf.View(func(tx *buffer.ReadTx) error { now, stored = tx.LastCommit(), tx.Checkpoints(); return nil }); err != nil {
		t.Fatal(err)
	}
	if !now.Equal(last) {
		t.Errorf("the takeover moved the last commit from %v to %v", last, now)
	}
	var keys []string
	for k := range stored {
		keys = append(keys, strings.ReplaceAll(k, "\x00", "|"))
	}
	slices.Sort(keys)
	if want := []string{"default|1:3", "kept|1:4", "shop|1:1", "shop|1:2"}; !slices.Equal(keys, want) {
		t.Errorf("stored checkpoints %q, want %q", keys, want)
	}
	// The ledger: default's entry at a name shop holds is shop's now;
	// its look-up moves a copy of the finished file past it.
	p := &Pipeline{buf: buf, log: log}
	if pos := p.countedLocally("shop")(head); len(pos) != 2 || pos[0].Offset+pos[1].Offset != int64(len(head))+3 {
		t.Errorf("shop's ledger look-up: %+v, want the finished file's and the replay's", pos)
	}
	if pos := p.countedLocally("kept")(head); len(pos) != 1 || pos[0].Offset != 3 {
		t.Errorf("kept's ledger look-up: %+v, want the replay's only", pos)
	}
	var entries []stream.Entry
	buf.View(func(tx *buffer.ReadTx) error {
		entries = tx.LedgerEntries(func(e stream.Entry) bool { return e.Stream == replayed.Stream })
		return nil
	})
	if len(entries) != 1 || entries[0].Source != replayed.Source {
		t.Errorf("the replay's entry: %+v, want it left", entries)
	}
	out := logs.String()
	if !strings.Contains(out, "level=INFO") || !strings.Contains(out, "source=shop from=default files=2 ledger_entries=1") {
		t.Errorf("the takeover is not logged with both names and what it took:\n%s", out)
	}
	if strings.Contains(out, "/l/") {
		t.Errorf("a path is logged:\n%s", out)
	}

	// A second start finds shop's own checkpoints: nothing moves again.
	before := strings.Count(logs.String(), "takes over")
	r, err = loadRestart(buf, sources, log)
	if err != nil || len(r.bySource["shop"]) != 2 || strings.Count(logs.String(), "takes over") != before {
		t.Errorf("second start: %v, %+v\n%s", err, r.bySource["shop"], logs)
	}
}

// What cannot be told apart is taken by none, with a WARN naming the
// sources: a file two new sources hold, a file two old ones had
// checkpoints of; and a source with checkpoints of its own takes none.
func TestRenameAmbiguous(t *testing.T) {
	both := stream.Checkpoint{Source: "old", Path: "/l/a.log", File: stream.FileID{Dev: 1, Ino: 1}, Offset: 10}
	one := stream.Checkpoint{Source: "old", Path: "/m/b.log", File: stream.FileID{Dev: 1, Ino: 2}, Offset: 20}
	twice := stream.Checkpoint{Source: "old2", Path: "/m/b.log", File: stream.FileID{Dev: 1, Ino: 2}, Offset: 25}
	third := stream.Checkpoint{Source: "old3", Path: "/m/c.log", File: stream.FileID{Dev: 1, Ino: 3}, Offset: 30}
	mine := stream.Checkpoint{Source: "has", Path: "/n/n.log", File: stream.FileID{Dev: 1, Ino: 4}, Offset: 5}
	buf, _ := renameBuffer(t, []stream.Checkpoint{both, one, twice, third, mine}, nil)
	logs := &syncbuf.Buffer{}
	sources := []Source{
		{Name: "x", Paths: []string{"/l/*.log"}},
		{Name: "y", Paths: []string{"/l/a.log", "/m/b.log"}},
		{Name: "has", Paths: []string{"/n/n.log", "/m/c.log"}}, // not new: takes nothing
	}
	r, err := loadRestart(buf, sources, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.bySource["x"]) != 0 || len(r.bySource["y"]) != 0 || len(r.bySource["has"]) != 1 {
		t.Errorf("taken: %+v, want nothing taken", r.bySource)
	}
	if r.orphans["old"] != 2 || r.orphans["old2"] != 1 || r.orphans["old3"] != 1 {
		t.Errorf("orphans %v, want every old checkpoint left", r.orphans)
	}
	out := logs.String()
	for _, want := range []string{`from=old sources="x, y" files=1`, `source=y from="[old old2]"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no WARN with %s:\n%s", want, out)
		}
	}
}

// BenchmarkStartWithNewSource: a start where a configured source has no
// checkpoint (a new one, or one whose files do not exist) reads the whole
// ledger for entries it may take over. Buffer: 1,000 checkpoints and
// 100,000 ledger entries of a source "web". Reported: the time of
// loadRestart with a new source beside web, and its ratio to the same
// start without one (the baseline, measured in the same loop).
func BenchmarkStartWithNewSource(b *testing.B) {
	buf := testenv.OpenBuffer(b, filepath.Join(b.TempDir(), "buffer.db"), buffer.Options{})
	cps := map[string][]byte{}
	for i := range 1000 {
		cp := stream.Checkpoint{Source: "web", Path: fmt.Sprintf("/l/%d.log", i), File: stream.FileID{Dev: 1, Ino: uint64(i)}, Offset: 100}
		v, _ := cp.MarshalBinary()
		cps[cp.Key()] = v
	}
	const entries = 100_000
	for from := 0; from < entries; from += 10_000 {
		var marks []buffer.Mark
		for i := from; i < from+10_000; i++ {
			marks = append(marks, buffer.Mark{FPLen: 1024, FPSum: uint64(i), Offset: 5000, Stream: uint64(i + 1), Source: "web", Path: fmt.Sprintf("/l/%d.log.1", i)})
		}
		if err := buf.Commit(buffer.Commit{Checkpoints: cps, Marks: marks}); err != nil {
			b.Fatal(err)
		}
	}
	log := slog.New(slog.DiscardHandler)
	web := Source{Name: "web", Paths: []string{"/l/*.log"}}
	fresh := Source{Name: "new", Paths: []string{"/n/*.log"}}
	var base, with time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := loadRestart(buf, []Source{web}, log); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := loadRestart(buf, []Source{web, fresh}, log); err != nil {
			b.Fatal(err)
		}
		base, with = base+t1.Sub(t0), with+time.Since(t1)
	}
	b.ReportMetric(float64(with.Microseconds())/float64(b.N)/1000, "ms/start-with-new")
	b.ReportMetric(float64(base.Microseconds())/float64(b.N)/1000, "ms/start-baseline")
	b.ReportMetric(float64(with)/float64(base), "x-baseline")
}
