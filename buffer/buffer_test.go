package buffer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/measure"
)

// openTest opens the buffer at path with opts for a test and registers
// a cleanup that closes it and checks the file with Verify, as bbolt's
// test helper checks every test's database: a test fails if it leaves an
// inconsistent file behind. Closing a Buffer twice is harmless, so a test
// may close it (to reopen the file, or to look at it) before the cleanup
// runs. Tests that damage the file on purpose open it with Open.
func openTest(t *testing.T, path string, opts Options) *Buffer {
	t.Helper()
	b, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close %s: %v", path, err)
		}
		if err := Verify(path); err != nil {
			t.Errorf("the file the test left: %v", err)
		}
	})
	return b
}

// open is openTest with a short lock timeout.
func open(t *testing.T, path string) *Buffer {
	t.Helper()
	return openTest(t, path, Options{LockTimeout: 100 * time.Millisecond})
}

func key(site, page string, sec int64) string {
	return string(AppendKey(nil, []byte(site), []byte(page), sec))
}

func TestKeyRoundTripAndOrder(t *testing.T) {
	keys := []string{
		key("a.com", "/x", 100), key("a.com", "/x", 5000), key("a.com", "/x\x00y", 1),
		key("a.com", "/y", -5), key("b.com", "/", 0),
	}
	for i, k := range keys {
		site, page, sec, err := DecodeKey([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		if got := key(string(site), string(page), sec); got != k {
			t.Fatalf("round trip of key %d: %q != %q", i, got, k)
		}
		prefix, sec2, err := SplitKey([]byte(k))
		if err != nil || sec2 != sec || string(prefix) != key(string(site), string(page), 0)[:len(prefix)] || len(prefix) != len(k)-8 {
			t.Fatalf("SplitKey of key %d: %q, %d, %v", i, prefix, sec2, err)
		}
	}
	// Same site and page: seconds ascending, including across the sign.
	if !(key("s", "/p", -1) < key("s", "/p", 0) && key("s", "/p", 0) < key("s", "/p", 1<<40)) {
		t.Fatal("seconds do not sort ascending")
	}
	// A page's keys stay together: no other page sorts between them.
	lo, hi := key("s", "/p", 0), key("s", "/p", 1<<40)
	if other := key("s", "/p2", 5); other > lo && other < hi {
		t.Fatal("another page sorts inside /p's range")
	}
	if _, _, _, err := DecodeKey([]byte("\x05ab")); err == nil {
		t.Fatal("truncated key decoded without error")
	}
	// A page length whose sum with the second's 8 bytes wraps (a damaged
	// file): an error, not a panic.
	if _, _, _, err := DecodeKey(append([]byte{1, 's'}, binary.AppendUvarint(nil, math.MaxUint64-7)...)); err == nil {
		t.Fatal("a key whose page length wraps decoded without error")
	}
}

func TestCommitSealScanAck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buffer.db")
	b := open(t, path)
	defer b.Close()
	if batch, err := b.Seal(Seal{}); err != nil || batch != nil {
		t.Fatalf("Seal on empty buffer = %v, %v; want nil, nil", batch, err)
	}
	k1, k2 := key("s", "/a", 60), key("s", "/b", 61)
	if last, err := read(b, (*ReadTx).LastCommit); err != nil || !last.IsZero() {
		t.Fatalf("LastCommit before any commit = %v, %v; want zero", last, err)
	}
	before := time.Now()
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{k1: 2, k2: 1})), Checkpoints: map[string][]byte{"f1": []byte("10")}}); err != nil {
		t.Fatal(err)
	}
	if last, err := read(b, (*ReadTx).LastCommit); err != nil || last.Before(before) || last.After(time.Now()) {
		t.Fatalf("LastCommit = %v, %v; want between %v and now", last, err, before)
	}
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{k1: 3})), Checkpoints: map[string][]byte{"f1": []byte("20")}}); err != nil {
		t.Fatal(err)
	}
	if keys, hits := b.Pending(); keys != 2 || hits != 6 {
		t.Fatalf("Pending = %d keys, %d hits; want 2, 6", keys, hits)
	}
	batch, err := b.Seal(Seal{})
	if err != nil || batch == nil {
		t.Fatalf("Seal = %v, %v", batch, err)
	}
	if batch.Keys != 2 || batch.Hits != 6 || len(batch.ID) != 24 {
		t.Fatalf("batch = %+v", batch)
	}
	// Counts committed while a batch is in flight stay pending.
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{k1: 7}))}); err != nil {
		t.Fatal(err)
	}
	again, err := b.Seal(Seal{})
	if err != nil || again.ID != batch.ID {
		t.Fatalf("second Seal returned %v, %v; want the batch in flight %s", again, err, batch.ID)
	}
	got := map[string]uint64{}
	if err := scanViews(scanBatch(b), batch.ID, nil, func(k []byte, n uint64) bool { got[string(k)] = n; return true }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[k1] != 5 || got[k2] != 1 {
		t.Fatalf("batch counts = %v", got)
	}
	// Scanning from a key starts there and stops when told.
	var seen []string
	if err := scanViews(scanBatch(b), batch.ID, []byte(k2), func(k []byte, n uint64) bool { seen = append(seen, string(k)); return false }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != k2 {
		t.Fatalf("scan from k2 saw %q", seen)
	}
	if err := scanViews(scanBatch(b), "nope", nil, func([]byte, uint64) bool { return true }); !errors.Is(err, ErrNoBatch) {
		t.Fatalf("scan of unknown batch: %v", err)
	}
	if err := b.SaveProgress(batch.ID, []byte("p1")); err != nil {
		t.Fatal(err)
	}
	// Progress and the batch survive a reopen.
	b.Close()
	b = open(t, path)
	defer b.Close()
	s, err := read(b, (*ReadTx).Sealed)
	if err != nil || s == nil || s.ID != batch.ID || !bytes.Equal(s.Progress, []byte("p1")) || s.Hits != 6 {
		t.Fatalf("after reopen Sealed = %+v, %v", s, err)
	}
	if keys, hits := b.Pending(); keys != 1 || hits != 7 {
		t.Fatalf("after reopen Pending = %d, %d; want 1, 7", keys, hits)
	}
	if err := b.Ack(batch.ID); err != nil {
		t.Fatal(err)
	}
	if s, _ := read(b, (*ReadTx).Sealed); s != nil {
		t.Fatalf("batch still there after Ack: %+v", s)
	}
	next, err := b.Seal(Seal{})
	if err != nil || next == nil || next.ID == batch.ID || next.Hits != 7 || len(next.Progress) != 0 {
		t.Fatalf("next batch = %+v, %v", next, err)
	}
	cps, err := read(b, (*ReadTx).Checkpoints)
	if err != nil || string(cps["f1"]) != "20" {
		t.Fatalf("checkpoints = %q, %v", cps, err)
	}
	if err := b.Commit(Commit{Checkpoints: map[string][]byte{"f1": nil}}); err != nil {
		t.Fatal(err)
	}
	if cps, _ := read(b, (*ReadTx).Checkpoints); len(cps) != 0 {
		t.Fatalf("checkpoint not deleted: %q", cps)
	}
}

func TestInstanceIDIsStable(t *testing.T) {
	dir := t.TempDir()
	b := open(t, filepath.Join(dir, "a.db"))
	id := b.InstanceID()
	b.Close()
	b = open(t, filepath.Join(dir, "a.db"))
	defer b.Close()
	if b.InstanceID() != id {
		t.Fatalf("instance id changed on reopen: %s -> %s", id, b.InstanceID())
	}
	c := open(t, filepath.Join(dir, "b.db"))
	defer c.Close()
	if c.InstanceID() == id {
		t.Fatal("two buffer files share an instance id")
	}
}

func TestSecondOpenFailsClearly(t *testing.T) {
	if os.Getenv("BUFFER_HOLD") != "" {
		b, err := Open(os.Getenv("BUFFER_HOLD"), Options{})
		if err != nil {
			os.Exit(3)
		}
		defer b.Close()
		fmt.Println("open")
		time.Sleep(time.Minute) // held until the parent kills us
		return
	}
	path := filepath.Join(t.TempDir(), "buffer.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondOpenFailsClearly$")
	cmd.Env = append(os.Environ(), "BUFFER_HOLD="+path)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		if err := Verify(path); err != nil { // the holder was killed with the file open
			t.Errorf("the file the holder left: %v", err)
		}
	}()
	line := make([]byte, 5)
	if _, err := out.Read(line); err != nil || string(line[:4]) != "open" {
		t.Fatalf("holder did not open: %q %v", line, err)
	}
	start := time.Now()
	_, err := Open(path, Options{LockTimeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("second open took %v: it should give up after the lock timeout", time.Since(start))
	}
}

func TestFullAtMaxSize(t *testing.T) {
	b := openTest(t, filepath.Join(t.TempDir(), "b.db"), Options{MaxSize: 4096})
	counts := map[string]uint64{}
	for i := 0; !b.Full(); i++ {
		if i > 1000 {
			t.Fatalf("not full after %d keys, size %d", i, b.Size())
		}
		clear(counts)
		counts[key("s", "/page/"+strconv.Itoa(i), 1)] = 1
		if err := b.Commit(Commit{Counts: CountsOf(viewsOf(counts))}); err != nil {
			t.Fatal(err)
		}
	}
	batch, err := b.Seal(Seal{})
	if err != nil {
		t.Fatal(err)
	}
	if !b.Full() {
		t.Fatal("sealing freed space: sealed counts still occupy the buffer until acknowledged")
	}
	if err := b.Ack(batch.ID); err != nil {
		t.Fatal(err)
	}
	if b.Full() || b.Size() != 0 {
		t.Fatalf("after Ack: full=%v size=%d", b.Full(), b.Size())
	}
}

// TestMaxSizeDefaultAndNoLimit checks that a zero MaxSize is
// DefaultMaxSize and a negative one never fills.
func TestMaxSizeDefaultAndNoLimit(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		opt, want int64
	}{{0, DefaultMaxSize}, {4096, 4096}, {-1, -1}} {
		b := openTest(t, filepath.Join(dir, "b.db"), Options{MaxSize: tc.opt})
		if b.maxSize != tc.want {
			t.Errorf("MaxSize %d: limit %d, want %d", tc.opt, b.maxSize, tc.want)
		}
		b.pendingBytes = 1 << 62 // as if very full
		if full := b.Full(); full != (tc.want > 0) {
			t.Errorf("MaxSize %d: Full() = %v with %d bytes", tc.opt, full, b.Size())
		}
		b.Close()
	}
}

