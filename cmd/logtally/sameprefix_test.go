package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/internal/testenv/testconfig"
	"github.com/logtally/logtally/stream"
)

// Issue 29, "Counts", item 1, end to end: files whose first lines (over
// the 1 KiB fingerprint) are the same are different files. Every bucket
// is compared with the lines written.

// sharedHead is the first lines every file of these tests begins with: a
// health check's first requests, replayed into each new file.
func sharedHead() []byte { return lines(0, 20) }

// A followed log deleted and a new one created whose first 20 lines are
// the same, while the daemon runs, then again while it is stopped: each
// new file is counted whole, not resumed at the old offset.
func TestNewLogWithTheSameFirstLinesCountedWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	if n := len(sharedHead()); n <= 1024 {
		t.Fatalf("shared head %d bytes: not past the fingerprint", n)
	}
	e.appendTo(e.live, append(sharedHead(), lines(1000, 200)...))
	d, out := daemon(t, e.conf)
	e.waitHits(220, out)

	// While running: deleted (drained and finished), then a new file.
	if err := os.Remove(e.live); err != nil {
		t.Fatal(err)
	}
	waitLog(t, out, "file deleted, finished", 30*time.Second)
	e.appendTo(e.live, append(sharedHead(), lines(2000, 250)...))
	e.waitHits(220+270, out)
	e.settle(e.conf, out) // a double count would show now
	e.check("a new file with the same first lines, while running", filepath.Join(e.truth, "*"))

	// While stopped: the log deleted and a new one (another inode: the
	// old one is kept open here) with the same first lines, longer than
	// the old offset.
	stopDaemon(t, d, d.Process, out)
	keep, err := os.Open(e.live)
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	if err := os.Remove(e.live); err != nil {
		t.Fatal(err)
	}
	e.appendTo(e.live, append(sharedHead(), lines(3000, 400)...))
	d, out = daemon(t, e.conf)
	e.waitHits(220+270+420, out)
	e.settle(e.conf, out) // a double count would show now
	stopDaemon(t, d, d.Process, out)
	if !strings.Contains(out.String(), "not a copy of it (tail check)") {
		t.Errorf("the rule that decided is not logged:\n%s", out)
	}
	if strings.Contains(out.String(), "GET /page") {
		t.Errorf("line contents in the log:\n%s", out)
	}
	e.check("a new file with the same first lines, while stopped", filepath.Join(e.truth, "*"))
}

// A replayed archive whose first lines equal another source's followed
// file (counted further than the archive is long) is counted, not taken
// as counted: 130 hits.
func TestReplaySamePrefixAsAnotherSourcesFile(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	otherLog := filepath.Join(e.dir, "logs2", "other.log")
	os.MkdirAll(filepath.Dir(otherLog), 0o755)
	other := testconfig.Source(replaySite, otherLog)
	other.Name = "other"
	testconfig.Edit(t, e.conf, testconfig.Sources(other))
	if err := os.WriteFile(otherLog, append(sharedHead(), lines(5000, 600)...), 0o644); err != nil {
		t.Fatal(err)
	}
	e.appendTo(e.live, lines(8000, 10))
	d, out := daemon(t, e.conf)
	e.waitHits(630, out)
	stopDaemon(t, d, d.Process, out)

	arch := e.archive("access.log.5.gz", append(sharedHead(), lines(9000, 110)...))
	rout := e.replay(e.conf, arch)
	wantStatus(t, rout, "counted", 1)
	e.check("the archive replayed", filepath.Join(e.truth, "*"), otherLog)

	// Replayed again: its own entry says it is counted.
	rout = e.replay(e.conf, arch)
	wantStatus(t, rout, "already counted", 1)
	e.check("the archive replayed again", filepath.Join(e.truth, "*"), otherLog)
}

// Files replayed together that begin with the same lines are read one
// after the other: a copy (plain and gzip) counts once, a look-alike
// (the same first lines, others after) counts whole.
func TestReplayCopiesAndLookAlikesTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	content := append(sharedHead(), lines(6000, 300)...)
	e.archive("access.log.6", content)
	e.archive("access.log.6.gz", content)
	os.Remove(filepath.Join(e.truth, "access.log.6.gz")) // a copy: its lines are counted once
	e.archive("access.log.7.gz", append(sharedHead(), lines(7000, 50)...))
	out := e.replay(e.conf, filepath.Join(e.arch, "access.log.*"))
	wantStatus(t, out, "counted", 2)
	wantStatus(t, out, "already counted", 1)
	e.check("a copy and a look-alike replayed together", filepath.Join(e.truth, "*"))
}

// The upgrade: checkpoints stored by the previous version (encoding 1,
// no tail check and no stream) resume where they stood, and the files
// grown meanwhile are counted on from there, every bucket compared.
func TestVersion1CheckpointsResumeAfterUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	e.appendTo(e.live, append(sharedHead(), lines(1000, 280)...))
	d, out := daemon(t, e.conf)
	e.waitHits(300, out)
	stopDaemon(t, d, d.Process, out)

	// What the previous version stored: every checkpoint in encoding 1.
	buf := testenv.OpenBuffer(t, filepath.Join(e.dir, "state", "buffer.db"), buffer.Options{})
	var cps map[string][]byte
	err := buf.View(func(tx *buffer.ReadTx) error { cps = tx.Checkpoints(); return nil })
	if err != nil || len(cps) != 1 {
		t.Fatalf("%d checkpoints, %v", len(cps), err)
	}
	for k, v := range cps {
		var cp stream.Checkpoint
		if err := cp.UnmarshalBinary(v); err != nil {
			t.Fatal(err)
		}
		if cp.TailLen == 0 || cp.Stream == 0 {
			t.Fatalf("checkpoint stored without its tail check or stream: %+v", cp)
		}
		b := []byte{1}
		b = append(binary.AppendUvarint(b, uint64(len(cp.Source))), cp.Source...)
		b = append(binary.AppendUvarint(b, uint64(len(cp.Path))), cp.Path...)
		for _, n := range []uint64{cp.File.Dev, cp.File.Ino, uint64(cp.Offset), uint64(cp.FPLen), cp.FPSum} {
			b = binary.AppendUvarint(b, n)
		}
		cps[k] = b
	}
	if err := buf.Commit(buffer.Commit{Checkpoints: cps}); err != nil {
		t.Fatal(err)
	}
	buf.Close()

	e.appendTo(e.live, lines(2000, 200))
	d, out = daemon(t, e.conf)
	e.waitHits(500, out)
	e.settle(e.conf, out) // a double count would show now
	stopDaemon(t, d, d.Process, out)
	if !strings.Contains(out.String(), "resuming file") {
		t.Errorf("the file was not resumed:\n%s", out)
	}
	e.check("version 1 checkpoints resumed", filepath.Join(e.truth, "*"))
}
