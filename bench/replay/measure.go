package main

// Measuring a command: wall, CPU and peak RSS, runs interleaved, and
// when the replayed files were last open.

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sample is one child process's figures.
type sample struct {
	wall, user, sys time.Duration
	read            time.Duration // reading the watched files, 0 if not watched
	maxRSS          int64         // KiB
	stdout, stderr  string
	err             error
}

// task is one measurement, taken -runs times.
type task struct {
	name    string
	run     func() sample
	runs    int    // times to run (0: -runs)
	watched bool   // a replay: its reading time is known
	skip    bool   // not run (an earlier replay failed)
	why     string // printed instead of figures when skipped
}

// tool is a task running cmd (its stdout to /dev/null) on files, or one
// skipped when cmd is not installed.
func (b *bench) tool(name string, cmd []string, files ...string) task {
	if _, err := exec.LookPath(cmd[0]); err != nil {
		return task{name: name, skip: true, why: cmd[0] + " not installed"}
	}
	return task{name: name, run: func() sample { return b.measure(b.devnul, cmd[0], append(cmd[1:], files...)...) }}
}

// stats are a task's figures over its runs: the best (shortest) wall
// time, since other work on the machine only slows a run down; the median
// CPU times; the largest peak RSS. err is the first error.
type stats struct {
	wall, cpu, user, sys time.Duration
	read                 time.Duration // best reading wall time (replays), 0 if unknown
	maxRSS               int64
	last                 sample
	err                  error
	skipped              bool
}

func (s stats) ok() bool { return !s.skipped && s.err == nil }

// interleave runs the tasks -runs times, one of each in turn (so that
// other work on the machine weighs on each alike), stops running a task
// after its first error, prints each task's figures and returns them in
// the tasks' order.
func (b *bench) interleave(tasks []task) []stats {
	samples := make([][]sample, len(tasks))
	out := make([]stats, len(tasks))
	for r := range max(b.o.runs, b.o.replayRuns) {
		for i, t := range tasks {
			if t.skip || out[i].err != nil || r >= cmp.Or(t.runs, b.o.runs) {
				continue
			}
			s := t.run()
			if s.err != nil {
				out[i].err = s.err
				continue
			}
			samples[i] = append(samples[i], s)
		}
	}
	for i, t := range tasks {
		st := &out[i]
		switch {
		case t.skip:
			st.skipped = true
			why := t.why
			if why == "" {
				why = "skipped (failed above)"
			}
			fmt.Printf("%-28s %s\n", t.name+":", why)
			continue
		case st.err != nil:
			fmt.Printf("%-28s FAILED: %v\n", t.name+":", st.err)
			continue
		}
		ss := samples[i]
		med := func(get func(sample) time.Duration) time.Duration {
			ds := make([]time.Duration, len(ss))
			for i, s := range ss {
				ds[i] = get(s)
			}
			slices.Sort(ds)
			return ds[len(ds)/2]
		}
		st.cpu = med(func(s sample) time.Duration { return s.user + s.sys })
		st.user = med(func(s sample) time.Duration { return s.user })
		st.sys = med(func(s sample) time.Duration { return s.sys })
		st.wall, st.read = ss[0].wall, ss[0].read
		for _, s := range ss {
			st.wall = min(st.wall, s.wall)
			st.maxRSS = max(st.maxRSS, s.maxRSS)
			if s.read == 0 || st.read == 0 {
				st.read = 0 // unknown in one run
			} else {
				st.read = min(st.read, s.read)
			}
		}
		st.last = ss[len(ss)-1]
		fmt.Printf("%-28s wall %s  CPU %s (user %s, sys %s)  peak RSS %.1f MiB\n", t.name+":",
			secs(st.wall), secs(st.cpu), secs(st.user), secs(st.sys), float64(st.maxRSS)/1024)
		if t.watched {
			read := "unknown (the files were never seen open)"
			if st.read > 0 {
				read = secs(st.read) + ", then waiting for MongoDB's acknowledgement " + secs(st.wall-st.read)
			}
			fmt.Printf("%-28s %s\n", "  of which reading:", read)
		}
	}
	return out
}

// measure runs name with args, its stdout to out (captured when nil), and
// returns its wall time and rusage.
func (b *bench) measure(out io.Writer, name string, args ...string) sample {
	return b.measureWatching(nil, out, name, args...)
}

// measureWatching is measure that also times the reading of files: from
// the start until the child last had one of them open (see watch).
func (b *bench) measureWatching(files []string, out io.Writer, name string, args ...string) sample {
	ctx, cancel := context.WithTimeout(context.Background(), b.o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	if out == nil {
		cmd.Stdout = &stdout
	}
	start := time.Now()
	err := cmd.Start()
	var w watched
	if err == nil {
		done := make(chan struct{})
		polled := make(chan watched)
		go func() { polled <- watch(cmd.Process.Pid, files, done) }()
		err = cmd.Wait()
		close(done)
		w = <-polled
	}
	hwm := w.hwm
	s := sample{wall: time.Since(start), stdout: stdout.String(), stderr: stderr.String()}
	if !w.closed.IsZero() {
		s.read = w.closed.Sub(start)
	}
	if cmd.ProcessState != nil {
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		s.user, s.sys, s.maxRSS = time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), ru.Maxrss
		if hwm > 0 {
			s.maxRSS = hwm
		}
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("killed after %v", b.o.timeout)
	}
	if err != nil {
		s.err = fmt.Errorf("%s: %v\n%s", filepath.Base(name), err, tail(s.stderr, 10))
	}
	return s
}

// watched is what watch saw of a child process.
type watched struct {
	hwm     int64     // VmHWM, KiB
	sawOpen bool      // one of the files was seen open
	closed  time.Time // when the files were first seen all closed after the last time one was open
}

// watch polls a child every 10 ms until done is closed: its peak RSS
// (VmHWM) from /proc/PID/status, and, when files are given, whether it
// has one of them open (/proc/PID/fd).
//
// The rusage's Maxrss is no use for the peak RSS: Linux starts a child's
// with the peak RSS of the memory it ran in before exec, which after Go's
// vfork is this (larger) bench process's; VmHWM is the child's own
// memory's. It misses at most the last 10 ms of growth.
//
// The time the files were last seen open is when the replay finished
// reading them (each is closed once read), to within 10 ms: the wall time
// of the reading, apart from the wait for MongoDB's acknowledgement.
func watch(pid int, files []string, done <-chan struct{}) watched {
	status := fmt.Sprintf("/proc/%d/status", pid)
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	want := map[string]bool{}
	for _, f := range files {
		if abs, err := filepath.Abs(f); err == nil {
			want[abs] = true
		}
	}
	var w watched
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(status); err == nil {
			for l := range strings.SplitSeq(string(b), "\n") {
				if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
					if n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64); err == nil {
						w.hwm = max(w.hwm, n)
					}
				}
			}
		}
		if len(want) > 0 {
			now := time.Now()
			if fds, err := os.ReadDir(fdDir); err == nil {
				open := false
				for _, fd := range fds {
					if target, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && want[target] {
						open = true
						break
					}
				}
				switch {
				case open:
					w.sawOpen, w.closed = true, time.Time{}
				case w.sawOpen && w.closed.IsZero():
					w.closed = now
				}
			}
		}
		select {
		case <-done:
			return w
		case <-t.C:
		}
	}
}