// TestOpenLogsBufferID checks that the open message names the file's id
// buffer_id: "instance" is the host's name in logtally's logger.
func TestOpenLogsBufferID(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(&out, nil)).With("instance", "web-1")
	b := openTest(t, filepath.Join(t.TempDir(), "b.db"), Options{Logger: log})
	line := out.String()
	if !strings.Contains(line, "msg=\"buffer open\"") || !strings.Contains(line, " buffer_id="+b.InstanceID()+" ") ||
		strings.Count(line, "instance=") != 1 || !strings.Contains(line, "instance=web-1") {
		t.Errorf("open logged %q", line)
	}
}

// TestCrashKeepsCountsAndCheckpointsTogether kills a committing process at
// random moments; after every kill the counts in the file must equal what its
// checkpoint says was committed.
func TestCrashKeepsCountsAndCheckpointsTogether(t *testing.T) {
	if path := os.Getenv("BUFFER_CRASH_CHILD"); path != "" {
		crashChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "buffer.db")
	var acked uint64 // hits of batches the parent acknowledged between rounds
	for round := 0; round < 8; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashKeepsCountsAndCheckpointsTogether$")
		cmd.Env = append(os.Environ(), "BUFFER_CRASH_CHILD="+path)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the child has committed a few times, then kill it mid-flight.
		buf := make([]byte, 64)
		for read := 0; read < 3+round; {
			n, err := out.Read(buf)
			if err != nil {
				t.Fatalf("child: %v", err)
			}
			read += bytes.Count(buf[:n], []byte("\n"))
		}
		cmd.Process.Kill()
		cmd.Wait()

		b := open(t, path)
		cps, err := read(b, (*ReadTx).Checkpoints)
		if err != nil {
			t.Fatal(err)
		}
		committed := getU64(cps["total"])
		_, pending := b.Pending()
		var sealed uint64
		if s, _ := read(b, (*ReadTx).Sealed); s != nil {
			scanViews(scanBatch(b), s.ID, nil, func(_ []byte, n uint64) bool { sealed += n; return true })
		}
		held := pending + sealed + acked
		if s, _ := read(b, (*ReadTx).Sealed); s != nil && round%2 == 1 {
			if err := b.Ack(s.ID); err != nil {
				t.Fatal(err)
			}
			acked += sealed
		}
		b.Close()
		if committed == 0 {
			t.Fatalf("round %d: nothing committed", round)
		}
		if held != committed {
			t.Fatalf("round %d: buffer holds %d hits, checkpoint says %d", round, held, committed)
		}
	}
}

