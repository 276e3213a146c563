package termview

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/digits"
	"github.com/logtally/logtally/replay"
)

// progressEvery is how often the plain (not a terminal) display prints a
// line, and the first line comes only after it: a replay that ends sooner
// prints none.
const progressEvery = 5 * time.Second

// rateWindow is the span the displayed rates (lines/s, and bytes/s for the
// plain display's ETA) are averaged over.
const rateWindow = 10 * time.Second

// maxShownName is how many characters of the current file's base name are
// shown; longer names are cut in the middle.
const maxShownName = 32

// waitingForAck is what the display says while the last counts wait for
// MongoDB's acknowledgement.
const waitingForAck = "waiting for MongoDB to acknowledge…"

// ReplayProgress shows a running replay's progress (replay.Progress
// snapshots) on a writer: a progress bar (schollz/progressbar) on a
// terminal, a plain line every progressEvery otherwise. Its methods are
// safe for concurrent use.
type ReplayProgress struct {
	w   io.Writer
	tty bool
	clk clock.Clock

	mu      sync.Mutex
	samples []progressSample // over about rateWindow, oldest first
	last    time.Time        // when the last plain line was printed (or the display began)
	printed bool             // a plain line was printed
	done    bool             // Finish was called

	// terminal only
	bar     *progressbar.ProgressBar
	barMax  int64
	desc    string
	flushAt time.Time // when the flushing phase began
}

// progressSample is one Update's position, for rates.
type progressSample struct {
	at    time.Time
	bytes int64
	lines int64
}

// NewReplayProgress shows a replay's progress on w: a bar when tty, else one line every 5 s.
//
// The bar (bytes read of the total, bytes/s, elapsed and ETA) takes its own
// times from the wall clock; the description (current file, files done,
// lines/s) and the plain lines use clk.
func NewReplayProgress(w io.Writer, tty bool, clk clock.Clock) *ReplayProgress {
	now := clk.Now()
	return &ReplayProgress{w: w, tty: tty, clk: clk, last: now,
		samples: []progressSample{{at: now}}}
}

// Update shows p. It is called often (every ~200 ms) and is cheap: on a
// terminal it redraws one line; otherwise it prints only when
// progressEvery has passed since the last line.
func (r *ReplayProgress) Update(p replay.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	now := r.clk.Now()
	r.sample(now, p)
	if r.tty {
		r.drawBar(now, p)
		return
	}
	if now.Sub(r.last) < progressEvery {
		return
	}
	r.last = now
	r.printed = true
	fmt.Fprintln(r.w, r.line(now, p))
}

// Finish shows p as the last state and ends the display: the bar is
// filled, its description says how many files and lines were read, and a
// newline ends it. The plain display prints a last line only when it
// printed any before (a replay shorter than progressEvery prints nothing:
// the summary follows anyway). Updates after Finish are ignored.
func (r *ReplayProgress) Finish(p replay.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	r.done = true
	now := r.clk.Now()
	r.sample(now, p)
	if !r.tty {
		if r.printed {
			fmt.Fprintln(r.w, r.line(now, p))
		}
		return
	}
	r.ensureBar(p.TotalBytes)
	r.bar.Describe(fmt.Sprintf("replay: %s of %s files, %s lines ",
		strconv.Itoa(p.FilesDone), strconv.Itoa(p.FilesTotal), digits.Group(p.Lines)))
	if !r.bar.IsFinished() {
		r.bar.Set64(r.barMax)
	}
	io.WriteString(r.w, "\n")
}

// sample records p's position at now and drops the samples older than
// rateWindow, keeping the newest of those as the window's start.
func (r *ReplayProgress) sample(now time.Time, p replay.Progress) {
	r.samples = append(r.samples, progressSample{at: now, bytes: p.ReadBytes, lines: p.Lines})
	i := 0
	for i+1 < len(r.samples) && now.Sub(r.samples[i+1].at) >= rateWindow {
		i++
	}
	if i > 0 {
		r.samples = append(r.samples[:0], r.samples[i:]...)
	}
}

// rates returns bytes/s and lines/s over the samples' window, 0 when no
// time has passed.
func (r *ReplayProgress) rates() (bytesPerSec, linesPerSec float64) {
	first, last := r.samples[0], r.samples[len(r.samples)-1]
	dt := last.at.Sub(first.at).Seconds()
	if dt <= 0 {
		return 0, 0
	}
	return float64(last.bytes-first.bytes) / dt, float64(last.lines-first.lines) / dt
}

