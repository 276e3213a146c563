package aggregate_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
)

const interval = time.Second

// t0 is the time of the test lines: 17/May/2015:10:05:03 +0000.
var t0 = time.Date(2015, 5, 17, 10, 5, 3, 0, time.UTC)

// line returns a combined-format line for page at t0+sec.
func line(page string, sec int) string {
	ts := t0.Add(time.Duration(sec) * time.Second).Format("02/Jan/2006:15:04:05 -0700")
	return fmt.Sprintf(`1.2.3.4 - - [%s] "GET %s HTTP/1.1" 200 100 "-" "Mozilla/5.0"`, ts, page)
}

// chunk returns a data chunk of source src, file ino, holding lines from
// offset start.
func chunk(src string, ino uint64, start int64, lines ...string) stream.Chunk {
	data := strings.Join(lines, "\n") + "\n"
	return stream.Chunk{
		Checkpoint: stream.Checkpoint{
			Source: src, Path: fmt.Sprintf("/logs/%d.log", ino), File: stream.FileID{Dev: 1, Ino: ino},
			Offset: start + int64(len(data)),
		},
		Start: start,
		Data:  []byte(data),
	}
}

// hitKey is a decoded buffer key.
type hitKey struct {
	site, page string
	sec        int64
}

func key(page string, sec int) hitKey {
	return hitKey{"s", page, t0.Unix() + int64(sec)}
}

// harness runs an Aggregator over a real buffer with a fake clock.
type harness struct {
	t      *testing.T
	buf    *buffer.Buffer
	clk    *clock.Fake
	in     chan stream.Chunk
	agg    *aggregate.Aggregator
	cancel context.CancelFunc
	done   chan error
	ended  bool
}

func start(t *testing.T, opts buffer.Options, maxKeys int) *harness {
	t.Helper()
	return startWith(t, opts, maxKeys, nil)
}

// startWith is start with a last say on the config.
func startWith(t *testing.T, opts buffer.Options, maxKeys int, edit func(*aggregate.Config)) *harness {
	t.Helper()
	buf := testenv.OpenBuffer(t, filepath.Join(t.TempDir(), "buffer.db"), opts)
	p, err := parser.New(parser.Config{Format: "combined", Site: "s"})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{
		t: t, buf: buf, clk: clock.NewFake(t0.Add(time.Hour)),
		in: make(chan stream.Chunk), done: make(chan error, 1),
	}
	cfg := aggregate.Config{
		Buffer: buf, Parsers: map[string]*parser.Parser{"src": p},
		CommitInterval: interval, MaxKeys: maxKeys, Clock: h.clk,
	}
	if edit != nil {
		edit(&cfg)
	}
	h.agg, err = aggregate.New(cfg, h.in)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- h.agg.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if !h.ended {
			select {
			case <-h.done:
			case <-time.After(10 * time.Second):
				t.Error("Run ignores its cancelled context")
			}
		}
	})
	if !testenv.Until(10*time.Second, func() bool { return !h.agg.LastBeat().IsZero() }) { // Run has started
		t.Fatal("Run did not start")
	}
	return h
}

// blockUntil waits until n fake-clock timers are pending.
func (h *harness) blockUntil(n int) {
	h.t.Helper()
	ok := make(chan struct{})
	go func() { h.clk.BlockUntil(n); close(ok) }()
	select {
	case <-ok:
	case <-time.After(10 * time.Second):
		h.t.Fatalf("timed out waiting for %d timers; %d pending", n, h.clk.Waiters())
	}
}

// send hands c to Run, failing if Run does not take it in time.
func (h *harness) send(c stream.Chunk) {
	h.t.Helper()
	select {
	case h.in <- c:
	case err := <-h.done:
		h.ended = true
		h.t.Fatalf("Run returned early: %v", err)
	case <-time.After(10 * time.Second):
		h.t.Fatal("Run does not read its input")
	}
}

// refused asserts that Run is not reading its input now.
func (h *harness) refused(c stream.Chunk) {
	h.t.Helper()
	select {
	case h.in <- c:
		h.t.Fatal("Run read a chunk while the buffer is full")
	default:
	}
}

// close closes the input and waits for Run to return.
func (h *harness) close() error {
	h.t.Helper()
	close(h.in)
	return h.wait()
}

func (h *harness) wait() error {
	h.t.Helper()
	select {
	case err := <-h.done:
		h.ended = true
		return err
	case <-time.After(10 * time.Second):
		h.t.Fatal("Run did not return")
		return nil
	}
}

