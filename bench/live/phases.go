package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"github.com/logtally/logtally/internal/benchutil"
)

// rest measures the daemon's CPU while the log does not grow for d, as a
// share of one core. It first waits until what was written is in MongoDB
// and one more flush interval has passed.
func (b *bench) rest(d time.Duration) (float64, error) {
	if _, err := b.waitTotal(b.written, 5*time.Minute); err != nil {
		return 0, err
	}
	time.Sleep(b.o.settle)
	c0, err := procCPU(b.pid)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	time.Sleep(d)
	c1, err := procCPU(b.pid)
	if err != nil {
		return 0, err
	}
	return (c1 - c0).Seconds() / time.Since(t0).Seconds(), nil
}

// steadyResult is one steady run's figures.
type steadyResult struct {
	cpuPerM, tailPerM float64       // CPU seconds per million lines
	drain             time.Duration // from the last line written to all hits in MongoDB
}

// steady writes rate lines/s for d while `tail -F` follows the file too,
// waits until every hit is in MongoDB, and returns logtally's CPU (from
// the first line written until then) and tail's (until its last line was
// written and a second more) per million lines.
func (b *bench) steady(rate int, d time.Duration) (steadyResult, error) {
	if _, err := b.waitTotal(b.written, 5*time.Minute); err != nil {
		return steadyResult{}, err
	}
	tl := exec.Command("tail", "-F", "-n", "0", b.logPath)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return steadyResult{}, err
	}
	defer devnull.Close()
	tl.Stdout = devnull
	if err := tl.Start(); err != nil {
		return steadyResult{}, err
	}
	time.Sleep(500 * time.Millisecond) // tail has opened the file
	c0, err := procCPU(b.pid)
	if err != nil {
		tl.Process.Kill()
		tl.Wait()
		return steadyResult{}, err
	}
	n, _, err := b.write(rate, d)
	if err != nil {
		tl.Process.Kill()
		tl.Wait()
		return steadyResult{}, err
	}
	end := time.Now()
	time.Sleep(time.Second)
	tl.Process.Signal(syscall.SIGTERM)
	tl.Wait()
	at, err := b.waitTotal(b.written, 5*time.Minute)
	if err != nil {
		return steadyResult{}, err
	}
	c1, err := procCPU(b.pid)
	if err != nil {
		return steadyResult{}, err
	}
	m := float64(n) / 1e6
	return steadyResult{cpuPerM: (c1 - c0).Seconds() / m, tailPerM: cpuTime(tl.ProcessState).Seconds() / m, drain: at.Sub(end)}, nil
}

// lag writes rate lines/s for d, polling the monthly total every 100 ms,
// and returns the largest and the median lag of a second of writing: from
// its last line written to the first poll that found the total holding it.
func (b *bench) lag(rate int, d time.Duration) (largest, med time.Duration, err error) {
	if _, err := b.waitTotal(b.written, 5*time.Minute); err != nil {
		return 0, 0, err
	}
	type seen struct {
		at    time.Time
		total int64
	}
	polls := make(chan []seen)
	stop := make(chan struct{})
	go func() {
		var s []seen
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if n, err := benchutil.MonthlyTotal(b.monthly); err == nil {
				s = append(s, seen{time.Now(), n})
			}
			select {
			case <-stop:
				polls <- s
				return
			case <-t.C:
			}
		}
	}()
	_, marks, err := b.write(rate, d)
	if err == nil {
		_, err = b.waitTotal(b.written, 5*time.Minute)
		time.Sleep(200 * time.Millisecond)
	}
	close(stop)
	s := <-polls
	if err != nil {
		return 0, 0, err
	}
	var lags []time.Duration
	for _, m := range marks {
		i := slices.IndexFunc(s, func(p seen) bool { return p.total >= m.total && !p.at.Before(m.at) })
		if i < 0 {
			return 0, 0, fmt.Errorf("a second's %d lines never seen in MongoDB", m.total)
		}
		lags = append(lags, s[i].at.Sub(m.at))
	}
	slices.Sort(lags)
	return lags[len(lags)-1], lags[len(lags)/2], nil
}

// mark is the total written by the end of one second of writing.
type mark struct {
	at    time.Time
	total int64
}

// write appends rate lines/s to the log for d, in a write every 10 ms,
// and returns the lines written and a mark at the end of each second.
func (b *bench) write(rate int, d time.Duration) (int64, []mark, error) {
	start := time.Now()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	var n int64
	var marks []mark
	next := start.Add(time.Second)
	want := int64(float64(rate) * d.Seconds())
	for n < want {
		now := <-t.C
		due := min(int64(float64(rate)*now.Sub(start).Seconds()), want)
		if due > n {
			if err := b.w.write(int(due-n), now); err != nil {
				return n, marks, err
			}
			b.written += due - n
			n = due
		}
		if !now.Before(next) || n == want {
			marks = append(marks, mark{time.Now(), b.written})
			next = next.Add(time.Second)
		}
	}
	return n, marks, nil
}

// waitTotal waits until the monthly buckets hold want hits and returns
// when it saw them.
func (b *bench) waitTotal(want int64, limit time.Duration) (time.Time, error) {
	deadline := time.Now().Add(limit)
	for {
		got, err := benchutil.MonthlyTotal(b.monthly)
		if err == nil && got >= want {
			if got > want {
				return time.Time{}, fmt.Errorf("%d hits in MongoDB, %d lines written", got, want)
			}
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("only %d of %d hits in MongoDB after %v (err %v)", got, want, limit, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lineWriter writes combined-format lines stamped with the time of the
// write.
type lineWriter struct {
	f     *os.File
	pages int
	buf   []byte
	i     int
}

func newLineWriter(f *os.File, pages int) *lineWriter { return &lineWriter{f: f, pages: pages} }

// write appends n lines in one write.
func (w *lineWriter) write(n int, now time.Time) error {
	ts := now.Format("02/Jan/2006:15:04:05 -0700")
	b := w.buf[:0]
	for range n {
		w.i++
		b = fmt.Appendf(b, "2001:db8:%x::%x - - [%s] \"GET /page/%d?ref=%d HTTP/1.1\" 200 %d \"https://example.com/\" \"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36\"\n",
			w.i%65536, w.i%7919, ts, w.i%w.pages, w.i%1000, 200+w.i%50000)
	}
	w.buf = b
	_, err := w.f.Write(b)
	return err
}
