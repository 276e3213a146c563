package termview

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/replay"
)

const gib = 1 << 30

func TestReplayProgressPlainLineEveryFiveSeconds(t *testing.T) {
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	var out bytes.Buffer
	r := NewReplayProgress(&out, false, clk)
	p := replay.Progress{Started: start, TotalBytes: 29 * gib / 10, FilesTotal: 8, Phase: replay.PhaseReading,
		Current: "/var/log/nginx/access.log.3.gz"}

	// Every 200 ms for 12 s: 1.2 GiB and 12,345,678 lines by 5 s (all at
	// the same rate), lines at 5 s and 10 s only.
	var lines []string
	for i := 1; i <= 60; i++ {
		clk.Advance(200 * time.Millisecond)
		p.ReadBytes = int64(i) * (12 * gib / 10) / 25
		p.Lines = int64(i) * 12345678 / 25
		p.FilesDone = i / 8
		r.Update(p)
		if got := strings.Count(out.String(), "\n"); got != i/25 {
			t.Fatalf("after %v: %d lines, want %d:\n%s", clk.Now().Sub(start), got, i/25, out.String())
		}
	}
	lines = strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := "replay: 41% 1.2 GiB of 2.9 GiB, 3 of 8 files, 12,345,678 lines (2.5 M lines/s), ETA 7s, reading access.log.3.gz"
	if lines[0] != want {
		t.Errorf("first line:\n got %q\nwant %q", lines[0], want)
	}
	if !strings.HasPrefix(lines[1], "replay: 82% 2.4 GiB of 2.9 GiB, 6 of 8 files, 24,691,356 lines (2.5 M lines/s), ETA 2s,") {
		t.Errorf("second line: %q", lines[1])
	}

	// Flushing (at 14 s, 4 s after the last line: nothing yet), shown 5 s
	// after the last line.
	p.Phase, p.Current, p.ReadBytes, p.FilesDone = replay.PhaseFlushing, "", p.TotalBytes, 8
	clk.Advance(2 * time.Second)
	r.Update(p)
	if n := strings.Count(out.String(), "\n"); n != 2 {
		t.Fatalf("a line 4 s after the last one:\n%s", out.String())
	}
	clk.Advance(time.Second)
	r.Update(p)
	last := lastLine(out.String())
	if !strings.HasPrefix(last, "replay: 100% 2.9 GiB of 2.9 GiB, 8 of 8 files,") || !strings.HasSuffix(last, waitingForAck) {
		t.Errorf("flushing line: %q", last)
	}

	// Finish prints the last state at once; later updates print nothing.
	p.Phase = replay.PhaseDone
	clk.Advance(time.Second)
	r.Finish(p)
	if last := lastLine(out.String()); !strings.HasSuffix(last, ", done in 16s") {
		t.Errorf("finish line: %q", last)
	}
	n := len(out.String())
	clk.Advance(time.Minute)
	r.Update(p)
	r.Finish(p)
	if len(out.String()) != n {
		t.Errorf("output after Finish: %q", out.String()[n:])
	}
}

func TestReplayProgressPlainShortReplayPrintsNothing(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	var out bytes.Buffer
	r := NewReplayProgress(&out, false, clk)
	p := replay.Progress{Started: clk.Now(), TotalBytes: 100, FilesTotal: 1, Phase: replay.PhaseReading}
	for range 20 {
		clk.Advance(200 * time.Millisecond)
		p.ReadBytes += 5
		r.Update(p)
	}
	p.Phase = replay.PhaseDone
	r.Finish(p)
	if out.Len() != 0 {
		t.Errorf("a 4 s replay printed %q", out.String())
	}
}

func TestReplayProgressBar(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	var out bytes.Buffer
	r := NewReplayProgress(&out, true, clk)
	p := replay.Progress{Started: clk.Now(), TotalBytes: 1000, FilesTotal: 2, Phase: replay.PhaseReading, Current: "/logs/access.log.2.gz"}
	clk.Advance(time.Second)
	p.ReadBytes, p.Lines = 410, 2000
	r.Update(p)
	got := out.String()
	for _, want := range []string{"41%", "access.log.2.gz", "0/2 files", "2.0 k lines/s", "410/1000 B"} {
		if !strings.Contains(got, want) {
			t.Errorf("bar %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "\n") {
		t.Errorf("bar wrote a newline while running: %q", got)
	}

	// Reading past the total (a growing file) stays below 100 %.
	p.ReadBytes = 1200
	r.Update(p)
	if s := lastDraw(out.String()); strings.Contains(s, "100%") {
		t.Errorf("bar at 100%% while reading: %q", s)
	}

	p.Phase, p.FilesDone, p.Current = replay.PhaseFlushing, 2, ""
	clk.Advance(3 * time.Second)
	r.Update(p)
	if s := lastDraw(out.String()); !strings.Contains(s, "100%") || !strings.Contains(s, waitingForAck+" 0s") {
		t.Errorf("flushing bar: %q", s)
	}
	clk.Advance(2 * time.Second)
	r.Update(p)
	if s := lastDraw(out.String()); !strings.Contains(s, waitingForAck+" 2s") {
		t.Errorf("flushing bar 2 s later: %q", s)
	}
	p.Phase = replay.PhaseDone
	r.Finish(p)
	if !strings.HasSuffix(out.String(), "\n") || !strings.Contains(lastDraw(out.String()), "2 of 2 files, 2,000 lines") {
		t.Errorf("finished bar: %q", lastDraw(out.String()))
	}
}

func TestReplayProgressBarZeroTotal(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	var out bytes.Buffer
	r := NewReplayProgress(&out, true, clk)
	p := replay.Progress{Started: clk.Now(), Phase: replay.PhaseReading}
	r.Update(p) // nothing known yet
	p.FilesTotal, p.Current = 1, "empty.log"
	clk.Advance(time.Second)
	r.Update(p)
	if !strings.Contains(out.String(), "0%") {
		t.Errorf("bar of 0 bytes: %q", out.String())
	}
	p.Phase, p.FilesDone = replay.PhaseDone, 1
	r.Finish(p)
	if !strings.Contains(lastDraw(out.String()), "100%") {
		t.Errorf("finished bar of 0 bytes: %q", out.String())
	}
}

func TestReplayProgressFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{humanBytes(0), "0 B"},
		{humanBytes(1023), "1023 B"},
		{humanBytes(1536), "1.5 KiB"},
		{humanBytes(29 * gib / 10), "2.9 GiB"},
		{humanRate(12), "12"},
		{humanRate(1234), "1.2 k"},
		{humanRate(850_000), "850 k"},
		{humanRate(2_100_000), "2.1 M"},
		{shortName("/var/log/access.log.3.gz"), "access.log.3.gz"},
		{shortName("/x/" + strings.Repeat("a", 20) + strings.Repeat("b", 20)), strings.Repeat("a", 15) + "…" + strings.Repeat("b", 16)},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// lastLine is s's last non-empty line.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// lastDraw is the last state a terminal shows of s: the text after its
// last carriage return (the bar redraws the line after a '\r').
func lastDraw(s string) string {
	s = strings.TrimRight(s, "\n")
	parts := strings.Split(s, "\r")
	for i := len(parts) - 1; i >= 0; i-- {
		if strings.TrimSpace(parts[i]) != "" {
			return parts[i]
		}
	}
	return ""
}

func TestIsTerminalFalseForAFile(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a regular file is a terminal")
	}
}
