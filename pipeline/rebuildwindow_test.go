package pipeline

// The windows of a state-dir rebuild, driven step by step: the test plays
// the tailer (it sends the chunks the tailer sends for a rotation, in the
// tailer's order), commits, seals and writes batches with the real buffer,
// flusher and progress record, loses the state dir while a batch is in
// flight (its bucket updates begun in some collections only), then lets a
// real Pipeline rebuild and finish, and compares every bucket with the
// files.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/archive"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/record"
	"github.com/logtally/logtally/recovery"
	"github.com/logtally/logtally/replay"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
)

const windowSite = "w.test"

// windowRig is one lost-state-dir scenario.
type windowRig struct {
	t     *testing.T
	dir   string
	logs  string
	db    *mongo.Database
	cfg   Config
	buf   *buffer.Buffer
	agg   *aggregate.Aggregator
	store *record.Store
	rec   *recovery.Recorder
	n     int // lines written
}

func newWindowRig(t *testing.T) *windowRig {
	dir := t.TempDir()
	srv := mongotest.Start(t)
	db := srv.Database(t)
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	pc := parser.Config{Format: "combined", Site: windowSite}
	cfg := Config{
		BufferPath: filepath.Join(dir, "state", "buffer.db"),
		Buffer:     buffer.Options{LockTimeout: time.Second},
		Flush:      flusher.Config{DB: db, Interval: 30 * time.Millisecond, MaxOps: 32, Timeout: 5 * time.Second, MaxBackoff: 100 * time.Millisecond},
		Sources: []Source{{Name: windowSite, Paths: []string{filepath.Join(logs, "a.log")}, Parser: pc,
			Tailer: tailer.Config{PollInterval: 10 * time.Millisecond, RescanInterval: 50 * time.Millisecond}}},
		CommitInterval: 10 * time.Millisecond, ShutdownTimeout: 10 * time.Second,
		Instance: "web-1", LeaseTTL: 900 * time.Millisecond,
	}
	r := &windowRig{t: t, dir: dir, logs: logs, db: db, cfg: cfg}
	r.buf = testenv.OpenBuffer(t, cfg.BufferPath, cfg.Buffer)
	var err error
	if r.store, err = record.NewStore(record.Config{DB: db, Instance: "web-1", Holder: record.NewHolder(), LeaseTTL: cfg.LeaseTTL}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.Acquire(context.Background(), r.buf.InstanceID(), true, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	r.rec = recovery.NewRecorder(r.store, r.buf, clock.Real{}, slog.New(slog.DiscardHandler), "")
	r.rec.LeaseHeld()
	p, err := parser.New(pc)
	if err != nil {
		t.Fatal(err)
	}
	r.agg, err = aggregate.New(aggregate.Config{
		Buffer: r.buf, Parsers: map[string]*parser.Parser{windowSite: p},
		CommitInterval: time.Hour, Clock: clock.NewFake(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *windowRig) path(name string) string { return filepath.Join(r.logs, name) }

// write appends n lines to the log file name, over three pages and a day
// and month boundary.
func (r *windowRig) write(name string, n int) {
	f, err := os.OpenFile(r.path(name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	base := time.Date(2026, 1, 31, 23, 59, 0, 0, time.UTC)
	var b []byte
	for range n {
		r.n++
		ts := base.Add(time.Duration(r.n*37%150) * time.Second)
		b = fmt.Appendf(b, "10.2.%d.%d - - [%s] \"GET /p%d?n=%d HTTP/1.1\" 200 512 \"-\" \"window\"\n",
			r.n/250, r.n%250, ts.Format("02/Jan/2006:15:04:05 -0700"), r.n%3, r.n)
	}
	if _, err := f.Write(b); err != nil {
		r.t.Fatal(err)
	}
}

func (r *windowRig) size(name string) int64 {
	fi, err := os.Stat(r.path(name))
	if err != nil {
		r.t.Fatal(err)
	}
	return fi.Size()
}

// checkpoint is the tailer's checkpoint of file name at offset.
func (r *windowRig) checkpoint(name string, offset int64) stream.Checkpoint {
	fi, err := os.Stat(r.path(name))
	if err != nil {
		r.t.Fatal(err)
	}
	id, _ := stream.IDOf(fi)
	b, err := os.ReadFile(r.path(name))
	if err != nil {
		r.t.Fatal(err)
	}
	n := int(min(offset, stream.FingerprintSize))
	return stream.Checkpoint{Source: windowSite, Path: r.path(name), File: id, Offset: offset, FPLen: n,
		FPSum: fnv1a.Extend(fnv1a.Offset, b[:n])}
}

func (r *windowRig) add(c stream.Chunk) {
	if err := r.agg.Add(&c); err != nil {
		r.t.Fatal(err)
	}
}

// read sends the lines of name in [from, to) as the tailer does.
func (r *windowRig) read(name string, from, to int64) {
	b, err := os.ReadFile(r.path(name))
	if err != nil {
		r.t.Fatal(err)
	}
	r.add(stream.Chunk{Checkpoint: r.checkpoint(name, to), Start: from, Data: bytes.Clone(b[from:to])})
}

// readAll reads name from from to its end and returns the end.
func (r *windowRig) readAll(name string, from int64) int64 {
	end := r.size(name)
	r.read(name, from, end)
	return end
}

// at sends a checkpoint-only chunk: name's checkpoint at offset (a copy
// adopted at the original's offset, a truncated file restarting at 0).
func (r *windowRig) at(name string, offset int64) {
	cp := r.checkpoint(name, offset)
	if offset == 0 {
		cp.FPLen, cp.FPSum = 0, fnv1a.Offset
	}
	r.add(stream.Chunk{Checkpoint: cp, Start: offset})
}

// done sends name's Done chunk at offset (the file finished).
func (r *windowRig) done(name string, offset int64) {
	r.add(stream.Chunk{Checkpoint: r.checkpoint(name, offset), Start: offset, Done: true})
}

func (r *windowRig) commit() {
	if err := r.agg.Commit(); err != nil {
		r.t.Fatal(err)
	}
}

// copytruncate copies name to copy and truncates name, as logrotate does.
func (r *windowRig) copytruncate(name, copy string) {
	src, err := os.Open(r.path(name))
	if err != nil {
		r.t.Fatal(err)
	}
	dst, err := os.Create(r.path(copy))
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		r.t.Fatal(err)
	}
	src.Close()
	dst.Close()
	if err := os.Truncate(r.path(name), 0); err != nil {
		r.t.Fatal(err)
	}
}

func (r *windowRig) rename(from, to string) {
	if err := os.Rename(r.path(from), r.path(to)); err != nil {
		r.t.Fatal(err)
	}
}

// flush seals the pending counts into a batch and writes it. Collections
// named in cut are not written (their pass goes to a scratch collection):
// the batch is left as a process killed in that pass leaves it, with the
// progress record saying it is in flight.
func (r *windowRig) flush(cut ...string) (batch string, counts map[string]measure.Vector) {
	fc := r.cfg.Flush
	fc.Buffer, fc.Recorder = r.buf, r.rec
	for _, c := range cut {
		switch c {
		case bucket.DefaultMinuteCollection:
			fc.Collections.Minute = "cut_minutes"
		case bucket.DefaultDailyCollection:
			fc.Collections.Daily = "cut_daily"
		case bucket.DefaultMonthlyCollection:
			fc.Collections.Monthly = "cut_monthly"
		}
	}
	fl, err := flusher.New(fc)
	if err != nil {
		r.t.Fatal(err)
	}
	b, err := r.buf.Seal(buffer.Seal{})
	if err != nil || b == nil {
		r.t.Fatalf("seal: %v, %v", b, err)
	}
	counts = map[string]measure.Vector{}
	r.buf.View(func(tx *buffer.ReadTx) error {
		return tx.ScanBatch(b.ID, nil, func(k []byte, v *measure.Vector) bool { counts[string(k)] = *v; return true })
	})
	if sent, err := fl.Flush(context.Background()); err != nil || !sent {
		r.t.Fatalf("flush: %v, %v", sent, err)
	}
	return b.ID, counts
}

// lose drops the state dir with the last batch in flight, and releases
// the lease (a clean stop's last act; the rebuild need not wait for it).
func (r *windowRig) lose() {
	if err := r.buf.Close(); err != nil {
		r.t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Dir(r.cfg.BufferPath)); err != nil {
		r.t.Fatal(err)
	}
	if err := r.store.Release(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	for _, c := range []string{"cut_minutes", "cut_daily", "cut_monthly"} {
		r.db.Collection(c).Drop(context.Background())
	}
}

// age sets the modification time of rotated files an hour back, so the
// tailer's rule for files written while it was down (Since) leaves them
// to the rebuilt state.
func (r *windowRig) age(names ...string) {
	old := time.Now().Add(-time.Hour)
	for _, n := range names {
		if err := os.Chtimes(r.path(n), old, old); err != nil {
			r.t.Fatal(err)
		}
	}
}

// rebuild starts a Pipeline on the lost state dir: it rebuilds the buffer
// from the record. It checks that the rebuilt batch holds exactly want
// (the lost batch's counts), then runs the pipeline until MongoDB holds
// every line of the log files, and compares every bucket with them.
func (r *windowRig) rebuild(batch string, want map[string]measure.Vector) *Pipeline {
	r.t.Helper()
	p, err := New(r.cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := p.Open(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { p.Close(context.Background()) })
	if p.rebuilt == nil || p.rebuilt.Batch != batch {
		r.t.Fatalf("rebuild: %+v, want batch %s rebuilt", p.rebuilt, batch)
	}
	got := map[string]measure.Vector{}
	err = p.buf.View(func(tx *buffer.ReadTx) error {
		return tx.ScanBatch(batch, nil, func(k []byte, v *measure.Vector) bool { got[string(k)] = *v; return true })
	})
	if err != nil {
		r.t.Fatal(err)
	}
	var wantHits, gotHits uint64
	for k, n := range want {
		wantHits += n[measure.Views]
		if g := got[k]; g != n {
			site, page, sec, _ := buffer.DecodeKey([]byte(k))
			r.t.Errorf("rebuilt batch: %s%s at %s: %v, the lost batch had %v", site, page, time.Unix(sec, 0).UTC(), &g, &n)
		}
	}
	for k, n := range got {
		gotHits += n[measure.Views]
		if _, ok := want[k]; !ok {
			r.t.Errorf("rebuilt batch: key %q with %v the lost batch did not have", k, &n)
		}
	}
	r.t.Logf("lost batch %s: %d hits; rebuilt: %d hits (%+v)", batch, wantHits, gotHits, *p.rebuilt)
	return p
}

// finish runs p until MongoDB holds every hit of the log files, stops it
// and compares every bucket with the files.
func (r *windowRig) finish(p *Pipeline, extra ...bucketcheck.Counts) {
	r.finishWith(p, nil, extra...)
}

// finishWith is finish, calling during (when not nil) once MongoDB holds
// every hit, while p still runs; extra are counts of files outside the
// log directory (archives).
func (r *windowRig) finishWith(p *Pipeline, during func(), extra ...bucketcheck.Counts) {
	r.t.Helper()
	want := bucketcheck.CountFiles(r.t, filepath.Join(r.logs, "*"), windowSite)
	for _, c := range extra {
		want.Merge(c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	testenv.Until(WaitLimit, func() bool { return bucketcheck.Read(r.t, r.db).MonthTotal >= want.Hits }) // the comparison below says what is missing
	if during != nil {
		during()
	}
	Settle(r.t, p) // a double count would arrive now
	cancel()
	if err := <-done; err != nil {
		r.t.Fatal(err)
	}
	got := bucketcheck.Read(r.t, r.db)
	if res := bucketcheck.CompareAll(r.t, want, got); !res.Exact() {
		r.t.Errorf("after the rebuild: %d hits in MongoDB, %d in the files: %v", got.MonthTotal, want.Hits, res)
	}
}

// TestRebuildTwoCopytruncatesInBatch: within the batch in flight, the log
// is truncated twice by copytruncate; the first copy is finished within
// the batch, the second is still followed, and the log itself is read
// again from 0. The batch's snapshot before it saw the log short (its
// fingerprint covered fewer bytes than at the batch's end). The minute
// and daily passes of the batch were written, not the monthly one, when
// the state dir was lost (the crash test's "monthly lost 6, duplicated
// 5"). The rebuilt batch must be the lost one, hit for hit.
func TestRebuildTwoCopytruncatesInBatch(t *testing.T) {
	r := newWindowRig(t)
	r.write("a.log", 3) // about 300 bytes: a short fingerprint
	o := r.readAll("a.log", 0)
	r.commit()
	r.flush()

	// Batch N: two copytruncates.
	r.write("a.log", 20)
	s1 := r.readAll("a.log", o)
	r.write("a.log", 2) // written after the last poll: the copy holds them
	r.copytruncate("a.log", "a.log.1")
	r.at("a.log.1", s1) // the tailer adopts the copy at the offset reached
	e1 := r.readAll("a.log.1", s1)
	r.at("a.log", 0)
	r.write("a.log", 15)
	s2 := r.readAll("a.log", 0)
	r.commit()
	r.write("a.log", 1)
	r.rename("a.log.1", "a.log.2")
	r.copytruncate("a.log", "a.log.1")
	r.at("a.log.1", s2)
	r.readAll("a.log.1", s2)
	r.at("a.log", 0)
	r.done("a.log.2", e1) // the first copy, quiet, finished within the batch
	r.write("a.log", 12)
	r.readAll("a.log", 0)
	r.commit()
	batch, counts := r.flush(bucket.DefaultMonthlyCollection)
	r.lose()

	r.write("a.log", 5)
	r.age("a.log.1", "a.log.2")
	r.finish(r.rebuild(batch, counts))
}

// TestRebuildFileCreatedAndFinishedInBatch: while the daemon was down the
// log was rotated twice (rename); the start finished the old log (read
// to its end), read the rotated file written meanwhile from 0 and
// finished it, and read the new log. That rotated file was created and
// finished within the batch in flight: no snapshot names it. None of the
// batch's bucket updates were made when the state dir was lost.
func TestRebuildFileCreatedAndFinishedInBatch(t *testing.T) {
	r := newWindowRig(t)
	r.write("a.log", 5)
	o := r.readAll("a.log", 0)
	r.commit()
	r.flush()

	// Down: a.log (A) -> a.log.1; a new a.log (B); then B -> a.log.1,
	// A -> a.log.2 and a new a.log (C).
	r.write("a.log", 4)
	r.rename("a.log", "a.log.1")
	r.write("a.log", 6)
	r.rename("a.log.1", "a.log.2")
	r.rename("a.log", "a.log.1")
	r.write("a.log", 3)
	// The start: A found rotated, read to its end and finished; B found
	// by the rule for files written while down, read and finished; C
	// read.
	r.done("a.log.2", r.readAll("a.log.2", o))
	r.at("a.log.1", 0)
	r.done("a.log.1", r.readAll("a.log.1", 0))
	r.readAll("a.log", 0)
	r.commit()
	batch, counts := r.flush(bucket.DefaultMinuteCollection, bucket.DefaultDailyCollection, bucket.DefaultMonthlyCollection)
	r.lose()

	r.write("a.log", 2)
	r.age("a.log.1", "a.log.2")
	r.finish(r.rebuild(batch, counts))
}

// TestRebuildReplayBatchInFlight: a replay's batch (an archive's lines and
// a followed file's) had its minute and daily bucket updates made, not its
// monthly ones nor its ledger marks, when the state dir was lost. The
// rebuild must read the archive's part again into the batch, so the
// monthly buckets get it, and the database's ledger must then say the
// archive is counted: replaying it again counts nothing.
func TestRebuildReplayBatchInFlight(t *testing.T) {
	r := newWindowRig(t)
	r.write("a.log", 5)
	o := r.readAll("a.log", 0)
	r.commit()
	r.flush()

	archive, plain := r.replayArchive(40)
	r.write("a.log", 3)
	r.readAll("a.log", o)
	r.commit()
	batch, counts := r.flush(bucket.DefaultMonthlyCollection)
	// Killed before the batch's marks reached the database's ledger.
	if _, err := r.db.Collection(flusher.LedgerCollection).DeleteMany(context.Background(), bson.D{}); err != nil {
		t.Fatal(err)
	}
	r.lose()

	r.write("a.log", 2)
	p := r.rebuild(batch, counts)
	r.finishWith(p, func() {
		sum, err := replay.NewService(p).Replay(context.Background(), replay.Request{Files: []string{archive}, Site: windowSite, Format: "combined"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Files) != 1 || sum.Files[0].Status != replay.StatusSkipped || sum.Lines != 0 {
			t.Errorf("replaying the archive again after the rebuild: %+v, want it skipped as counted", sum)
		}
	}, bucketcheck.CountFiles(t, plain, windowSite))
}

// replayArchive writes an archive of n lines, gzip-compressed, outside
// the log directory, and replays it as Replay does (its source's settings
// kept, its chunks through the aggregator). It returns the archive's path
// and its uncompressed copy's.
func (r *windowRig) replayArchive(n int) (gz, plain string) {
	t := r.t
	plain = filepath.Join(r.dir, "plain", "z.log")
	os.MkdirAll(filepath.Dir(plain), 0o755)
	save := r.logs
	r.logs = filepath.Dir(plain)
	r.write("z.log", n)
	r.logs = save
	b, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	gz = filepath.Join(r.dir, "archive", "z.log.gz")
	os.MkdirAll(filepath.Dir(gz), 0o755)
	writeGzip(t, gz, b)

	name, pc := "replay:@"+windowSite+"/combined", parser.Config{Format: "combined", Site: windowSite}
	kept, err := json.Marshal(pc) // as a replay keeps its source's settings
	if err != nil {
		t.Fatal(err)
	}
	if err := r.buf.Update(func(tx *buffer.Tx) error { return tx.PutArchiveSource(name, kept) }); err != nil {
		t.Fatal(err)
	}
	rp, err := parser.New(pc)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.agg.AddSource(name, rp); err != nil {
		t.Fatal(err)
	}
	head, _, err := archive.Head(gz)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan stream.Chunk, 1024)
	var counters archive.Counters
	if _, err := archive.Stream(context.Background(), gz, name, head, 0, false, tailer.DefaultMaxLineBytes, ch, &counters); err != nil {
		t.Fatal(err)
	}
	close(ch)
	for c := range ch {
		r.add(c)
	}
	return gz, plain
}

// TestRebuildReplayWaitingForCoarse: with flush.coarse_interval, a
// replay's batch was acknowledged minute-only (its hits in the minute
// buckets, waiting for a full batch in the buffer), and the next batch,
// a full one, was in flight when the state dir was lost. The rebuild must
// read the archive's part again into the coarse counts, so the daily and
// monthly buckets get it.
func TestRebuildReplayWaitingForCoarse(t *testing.T) {
	r := newWindowRig(t)
	fc := r.cfg.Flush
	fc.Buffer, fc.Recorder, fc.CoarseInterval = r.buf, r.rec, time.Hour
	fl, err := flusher.New(fc)
	if err != nil {
		t.Fatal(err)
	}
	r.write("a.log", 5)
	o := r.readAll("a.log", 0)
	r.commit()
	if _, err := fl.Flush(context.Background()); err != nil { // full: the first of a run
		t.Fatal(err)
	}
	_, plain := r.replayArchive(40)
	r.commit()
	if _, err := fl.Flush(context.Background()); err != nil { // minute-only
		t.Fatal(err)
	}
	var k int
	var h uint64
	if err := r.buf.View(func(tx *buffer.ReadTx) error { k, h = tx.Coarse(); return nil }); err != nil {
		t.Fatal(err)
	}
	if k == 0 || h != 40 {
		t.Fatalf("coarse counts %d keys, %d hits after the minute-only batch, want the archive's 40", k, h)
	}
	r.write("a.log", 3)
	r.readAll("a.log", o)
	r.commit()
	batch, counts := r.flush(bucket.DefaultMinuteCollection, bucket.DefaultDailyCollection, bucket.DefaultMonthlyCollection)
	r.lose()

	p := r.rebuild(batch, counts)
	if p.rebuilt.CoarseHits != 40 {
		t.Errorf("rebuild re-read %d hits into the coarse counts, want the archive's 40", p.rebuilt.CoarseHits)
	}
	r.finish(p, bucketcheck.CountFiles(t, plain, windowSite))
}

func writeGzip(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRebuildRecordOfOlderLogtally: a record written by a logtally that
// did not list finished files (no finished_known) keeps the older rule:
// a file of the batch's start missing from its end was finished within
// it and is read to its end.
func TestRebuildRecordOfOlderLogtally(t *testing.T) {
	r := newWindowRig(t)
	r.write("a.log", 5)
	o := r.readAll("a.log", 0)
	r.commit()
	r.flush()

	r.write("a.log", 4)
	r.rename("a.log", "a.log.1") // rotated, then finished at a start
	r.write("a.log", 3)
	r.done("a.log.1", r.readAll("a.log.1", o))
	r.readAll("a.log", 0)
	r.commit()
	batch, counts := r.flush(bucket.DefaultMinuteCollection, bucket.DefaultDailyCollection, bucket.DefaultMonthlyCollection)
	if _, err := r.db.Collection(record.DefaultCollection).UpdateOne(context.Background(), bson.D{{Key: "_id", Value: "web-1"}},
		bson.D{{Key: "$unset", Value: bson.D{{Key: "finished", Value: ""}, {Key: "finished_known", Value: ""},
			{Key: "archives", Value: ""}, {Key: "coarse_finished", Value: ""}, {Key: "coarse_finished_known", Value: ""}}}}); err != nil {
		t.Fatal(err)
	}
	r.lose()

	r.age("a.log.1")
	r.finish(r.rebuild(batch, counts))
}