// eventually waits until cond holds.
func (h *harness) eventually(what string, cond func(aggregate.Stats) bool) {
	h.t.Helper()
	if !testenv.Until(10*time.Second, func() bool { return cond(h.agg.Stats()) }) {
		h.t.Fatalf("timed out waiting for %s; stats %+v", what, h.agg.Stats())
	}
}

// tick advances the fake clock by one commit interval and waits for the
// commit it triggers.
func (h *harness) tick() {
	h.t.Helper()
	n := h.agg.Stats().Commits
	h.blockUntil(1)
	h.clk.Advance(interval)
	h.eventually("a commit", func(s aggregate.Stats) bool { return s.Commits > n })
}

// drain seals and acknowledges the pending counts and returns them.
func drain(t *testing.T, buf *buffer.Buffer) map[hitKey]uint64 {
	t.Helper()
	b, err := buf.Seal(buffer.Seal{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[hitKey]uint64{}
	if b == nil {
		return out
	}
	var sum uint64
	err = buf.View(func(tx *buffer.ReadTx) error {
		return tx.ScanBatch(b.ID, nil, func(k []byte, v *measure.Vector) bool {
			n := v[measure.Views]
			site, page, sec, err := buffer.DecodeKey(k)
			if err != nil {
				t.Error(err)
				return false
			}
			out[hitKey{string(site), string(page), sec}] = n
			sum += n
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum != b.Hits || len(out) != b.Keys {
		t.Fatalf("batch says %d keys %d hits, scan found %d keys %d hits", b.Keys, b.Hits, len(out), sum)
	}
	if err := buf.Ack(b.ID); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkpoints returns the stored checkpoints by inode.
func checkpoints(t *testing.T, buf *buffer.Buffer) map[uint64]stream.Checkpoint {
	t.Helper()
	var raw map[string][]byte
	if err := buf.View(func(tx *buffer.ReadTx) error { raw = tx.Checkpoints(); return nil }); err != nil {
		t.Fatal(err)
	}
	out := map[uint64]stream.Checkpoint{}
	for k, v := range raw {
		var cp stream.Checkpoint
		if err := cp.UnmarshalBinary(v); err != nil {
			t.Fatalf("checkpoint %q: %v", k, err)
		}
		if k != cp.Key() {
			t.Fatalf("checkpoint stored under %q, its key is %q", k, cp.Key())
		}
		out[cp.File.Ino] = cp
	}
	return out
}

func wantCounts(t *testing.T, got, want map[hitKey]uint64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d keys %v, want %d %v", len(got), got, len(want), want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("count of %v = %d, want %d", k, got[k], n)
		}
	}
}

func wantOffsets(t *testing.T, got map[uint64]stream.Checkpoint, want map[uint64]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got checkpoints %+v, want offsets %v", got, want)
	}
	for ino, off := range want {
		cp, ok := got[ino]
		if !ok {
			t.Errorf("no checkpoint for inode %d", ino)
			continue
		}
		if cp.Offset != off || cp.Source != "src" {
			t.Errorf("checkpoint of inode %d: %+v, want source src offset %d", ino, cp, off)
		}
	}
}

func TestCommitsCountsAndLastCheckpointsOnTick(t *testing.T) {
	h := start(t, buffer.Options{}, 0)
	a1 := chunk("src", 1, 0, line("/a", 0), line("/b", 0))
	a2 := chunk("src", 1, a1.Checkpoint.Offset, line("/a", 1))
	b1 := chunk("src", 2, 500, line("/a", 0))
	h.send(a1)
	h.send(b1)
	h.send(a2)
	h.eventually("4 lines", func(s aggregate.Stats) bool { return s.Lines == 4 })

	h.clk.Advance(interval - time.Nanosecond)
	if keys, hits := h.buf.Pending(); keys != 0 || hits != 0 {
		t.Fatalf("before the interval: %d keys %d hits pending, want none", keys, hits)
	}
	if cps := checkpoints(t, h.buf); len(cps) != 0 {
		t.Fatalf("before the interval: checkpoints %+v stored", cps)
	}
	if h.agg.Stats().Commits != 0 {
		t.Fatal("committed before the interval")
	}

	h.clk.Advance(time.Nanosecond)
	h.eventually("a commit", func(s aggregate.Stats) bool { return s.Commits == 1 })
	wantOffsets(t, checkpoints(t, h.buf), map[uint64]int64{1: a2.Checkpoint.Offset, 2: b1.Checkpoint.Offset})
	wantCounts(t, drain(t, h.buf), map[hitKey]uint64{key("/a", 0): 2, key("/b", 0): 1, key("/a", 1): 1})
	if s := h.agg.Stats(); s.Hits != 4 || s.Malformed != 0 {
		t.Errorf("stats %+v, want 4 hits", s)
	}

	// The timer is armed again: the next interval commits the next chunk.
	a3 := chunk("src", 1, a2.Checkpoint.Offset, line("/c", 2))
	h.send(a3)
	h.tick()
	wantOffsets(t, checkpoints(t, h.buf), map[uint64]int64{1: a3.Checkpoint.Offset, 2: b1.Checkpoint.Offset})
	wantCounts(t, drain(t, h.buf), map[hitKey]uint64{key("/c", 2): 1})
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
}

// Holding nothing, Run arms no timer (a quiet log wakes nothing) and is
// alive: LastBeat is the clock's now. A chunk arms the commit tick again,
// due one interval after it.
func TestRestsWithoutATimerWhileHoldingNothing(t *testing.T) {
	h := start(t, buffer.Options{}, 0)
	restsAlive := func(when string) {
		t.Helper()
		if !testenv.Until(10*time.Second, func() bool { return h.clk.Waiters() == 0 && h.agg.LastBeat().Equal(h.clk.Now()) }) {
			t.Fatalf("%s: %d timers pending, LastBeat %v at %v; want none, and now", when, h.clk.Waiters(), h.agg.LastBeat(), h.clk.Now())
		}
	}
	restsAlive("at start")
	h.clk.Advance(time.Hour)
	restsAlive("an hour on")
	h.send(chunk("src", 1, 0, line("/a", 0)))
	h.blockUntil(1) // the commit tick
	h.clk.Advance(interval)
	h.eventually("a commit", func(s aggregate.Stats) bool { return s.Commits == 1 })
	restsAlive("after the commit")
	wantCounts(t, drain(t, h.buf), map[hitKey]uint64{key("/a", 0): 1})
}

func TestClosedInputCommitsWhatIsHeld(t *testing.T) {
	h := start(t, buffer.Options{}, 0)
	c := chunk("src", 7, 0, line("/a", 0), line("/a", 0))
	h.send(c)
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	if s := h.agg.Stats(); s.Commits != 1 || s.Hits != 2 {
		t.Errorf("stats %+v, want 1 commit of 2 hits", s)
	}
	wantOffsets(t, checkpoints(t, h.buf), map[uint64]int64{7: c.Checkpoint.Offset})
	wantCounts(t, drain(t, h.buf), map[hitKey]uint64{key("/a", 0): 2})
}

func TestCancelCommitsWhatIsHeld(t *testing.T) {
	buf := testenv.OpenBuffer(t, filepath.Join(t.TempDir(), "buffer.db"), buffer.Options{})
	p, _ := parser.New(parser.Config{Format: "combined", Site: "s"})
	in := make(chan stream.Chunk)
	agg, err := aggregate.New(aggregate.Config{
		Buffer: buf, Parsers: map[string]*parser.Parser{"src": p}, CommitInterval: interval, Clock: clock.NewFake(t0),
	}, in)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- agg.Run(ctx) }()
	c := chunk("src", 7, 0, line("/a", 0))
	in <- c
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	wantOffsets(t, checkpoints(t, buf), map[uint64]int64{7: c.Checkpoint.Offset})
	wantCounts(t, drain(t, buf), map[hitKey]uint64{key("/a", 0): 1})
}

func TestDoneChunkDeletesCheckpoint(t *testing.T) {
	h := start(t, buffer.Options{}, 0)
	a := chunk("src", 1, 0, line("/a", 0))
	b := chunk("src", 2, 0, line("/b", 0))
	h.send(a)
	h.send(b)
	h.tick()
	wantOffsets(t, checkpoints(t, h.buf), map[uint64]int64{1: a.Checkpoint.Offset, 2: b.Checkpoint.Offset})

	// File 1 is finished; file 2 gets a last line and is finished in the
	// same interval: its counts are committed and its checkpoint deleted.
	done1 := stream.Chunk{Checkpoint: a.Checkpoint, Start: a.Checkpoint.Offset, Done: true}
	b2 := chunk("src", 2, b.Checkpoint.Offset, line("/b", 1))
	done2 := stream.Chunk{Checkpoint: b2.Checkpoint, Start: b2.Checkpoint.Offset, Done: true}
	h.send(done1)
	h.send(b2)
	h.send(done2)
	h.eventually("3 lines", func(s aggregate.Stats) bool { return s.Lines == 3 })
	if n := len(checkpoints(t, h.buf)); n != 2 {
		t.Fatalf("%d checkpoints before the tick, want 2", n)
	}
	h.tick()
	if cps := checkpoints(t, h.buf); len(cps) != 0 {
		t.Fatalf("checkpoints %+v left after Done chunks", cps)
	}
	wantCounts(t, drain(t, h.buf), map[hitKey]uint64{key("/a", 0): 1, key("/b", 0): 1, key("/b", 1): 1})
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
}

func TestMalformedAndTooLongLinesAreCountedAndPassed(t *testing.T) {
	h := start(t, buffer.Options{}, 0)
	c := chunk("src", 1, 0, line("/a", 0), "garbage", "", `1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET /x HTTP/1.1" 999 1 "-" "-"`, line("/a", 0))
	skip := stream.Chunk{
		Checkpoint: c.Checkpoint, Start: c.Checkpoint.Offset, Skipped: 2,
	}
	skip.Checkpoint.Offset += 300000
	bad := chunk("src", 1, skip.Checkpoint.Offset, "still garbage")
	h.send(c)
	h.send(skip)
	h.send(bad)
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	want := aggregate.Stats{Lines: 6, Hits: 2, Malformed: 4, TooLong: 2, Commits: 1}
	want.Outcomes[parser.MalformedEmpty] = 1  // ""
	want.Outcomes[parser.MalformedFields] = 2 // "garbage", "still garbage"
	want.Outcomes[parser.MalformedStatus] = 1 // 999
	want.BySource = map[string]aggregate.SourceStats{"src": {Lines: 6, Hits: 2}}
	want.HitsBySite = map[string]uint64{"s": 2}
	// Both hits: status 200, 100 bytes, user agent "Mozilla/5.0" (suspect:
	// no comment, no product), no response time.
	want.Measures[measure.Views], want.Measures[measure.Status2xx] = 2, 2
	want.Measures[measure.BotSuspect], want.Measures[measure.Bytes] = 2, 200
	if s := h.agg.Stats(); !reflect.DeepEqual(s, want) {
		t.Errorf("stats %+v, want %+v", s, want)
	}
	wantOffsets(t, checkpoints(t, h.buf), map[uint64]int64{1: bad.Checkpoint.Offset})
	wantCounts(t, drain(t, h.buf), map[hitKey]uint64{key("/a", 0): 2})
}

func TestSamePageAndSecondSumIntoOneKey(t *testing.T) {
	h := start(t, buffer.Options{}, 0)
	h.send(chunk("src", 1, 0, line("/a", 0), line("/a", 0), line("/a", 1), line("/b", 0), line("/a", 0)))
	h.send(chunk("src", 2, 0, line("/a", 0), line("/a?q=1", 1)))
	h.tick()
	// Summed again in the buffer across commits.
	h.send(chunk("src", 3, 0, line("/a", 0)))
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	wantCounts(t, drain(t, h.buf), map[hitKey]uint64{key("/a", 0): 5, key("/a", 1): 2, key("/b", 0): 1})
}

func TestMaxKeysForcesCommit(t *testing.T) {
	h := start(t, buffer.Options{}, 3)
	h.send(chunk("src", 1, 0, line("/a", 0), line("/b", 0), line("/a", 0)))
	h.send(chunk("src", 1, 0, line("/a", 0))) // no new key: still 2
	h.eventually("4 lines", func(s aggregate.Stats) bool { return s.Lines == 4 })
	if s := h.agg.Stats(); s.Commits != 0 {
		t.Fatalf("committed with 2 keys of 3: %+v", s)
	}
	c := chunk("src", 2, 0, line("/c", 0))
	h.send(c)
	h.eventually("a commit without the clock", func(s aggregate.Stats) bool { return s.Commits == 1 })
	if keys, hits := h.buf.Pending(); keys != 3 || hits != 5 {
		t.Errorf("pending %d keys %d hits, want 3 and 5", keys, hits)
	}
	if _, ok := checkpoints(t, h.buf)[2]; !ok {
		t.Error("forced commit without the checkpoint of its chunk")
	}
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
}

func TestFullBufferStopsReadingUntilSpaceIsFreed(t *testing.T) {
	h := start(t, buffer.Options{MaxSize: 1}, 0)
	a := chunk("src", 1, 0, line("/a", 0))
	b := chunk("src", 1, a.Checkpoint.Offset, line("/b", 0))
	h.send(a)
	h.tick() // the buffer is now full
	if !h.buf.Full() {
		t.Fatal("buffer not full after a commit")
	}
	// Run waits for space on the clock (one timer: the wait; holding
	// nothing, it has no commit tick) and reads nothing.
	h.blockUntil(1)
	h.refused(b)
	paused := h.agg.BufferFull()
	if paused.IsZero() || paused.After(h.clk.Now()) {
		t.Errorf("BufferFull while reading is paused: %v, want a time up to %v", paused, h.clk.Now())
	}
	// An interval with the buffer still full: still waiting.
	h.clk.Advance(interval)
	h.blockUntil(1)
	h.refused(b)

	// The flusher seals and acknowledges: space again, but Run only looks
	// at its next wake-up.
	if _, err := h.buf.Seal(buffer.Seal{}); err != nil {
		t.Fatal(err)
	}
	h.refused(b)
	var batch *buffer.Batch
	var got uint64
	h.buf.View(func(tx *buffer.ReadTx) error {
		batch = tx.Sealed()
		return tx.ScanBatch(batch.ID, nil, func(_ []byte, v *measure.Vector) bool { got += v[measure.Views]; return true })
	})
	if got != 1 {
		t.Fatalf("sealed batch holds %d hits, want 1", got)
	}
	if err := h.buf.Ack(batch.ID); err != nil {
		t.Fatal(err)
	}
	h.refused(b)
	if got := h.agg.BufferFull(); !got.Equal(paused) {
		t.Errorf("BufferFull an interval on: %v, want still %v", got, paused)
	}
	h.clk.Advance(interval)
	h.send(b)
	// The pause ended: zero, or, when the tick that fired meanwhile
	// committed b and filled the buffer again, a new pause begun now.
	if got := h.agg.BufferFull(); !got.IsZero() && !got.After(paused) {
		t.Errorf("BufferFull once reading resumed: %v, want zero or after %v", got, paused)
	}
	// Cancelling stops Run whether or not it is waiting.
	h.cancel()
	if err := h.wait(); err != nil {
		t.Fatal(err)
	}
	wantOffsets(t, checkpoints(t, h.buf), map[uint64]int64{1: b.Checkpoint.Offset})
	wantCounts(t, drain(t, h.buf), map[hitKey]uint64{key("/b", 0): 1})
}

func TestFullBufferCancelStopsRun(t *testing.T) {
	h := start(t, buffer.Options{MaxSize: 1}, 0)
	a := chunk("src", 1, 0, line("/a", 0))
	h.send(a)
	h.tick()
	h.blockUntil(1) // waiting for space
	h.cancel()
	if err := h.wait(); err != nil {
		t.Fatal(err)
	}
	wantOffsets(t, checkpoints(t, h.buf), map[uint64]int64{1: a.Checkpoint.Offset})
}

// While the buffer is full Run does not see its input closing; it returns
// once space is freed.
func TestFullBufferClosedInputReturnsWhenSpaceIsFreed(t *testing.T) {
	h := start(t, buffer.Options{MaxSize: 1}, 0)
	h.send(chunk("src", 1, 0, line("/a", 0)))
	h.tick()
	h.blockUntil(1)
	close(h.in)
	wantCounts(t, drain(t, h.buf), map[hitKey]uint64{key("/a", 0): 1})
	h.clk.Advance(interval)
	if err := h.wait(); err != nil {
		t.Fatal(err)
	}
}

func TestUnencodableCheckpointStopsRunWithoutItsCounts(t *testing.T) {
	h := start(t, buffer.Options{}, 0)
	good := chunk("src", 1, 0, line("/a", 0))
	bad := chunk("src", 1, good.Checkpoint.Offset, line("/b", 0))
	bad.Checkpoint.FPLen = stream.FingerprintSize + 1
	h.send(good)
	h.send(bad)
	if err := h.wait(); err == nil || !strings.Contains(err.Error(), "/logs/1.log") {
		t.Fatalf("Run returned %v, want an error naming the file", err)
	}
	wantOffsets(t, checkpoints(t, h.buf), map[uint64]int64{1: good.Checkpoint.Offset})
	wantCounts(t, drain(t, h.buf), map[hitKey]uint64{key("/a", 0): 1})
}

func TestUnknownSourceIsNotCheckpointed(t *testing.T) {
	h := start(t, buffer.Options{}, 0)
	known := chunk("src", 1, 0, line("/a", 0))
	h.send(chunk("other", 2, 0, line("/x", 0)))
	h.send(known)
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	wantOffsets(t, checkpoints(t, h.buf), map[uint64]int64{1: known.Checkpoint.Offset})
	wantCounts(t, drain(t, h.buf), map[hitKey]uint64{key("/a", 0): 1})
}

func TestNewRejectsBadConfig(t *testing.T) {
	buf := testenv.OpenBuffer(t, filepath.Join(t.TempDir(), "buffer.db"), buffer.Options{})
	if _, err := aggregate.New(aggregate.Config{CommitInterval: interval}, nil); err == nil {
		t.Error("New without a buffer succeeded")
	}
	if _, err := aggregate.New(aggregate.Config{Buffer: buf}, nil); err == nil {
		t.Error("New without a commit interval succeeded")
	}
}

func TestHoldUntilStartHoldsBackCommits(t *testing.T) {
	h := startWith(t, buffer.Options{}, 0, func(c *aggregate.Config) { c.HoldUntilStart = true })
	c := chunk("src", 1, 0, line("/a", 0))
	h.send(c)
	h.eventually("1 line", func(s aggregate.Stats) bool { return s.Lines == 1 })
	h.blockUntil(1)
	h.clk.Advance(interval)
	h.blockUntil(1) // the timer is armed again: the tick was handled
	if s := h.agg.Stats(); s.Commits != 0 {
		t.Fatalf("committed before ready: %+v", s)
	}
	if cps := checkpoints(t, h.buf); len(cps) != 0 {
		t.Fatalf("checkpoints stored before ready: %+v", cps)
	}
	h.send(aggregate.StartMarker())
	h.tick()
	wantOffsets(t, checkpoints(t, h.buf), map[uint64]int64{1: c.Checkpoint.Offset})
	wantCounts(t, drain(t, h.buf), map[hitKey]uint64{key("/a", 0): 1})
}

func TestPageLimitAndFilters(t *testing.T) {
	pc := parser.Config{Format: "combined", Site: "s", Filter: parser.FilterConfig{Status: []string{"2xx"}}}
	pc.Page.MaxPagesPerMinute = 1
	p, err := parser.New(pc)
	if err != nil {
		t.Fatal(err)
	}
	h := startWith(t, buffer.Options{}, 0, func(c *aggregate.Config) {
		c.Parsers = map[string]*parser.Parser{"src": p}
	})
	notFound := strings.Replace(line("/missing", 0), " 200 ", " 404 ", 1)
	h.send(chunk("src", 1, 0, line("/a", 0), line("/b", 1), line("/c", 2), line("/a", 3), notFound))
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	s := h.agg.Stats()
	if s.Hits != 4 || s.Filtered != 1 || s.Other != 2 || s.Outcomes[parser.FilteredStatus] != 1 {
		t.Fatalf("stats %+v: want 4 hits, 1 filtered (status), 2 counted as (other)", s)
	}
	wantCounts(t, drain(t, h.buf), map[hitKey]uint64{
		key("/a", 0): 1, key("/a", 3): 1, key("(other)", 1): 1, key("(other)", 2): 1,
	})
}

func TestMalformedLinesAreLoggedThenRateLimited(t *testing.T) {
	var logs syncbuf.Buffer
	h := startWith(t, buffer.Options{}, 0, func(c *aggregate.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	bad := make([]string, 12)
	for i := range bad {
		bad[i] = "garbage " + strconv.Itoa(i)
	}
	c := chunk("src", 1, 0, bad...)
	h.send(c)
	h.eventually("12 lines", func(s aggregate.Stats) bool { return s.Lines == 12 })
	if n := strings.Count(logs.String(), "malformed line skipped"); n != 5 {
		t.Fatalf("%d malformed lines logged at once, want the first 5:\n%s", n, logs.String())
	}
	h.clk.Advance(time.Minute)
	h.send(chunk("src", 1, c.Checkpoint.Offset, "garbage 12", "garbage 13"))
	h.eventually("14 lines", func(s aggregate.Stats) bool { return s.Lines == 14 })
	out := logs.String()
	if n := strings.Count(out, "malformed line skipped"); n != 6 {
		t.Fatalf("%d malformed lines logged after a minute, want 6:\n%s", n, out)
	}
	if !strings.Contains(out, `reason="malformed: bad fields" not_logged_since_last=7`) || strings.Contains(out, "garbage") {
		t.Fatalf("the line logged after a minute does not say 7 were not logged:\n%s", out)
	}
}

// An archive's chunks (a replay's) parse with a source added while running,
// move the ledger and never the stored checkpoints; a followed file's
// chunks move both. With KeepLastCommit the last-commit time stays.
func TestArchiveChunksMoveOnlyTheLedger(t *testing.T) {
	h := startWith(t, buffer.Options{}, 0, func(c *aggregate.Config) { c.KeepLastCommit = true })
	p, err := parser.New(parser.Config{Format: "combined", Site: "s", Since: t0.Add(2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.agg.AddSource("src", p); err == nil {
		t.Error("AddSource took the name of a configured source")
	}
	if err := h.agg.AddSource("replay", p); err != nil {
		t.Fatal(err)
	}
	arc := chunk("replay", 0, 0, line("/a", 1), line("/a", 2), line("/b", 3))
	arc.Archive = true
	arc.Checkpoint.File = stream.FileID{}
	arc.Checkpoint.FPLen, arc.Checkpoint.FPSum = 10, 99
	h.send(arc)
	live := chunk("src", 7, 0, line("/c", 1))
	live.Checkpoint.FPLen, live.Checkpoint.FPSum = 20, 42
	h.send(live)
	h.tick()
	h.agg.RemoveSource("replay")
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	var cps map[string][]byte
	var led map[string]stream.Entry
	var last time.Time
	err = h.buf.View(func(tx *buffer.ReadTx) (err error) {
		cps, last = tx.Checkpoints(), tx.LastCommit()
		led, err = tx.Ledger([]string{stream.LedgerKey(10, 99), stream.LedgerKey(20, 42)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 1 {
		t.Errorf("%d stored checkpoints, want the followed file's only", len(cps))
	}
	if e := led[stream.LedgerKey(10, 99)]; e.Offset != arc.Checkpoint.Offset || e.Source != "replay" {
		t.Errorf("archive's ledger entry %+v", e)
	}
	if e := led[stream.LedgerKey(20, 42)]; e.Offset != live.Checkpoint.Offset {
		t.Errorf("followed file's ledger entry %+v", e)
	}
	if !last.IsZero() {
		t.Errorf("last commit moved to %v", last)
	}
	got := drain(t, h.buf)
	want := map[hitKey]uint64{key("/a", 2): 1, key("/b", 3): 1, key("/c", 1): 1} // /a at 1 is before Since
	if !reflect.DeepEqual(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	if n := h.agg.Stats().Outcomes[parser.FilteredWindow]; n != 1 {
		t.Errorf("%d lines filtered by the window, want 1", n)
	}
}

// A malformed line's contents never reach the log at the default level:
// reason, file, offset and length do. At debug level a second record shows
// its first 32 bytes, escaped.
func TestMalformedLineContentsNotLogged(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var logs syncbuf.Buffer
		h := startWith(t, buffer.Options{}, 0, func(c *aggregate.Config) {
			c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level}))
		})
		secret := "root:\x01$y$j9T$SECRETHASH:19000:0:99999:7:::" + strings.Repeat("S", 40)
		h.send(chunk("src", 1, 0, "ok", secret))
		h.eventually("2 lines", func(s aggregate.Stats) bool { return s.Lines == 2 })
		if err := h.close(); err != nil {
			t.Fatal(err)
		}
		out := logs.String()
		if !strings.Contains(out, "offset=3 length=82 reason=") {
			t.Errorf("%v: the malformed line's offset and length are not logged:\n%s", level, out)
		}
		switch level {
		case slog.LevelInfo:
			if strings.Contains(out, "SECRETHASH") || strings.Contains(out, "root:") {
				t.Errorf("the line's contents are logged at %v:\n%s", level, out)
			}
		case slog.LevelDebug:
			if !strings.Contains(out, `prefix=root:\x01$y$j9T$SECRETHASH:19000:0:...`) || strings.Contains(out, "SSS") {
				t.Errorf("debug: want the first 32 bytes only:\n%s", out)
			}
		}
	}
}

// site = "{host}" with max_sites: 300 hosts make at most max_sites sites
// and "(other)", every hit counted once, the folded hits in Stats and a
// warning logged once without naming a host.
func TestMaxSitesBoundsSites(t *testing.T) {
	const maxSites, hosts = 5, 300
	var logs syncbuf.Buffer
	p, err := parser.New(parser.Config{Format: "vhost_combined", Site: parser.SiteFromLine, MaxSites: maxSites})
	if err != nil {
		t.Fatal(err)
	}
	h := startWith(t, buffer.Options{}, 0, func(c *aggregate.Config) {
		c.Parsers = map[string]*parser.Parser{"src": p}
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	var ls []string
	for i := range hosts {
		ls = append(ls, fmt.Sprintf("h%03d.random.test:80 %s", i, line("/a", i%60)))
	}
	h.send(chunk("src", 1, 0, ls[:150]...))
	h.send(chunk("src", 1, 0, ls[150:]...))
	h.eventually("300 hits", func(s aggregate.Stats) bool { return s.Hits == hosts })
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	if s := h.agg.Stats(); s.SitesFolded != hosts-maxSites {
		t.Errorf("SitesFolded = %d, want %d", s.SitesFolded, hosts-maxSites)
	}
	bySite := map[string]uint64{}
	var total uint64
	for k, n := range drain(t, h.buf) {
		bySite[k.site] += n
		total += n
	}
	if total != hosts || len(bySite) != maxSites+1 || bySite["(other)"] != hosts-maxSites {
		t.Errorf("%d hits over %d sites %v, want %d over %d sites, %d of them (other)", total, len(bySite), bySite, hosts, maxSites+1, hosts-maxSites)
	}
	out := logs.String()
	if n := strings.Count(out, "max_sites reached"); n != 1 || strings.Contains(out, "h299") {
		t.Errorf("want one warning naming no host:\n%s", out)
	}
}

// A followed file shrunk in place (the tailer's Shrunk chunk) lowers its
// stream's ledger entry, also when the lines after the cut are in the same
// commit: the tailer's max(checkpoint, ledger) at the next start must not
// skip them.
func TestShrunkChunkLowersTheLedger(t *testing.T) {
	h := startWith(t, buffer.Options{}, 0, nil)
	first := chunk("src", 7, 0, line("/a", 1), line("/a", 2), line("/b", 3))
	first.Checkpoint.FPLen, first.Checkpoint.FPSum = 20, 42
	h.send(first)
	h.tick()
	cut := first.Checkpoint
	cut.Offset = int64(len(line("/a", 1)))
	h.send(stream.Chunk{Checkpoint: cut, Start: cut.Offset, Shrunk: true})
	after := chunk("src", 7, cut.Offset, line("/c", 4))
	after.Checkpoint.FPLen, after.Checkpoint.FPSum = 20, 42
	h.send(after)
	h.tick()
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	var led map[string]stream.Entry
	err := h.buf.View(func(tx *buffer.ReadTx) (err error) {
		led, err = tx.Ledger([]string{stream.LedgerKey(20, 42)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if e := led[stream.LedgerKey(20, 42)]; e.Offset != after.Checkpoint.Offset || e.Offset >= first.Checkpoint.Offset {
		t.Errorf("ledger entry at %d after the shrink, want %d (the stream was counted to %d before the cut)",
			e.Offset, after.Checkpoint.Offset, first.Checkpoint.Offset)
	}
}

// A barrier commits what Run holds at once, before the commit tick, once
// every chunk before it is added, and answers nil; once Run has stopped
// it is not read, and Stopped tells the sender so.
func TestBarrierCommitsBeforeTheTick(t *testing.T) {
	h := start(t, buffer.Options{}, 0)
	c := chunk("src", 1, 0, line("/a", 0), line("/b", 0))
	h.send(c)
	h.eventually("2 lines", func(s aggregate.Stats) bool { return s.Lines == 2 })
	barrier := func() error {
		t.Helper()
		b, done := aggregate.Barrier()
		h.send(b)
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("the barrier was not answered")
			return nil
		}
	}
	if err := barrier(); err != nil {
		t.Fatalf("barrier: %v", err)
	}
	if s := h.agg.Stats(); s.Commits != 1 {
		t.Fatalf("%d commits after the barrier, want 1", s.Commits)
	}
	wantOffsets(t, checkpoints(t, h.buf), map[uint64]int64{1: c.Checkpoint.Offset})
	wantCounts(t, drain(t, h.buf), map[hitKey]uint64{key("/a", 0): 1, key("/b", 0): 1})
	// Holding nothing, it commits nothing and still answers.
	if err := barrier(); err != nil {
		t.Fatalf("barrier holding nothing: %v", err)
	}
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.agg.Stopped():
	default:
		t.Error("Run stopped, Stopped not closed: a barrier's sender would wait")
	}
}
