package tailer

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/stream"
)

// waitLimit bounds every wait for an event.
const waitLimit = 10 * time.Second

// harness runs a Tailer and collects what it sends.
type harness struct {
	t      *testing.T
	cfg    Config
	tl     *Tailer
	clk    *clock.Fake // nil with the real clock
	cancel context.CancelFunc
	ran    chan error
	recv   chan struct{} // collector exited

	mu      sync.Mutex
	chunks  []stream.Chunk
	notify  chan struct{}
	barrier chan chan struct{} // collected's requests
}

// fakeClock returns a Fake clock for tests.
func fakeClock() *clock.Fake { return clock.NewFake(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)) }

// start runs a Tailer with cfg; Run must return nil when the test stops it.
func start(t *testing.T, cfg Config) *harness {
	t.Helper()
	out := make(chan stream.Chunk)
	tl, err := New(cfg, out)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, cfg: tl.cfg, tl: tl, cancel: cancel, ran: make(chan error, 1), recv: make(chan struct{}), notify: make(chan struct{}, 1), barrier: make(chan chan struct{})}
	if f, ok := cfg.Clock.(*clock.Fake); ok {
		h.clk = f
	}
	go func() { h.ran <- tl.Run(ctx) }()
	runDone := make(chan struct{})
	go func() {
		defer close(h.recv)
		for {
			select {
			case c := <-out:
				h.mu.Lock()
				h.chunks = append(h.chunks, c)
				h.mu.Unlock()
				select {
				case h.notify <- struct{}{}:
				default:
				}
			case done := <-h.barrier:
				close(done)
			case <-runDone:
				return
			}
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-h.ran:
				if err != nil {
					t.Errorf("Run returned %v, want nil", err)
				}
			case <-time.After(waitLimit):
				t.Fatalf("Run did not return after cancel")
			}
			close(runDone)
			<-h.recv
		})
	}
	h.cancel = stop
	t.Cleanup(stop)
	return h
}

// stop cancels Run, waits for it and returns everything sent.
func (h *harness) stop() []stream.Chunk {
	h.cancel()
	return h.got()
}

// collected waits until the collector holds every chunk sent so far: a
// chunk whose send has returned (the Tailer went on, to wait on the clock
// say) is in got once collected returns.
func (h *harness) collected() {
	h.t.Helper()
	done := make(chan struct{})
	select {
	case h.barrier <- done:
		<-done
	case <-time.After(waitLimit):
		h.t.Fatal("the collector does not answer")
	}
}

func (h *harness) got() []stream.Chunk {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]stream.Chunk(nil), h.chunks...)
}

// waitFor waits until cond holds for the chunks so far, moving a fake clock
// on by PollInterval while it waits.
func (h *harness) waitFor(what string, cond func([]stream.Chunk) bool) []stream.Chunk {
	h.t.Helper()
	deadline := time.After(waitLimit)
	for {
		if got := h.got(); cond(got) {
			return got
		}
		select {
		case <-h.notify:
		case <-time.After(2 * time.Millisecond):
			if h.clk != nil {
				h.clk.Advance(h.cfg.PollInterval)
			}
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; got %d chunks:\n%s", what, len(h.got()), dump(h.got()))
		}
	}
}

// settle waits until n goroutines wait on the fake clock (every follower
// and the rescan timer), so nothing reads until the clock moves.
func (h *harness) settle(n int) {
	h.t.Helper()
	done := make(chan struct{})
	go func() { h.clk.BlockUntil(n); close(done) }()
	select {
	case <-done:
	case <-time.After(waitLimit):
		h.t.Fatalf("timed out waiting for %d clock waiters (have %d)", n, h.clk.Waiters())
	}
}

// tick moves the fake clock one poll on and waits until n waiters are back.
func (h *harness) tick(n int) {
	h.t.Helper()
	h.clk.Advance(h.cfg.PollInterval)
	h.settle(n)
}

func dump(cs []stream.Chunk) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "  file=%v path=%s start=%d off=%d len=%d skipped=%d done=%v\n",
			c.Checkpoint.File, c.Checkpoint.Path, c.Start, c.Checkpoint.Offset, len(c.Data), c.Skipped, c.Done)
	}
	return b.String()
}

// lineAt is a line of the test logs; tag and i make it unique.
func lineAt(tag string, i int) string {
	return fmt.Sprintf("%s %06d 10.0.0.%d GET /page/%d HTTP/1.1 200", tag, i, i%250, i)
}

// appendLines appends lines [from, to) to path, creating it if needed.
func appendLines(t *testing.T, path, tag string, from, to int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	writeLines(t, f, tag, from, to)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeLines(t *testing.T, f *os.File, tag string, from, to int) {
	t.Helper()
	var b bytes.Buffer
	for i := from; i < to; i++ {
		b.WriteString(lineAt(tag, i))
		b.WriteByte('\n')
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
}

func want(tag string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, lineAt(tag, i))
	}
	return out
}