// crashChild commits counts with a running total as the checkpoint, and
// seals a batch whenever none is in flight, until it is killed.
func crashChild(path string) {
	b, err := Open(path, Options{LockTimeout: 5 * time.Second})
	if err != nil {
		os.Exit(3)
	}
	cps, _ := read(b, (*ReadTx).Checkpoints)
	total := getU64(cps["total"])
	for i := 0; ; i++ {
		counts := map[string]uint64{}
		var add uint64
		for j := 0; j < 50; j++ {
			n := uint64(j%3 + 1)
			counts[key("s", "/p"+strconv.Itoa((i+j)%97), int64(i))] += n
			add += n
		}
		total += add
		if err := b.Commit(Commit{Counts: CountsOf(viewsOf(counts)), Checkpoints: map[string][]byte{"total": u64(total)}}); err != nil {
			os.Exit(4)
		}
		if i%5 == 4 {
			if _, err := b.Seal(Seal{}); err != nil {
				os.Exit(5)
			}
		}
		fmt.Println(i)
	}
}

// viewsOf turns views-only counts into vectors.
func viewsOf(m map[string]uint64) map[string]measure.Vector {
	out := make(map[string]measure.Vector, len(m))
	for k, n := range m {
		var v measure.Vector
		v[measure.Views] = n
		out[k] = v
	}
	return out
}