// line is the plain display's line for p, e.g.
//
//	replay: 41% 1.2 GiB of 2.9 GiB, 3 of 8 files, 12,345,678 lines (2.1 M lines/s), ETA 1m10s, reading access.log.3.gz
func (r *ReplayProgress) line(now time.Time, p replay.Progress) string {
	bps, lps := r.rates()
	var b strings.Builder
	fmt.Fprintf(&b, "replay: %d%% %s of %s, %d of %d files, %s lines", percent(p), humanBytes(p.ReadBytes), humanBytes(p.TotalBytes),
		p.FilesDone, p.FilesTotal, digits.Group(p.Lines))
	switch p.Phase {
	case replay.PhaseFlushing:
		b.WriteString(", " + waitingForAck)
	case replay.PhaseDone:
		if !p.Started.IsZero() {
			fmt.Fprintf(&b, ", done in %s", now.Sub(p.Started).Round(time.Second))
		} else {
			b.WriteString(", done")
		}
	default:
		fmt.Fprintf(&b, " (%s lines/s)", humanRate(lps))
		if left := p.TotalBytes - p.ReadBytes; left > 0 && bps > 0 {
			fmt.Fprintf(&b, ", ETA %s", time.Duration(float64(left)/bps*float64(time.Second)).Round(time.Second))
		}
		if p.Current != "" {
			b.WriteString(", reading " + shortName(p.Current))
		}
		if p.Waiting != "" {
			b.WriteString(", waiting: " + p.Waiting)
		}
	}
	return b.String()
}

// ensureBar creates the bar, or changes its 100 % when the total changed.
// Its maximum is at least 1: the library refuses a bar of 0.
func (r *ReplayProgress) ensureBar(total int64) {
	m := max(total, 1)
	if r.bar == nil {
		r.barMax = m
		r.bar = progressbar.NewOptions64(m,
			progressbar.OptionSetWriter(r.w),
			progressbar.OptionShowBytes(true),
			progressbar.OptionUseIECUnits(true),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30), // narrowed to fit the terminal
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionShowElapsedTimeOnFinish(),
			// Redrawn at every Update (about 5 a second): no throttle, so
			// the description and the bytes drawn together are current.
			progressbar.OptionThrottle(0),
		)
		return
	}
	if m != r.barMax && !r.bar.IsFinished() {
		r.barMax = m
		r.bar.ChangeMax64(m)
	}
}

// drawBar redraws the bar for p. While reading, the bar stays below 100 %
// (a file that grew while read can take ReadBytes past TotalBytes); it
// fills when the phase is flushing, and the description then says what is
// awaited and for how long.
func (r *ReplayProgress) drawBar(now time.Time, p replay.Progress) {
	r.ensureBar(p.TotalBytes)
	var desc string
	pos := min(p.ReadBytes, r.barMax-1)
	switch p.Phase {
	case replay.PhaseFlushing:
		if r.flushAt.IsZero() {
			r.flushAt = now
		}
		desc = fmt.Sprintf("%s %s ", waitingForAck, now.Sub(r.flushAt).Round(time.Second))
		pos = r.barMax
	case replay.PhaseDone:
		desc = "acknowledged "
		pos = r.barMax
	default:
		_, lps := r.rates()
		desc = fmt.Sprintf("%d/%d files, %s lines/s ", p.FilesDone, p.FilesTotal, humanRate(lps))
		if p.Current != "" {
			desc = shortName(p.Current) + " " + desc
		}
		if p.Waiting != "" {
			desc = "waiting: " + p.Waiting + " " + desc
		}
	}
	if desc != r.desc {
		r.desc = desc
		r.bar.Describe(desc)
	}
	if !r.bar.IsFinished() {
		r.bar.Set64(pos)
	}
}

// percent is p's bytes read as a whole percentage of its total: 100 once
// reading is over, whatever the total.
func percent(p replay.Progress) int64 {
	if p.Phase == replay.PhaseFlushing || p.Phase == replay.PhaseDone {
		return 100
	}
	if p.TotalBytes <= 0 {
		return 0
	}
	return min(p.ReadBytes*100/p.TotalBytes, 100)
}

// shortName is path's base name, cut in the middle to maxShownName
// characters.
func shortName(path string) string {
	name := filepath.Base(path)
	runes := []rune(name)
	if len(runes) <= maxShownName {
		return name
	}
	head := (maxShownName - 1) / 2
	tail := maxShownName - 1 - head
	return string(runes[:head]) + "…" + string(runes[len(runes)-tail:])
}

// humanBytes formats n in IEC units with one decimal: "512 B", "1.2 GiB".
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 5 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[i])
}

// humanRate formats a per-second rate: "850", "12.3 k", "2.1 M".
func humanRate(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.1f G", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.1f M", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0f k", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.1f k", v/1e3)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}