func idOf(t *testing.T, path string) stream.FileID {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	id, _, ok := statID(st)
	if !ok {
		t.Fatal("no file id")
	}
	return id
}

// linesOf returns the lines sent for file id, in order.
func linesOf(cs []stream.Chunk, id stream.FileID) []string {
	var out []string
	for i := range cs {
		if cs[i].Checkpoint.File != id {
			continue
		}
		cs[i].Lines(func(line []byte, _ int64) { out = append(out, string(line)) })
	}
	return out
}

// allLines returns every line sent, in order.
func allLines(cs []stream.Chunk) []string {
	var out []string
	for i := range cs {
		cs[i].Lines(func(line []byte, _ int64) { out = append(out, string(line)) })
	}
	return out
}

func countLines(n int) func([]stream.Chunk) bool {
	return func(cs []stream.Chunk) bool { return len(allLines(cs)) >= n }
}

func hasDone(id stream.FileID) func([]stream.Chunk) bool {
	return func(cs []stream.Chunk) bool { return doneIndex(cs, id) >= 0 }
}

func doneIndex(cs []stream.Chunk, id stream.FileID) int {
	for i, c := range cs {
		if c.Done && c.Checkpoint.File == id {
			return i
		}
	}
	return -1
}

// lastCheckpoint returns the checkpoint of the last chunk for id.
func lastCheckpoint(t *testing.T, cs []stream.Chunk, id stream.FileID) stream.Checkpoint {
	t.Helper()
	for i := len(cs) - 1; i >= 0; i-- {
		if cs[i].Checkpoint.File == id {
			return cs[i].Checkpoint
		}
	}
	t.Fatalf("no chunk for %v", id)
	return stream.Checkpoint{}
}

// roundTrip stores and loads a checkpoint as the buffer would.
func roundTrip(t *testing.T, cp stream.Checkpoint) stream.Checkpoint {
	t.Helper()
	b, err := cp.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var out stream.Checkpoint
	if err := out.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameLines fails unless got equals want exactly (so each line once, in order).
func sameLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d lines, want %d\nfirst got: %q\nfirst want: %q", what, len(got), len(want), head(got), head(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: line %d = %q, want %q", what, i, got[i], want[i])
		}
	}
}

func head(s []string) []string {
	if len(s) > 3 {
		return s[:3]
	}
	return s
}

// checkChunks verifies the per-file invariants of a chunk stream: Data
// chunks are exactly [Start, Offset) and whole lines, each file's chunks are
// contiguous (a reset goes back), nothing follows a Done.
func checkChunks(t *testing.T, cs []stream.Chunk) {
	t.Helper()
	next := map[string]int64{}
	done := map[string]bool{}
	for i, c := range cs {
		k := c.Checkpoint.Key()
		if done[k] {
			// Only a new file with the same identity may follow, or
			// the same file followed again where it was finished (a
			// rotated file written to later: its checkpoint first).
			again := c.Start == next[k] && c.Checkpoint.Offset == c.Start && len(c.Data) == 0 && !c.Done
			if c.Start != 0 && !again {
				t.Fatalf("chunk %d for %v after its Done", i, c.Checkpoint.File)
			}
			delete(done, k)
			if !again {
				delete(next, k)
			}
		}
		switch {
		case c.Done:
			if len(c.Data) != 0 || c.Start != c.Checkpoint.Offset {
				t.Fatalf("chunk %d: bad Done chunk %+v", i, c)
			}
			done[k] = true
		case c.Skipped > 0:
			if len(c.Data) != 0 || c.Checkpoint.Offset <= c.Start {
				t.Fatalf("chunk %d: bad skip chunk", i)
			}
		default:
			if c.Start+int64(len(c.Data)) != c.Checkpoint.Offset {
				t.Fatalf("chunk %d: start %d + %d bytes != offset %d", i, c.Start, len(c.Data), c.Checkpoint.Offset)
			}
			if len(c.Data) > 0 && c.Data[len(c.Data)-1] != '\n' {
				t.Fatalf("chunk %d: data does not end in a newline", i)
			}
		}
		// A reset (an empty chunk that goes back: to 0 after a truncation,
		// to the new size of a file shrunk in place) is allowed.
		reset := len(c.Data) == 0 && c.Skipped == 0 && !c.Done && c.Start == c.Checkpoint.Offset
		if want, ok := next[k]; ok && c.Start != want && !(reset && c.Start < want) {
			t.Fatalf("chunk %d for %v starts at %d, want %d\n%s", i, c.Checkpoint.File, c.Start, want, dump(cs))
		}
		next[k] = c.Checkpoint.Offset
		wantFP := int(min(c.Checkpoint.Offset, stream.FingerprintSize))
		if !c.Done && c.Checkpoint.FPLen != wantFP {
			t.Fatalf("chunk %d: FPLen %d, want %d", i, c.Checkpoint.FPLen, wantFP)
		}
	}
}