// read returns what fn reads in a read transaction of b of its own (a
// method expression will do: read(b, (*ReadTx).Checkpoints)).
func read[T any](b *Buffer, fn func(*ReadTx) T) (T, error) {
	var v T
	err := b.View(func(tx *ReadTx) error { v = fn(tx); return nil })
	return v, err
}

// readErr is read for a reader that returns an error.
func readErr[T any](b *Buffer, fn func(*ReadTx) (T, error)) (T, error) {
	var v T
	err := b.View(func(tx *ReadTx) (err error) { v, err = fn(tx); return err })
	return v, err
}

// snap returns the snapshot of of in a read transaction of b.
func snap(b *Buffer, of SnapshotOf) (Snapshot, error) {
	return read(b, func(tx *ReadTx) Snapshot { return tx.Snapshot(of) })
}

// scanBatch and scanCoarse return ReadTx.ScanBatch and ScanCoarse, each
// call in a read transaction of b of its own.
func scanBatch(b *Buffer) func(string, []byte, func([]byte, *measure.Vector) bool) error {
	return func(id string, from []byte, fn func([]byte, *measure.Vector) bool) error {
		return b.View(func(tx *ReadTx) error { return tx.ScanBatch(id, from, fn) })
	}
}

func scanCoarse(b *Buffer) func(string, []byte, func([]byte, *measure.Vector) bool) error {
	return func(id string, from []byte, fn func([]byte, *measure.Vector) bool) error {
		return b.View(func(tx *ReadTx) error { return tx.ScanCoarse(id, from, fn) })
	}
}

// scanViews scans with a views-only callback.
func scanViews(scan func(string, []byte, func([]byte, *measure.Vector) bool) error, id string, from []byte, fn func([]byte, uint64) bool) error {
	return scan(id, from, func(k []byte, v *measure.Vector) bool { return fn(k, v[measure.Views]) })
}

// The last commit's time and a batch's seal time come from
// Options.FileClock (the clock file modification times are compared
// with), not from Options.Clock nor the process's time.
func TestFileClockStampsCommitAndSeal(t *testing.T) {
	files := clock.NewFake(time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC))
	other := clock.NewFake(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	b := openTest(t, filepath.Join(t.TempDir(), "buffer.db"), Options{Clock: other, FileClock: files})
	k := string(AppendKey(nil, []byte("s.test"), []byte("/"), 1_700_000_000))
	if err := b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{k: 1})), Checkpoints: map[string][]byte{"f1": []byte("10")}}); err != nil {
		t.Fatal(err)
	}
	if last, err := read(b, (*ReadTx).LastCommit); err != nil || !last.Equal(files.Now()) {
		t.Errorf("last commit %v (%v), want the file clock's %v", last, err, files.Now())
	}
	files.Advance(time.Hour)
	if _, err := b.Seal(Seal{}); err != nil {
		t.Fatal(err)
	}
	snap, err := snap(b, SealedBatch)
	if err != nil || !snap.SealedAt.Equal(files.Now()) {
		t.Errorf("sealed at %v (%v), want the file clock's %v", snap.SealedAt, err, files.Now())
	}
}
