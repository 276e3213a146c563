package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
)

// watched starts watchBuffer on a real buffer in a temp dir with a fake
// clock. It returns the pipeline, the clock, the log and Run's result.
func watched(t *testing.T, every time.Duration) (*Pipeline, *clock.Fake, *syncbuf.Buffer, <-chan error) {
	t.Helper()
	buf := testenv.OpenBuffer(t, filepath.Join(t.TempDir(), "state", "buffer.db"), buffer.Options{})
	logs := &syncbuf.Buffer{}
	clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	p := &Pipeline{cfg: Config{Clock: clk}, buf: buf, log: slog.New(slog.NewTextHandler(logs, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	done, finished := make(chan error, 1), make(chan struct{})
	go func() { done <- p.watchBuffer(ctx, every); close(finished) }()
	t.Cleanup(func() { cancel(); <-finished })
	return p, clk, logs, done
}

// tick advances the clock by every once watchBuffer waits on it.
func tick(clk *clock.Fake, every time.Duration) {
	clk.BlockUntil(1)
	clk.Advance(every)
}

func noResult(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("watchBuffer returned %v with the buffer file in place", err)
	case <-time.After(50 * time.Millisecond):
	}
}

func wantReplaced(t *testing.T, p *Pipeline, logs *syncbuf.Buffer, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if !errors.Is(err, ErrBufferReplaced) || !strings.Contains(err.Error(), p.buf.Path()) {
			t.Fatalf("watchBuffer = %v, want ErrBufferReplaced naming the path", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watchBuffer did not notice the buffer file was gone")
	}
	l := logs.String()
	if !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "buffer file deleted or replaced while running") ||
		!strings.Contains(l, "path="+p.buf.Path()) {
		t.Errorf("no ERROR naming the path logged:\n%s", l)
	}
}

func TestWatchBufferNoticesDeletion(t *testing.T) {
	const every = time.Second
	p, clk, logs, done := watched(t, every)
	tick(clk, every)
	tick(clk, every)
	noResult(t, done)

	if err := os.Remove(p.buf.Path()); err != nil {
		t.Fatal(err)
	}
	tick(clk, every)
	wantReplaced(t, p, logs, done)
}

func TestWatchBufferNoticesReplacement(t *testing.T) {
	const every = time.Second
	p, clk, logs, done := watched(t, every)
	// A file written elsewhere and renamed over the path, as a restore
	// from backup does.
	other := filepath.Join(filepath.Dir(p.buf.Path()), "other")
	if err := os.WriteFile(other, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, p.buf.Path()); err != nil {
		t.Fatal(err)
	}
	tick(clk, every)
	wantReplaced(t, p, logs, done)
}

// The check is made only when the clock says so, not before.
func TestWatchBufferWaitsForTheClock(t *testing.T) {
	const every = 5 * time.Second
	p, clk, _, done := watched(t, every)
	if err := os.Remove(p.buf.Path()); err != nil {
		t.Fatal(err)
	}
	clk.BlockUntil(1)
	clk.Advance(every - time.Millisecond)
	noResult(t, done)
	clk.Advance(time.Millisecond)
	select {
	case err := <-done:
		if !errors.Is(err, ErrBufferReplaced) {
			t.Fatalf("watchBuffer = %v, want ErrBufferReplaced", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watchBuffer did not notice the buffer file was gone")
	}
}

func TestWatchBufferStopsWithContext(t *testing.T) {
	buf := testenv.OpenBuffer(t, filepath.Join(t.TempDir(), "buffer.db"), buffer.Options{})
	p := &Pipeline{cfg: Config{Clock: clock.NewFake(time.Now())}, buf: buf, log: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.watchBuffer(ctx, time.Second); err != nil {
		t.Fatalf("watchBuffer after cancel = %v, want nil", err)
	}
}
