package flusher

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/measure"
)

// tailHits are hot and cold pages of two sites over two hours, two days
// and two months (a page is hot from 5 hits in its plan period:
// PreallocateMinHits 5), with a daily plan inserted beforehand (another
// writer's) that names a page of one hit hot and not a page of 6
// (tailPlans): the plan in decides.
func tailHits() []hit {
	const t1, t2, t3, t4 = "2024-01-31T23:59:10Z", "2024-01-31T23:59:50Z", "2024-02-01T00:00:05Z", "2024-02-01T00:00:30Z"
	return []hit{
		{"a.example", "/hot", t1, 3}, {"a.example", "/hot", t2, 3}, {"a.example", "/hot", t3, 3}, {"a.example", "/hot", t4, 3},
		{"a.example", "/c1", t1, 1}, {"a.example", "/c1", t3, 1},
		{"a.example", "/c2", t2, 2},
		{"a.example", "/d", t1, 1},
		{"b.example", "/hot", t3, 5},
		{"b.example", "/x.y$z%", t4, 1},
		{"b.example", "/y", t2, 1}, {"b.example", "/y", t4, 2},
	}
}

// tailPlans inserts the plan of a.example's 2024-01-31 naming /d hot.
func tailPlans(t *testing.T, e *env) {
	t.Helper()
	p := bucket.NewPlan(bucket.Daily, "a.example", mustUnix(t, "2024-01-31T12:00:00Z"), []string{"/d"}, 1)
	if _, err := e.db.Collection("daily").InsertOne(context.Background(), p.Doc()); err != nil {
		t.Fatal(err)
	}
}

// tailCold are the ids of tailHits' page buckets whose counts go to tails.
var tailCold = [bucket.Levels][]string{
	bucket.Minute: {"202401312359/a.example/c1", "202401312359/a.example/c2", "202401312359/a.example/d", "202402010000/a.example/c1",
		"202401312359/b.example/y", "202402010000/b.example/x.y$z%", "202402010000/b.example/y"},
	bucket.Daily:   {"20240131/a.example/c1", "20240131/a.example/c2", "20240131/a.example/hot", "20240201/a.example/c1", "20240131/b.example/y", "20240201/b.example/x.y$z%", "20240201/b.example/y"},
	bucket.Monthly: {"202401/a.example/c1", "202401/a.example/c2", "202401/a.example/d", "202402/a.example/c1", "202401/b.example/y", "202402/b.example/x.y$z%", "202402/b.example/y"},
}

// newTailEnv is newEnv writing batches in their own layout (tails), a
// page hot from 5 hits in its plan period.
func newTailEnv(t *testing.T, maxOps int) *env {
	t.Helper()
	e := newEnv(t, maxOps)
	e.tails = true
	e.f = e.newFlusher(t, Config{MaxOps: maxOps, PreallocateMinHits: 5})
	return e
}

// checkTails compares every page's counts (its bucket and its tail
// entries) with e.want (bucketcheck), and that the cold ones are in tails
// and nowhere else and the hot ones in their own buckets and nowhere
// else.
func (e *env) checkTails(t *testing.T, cold [bucket.Levels][]string) {
	t.Helper()
	want := bucketcheck.Counts{Minute: e.want["minutes"], Daily: e.want["daily"], Monthly: e.want["monthly"], Sites: e.want["sites"]}
	got := bucketcheck.Read(t, e.db)
	if r := bucketcheck.CompareAll(t, want, got); !r.Exact() {
		t.Errorf("counts: %v", r)
	}
	ctx := context.Background()
	for l := range bucket.Level(bucket.Levels) {
		if g, w := slices.Sorted(maps.Keys(got.Tailed[l])), slices.Sorted(slices.Values(cold[l])); !slices.Equal(g, w) {
			t.Errorf("%s: pages in tails %v, want %v", l, g, w)
		}
		// No cold page has a bucket of its own.
		coll := e.db.Collection(map[bucket.Level]string{bucket.Minute: "minutes", bucket.Daily: "daily", bucket.Monthly: "monthly"}[l])
		for _, id := range cold[l] {
			if n, err := coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: id}}); err != nil || n != 0 {
				t.Errorf("%s: the cold page bucket %s exists (%d, %v)", l, id, n, err)
			}
		}
	}
}

// TestTailsExactOnceAndRouted writes a batch of hot and cold pages over
// two hours, days and months in small chunks: every page counts exactly
// once, the hot ones in their own buckets (every counter, the seconds
// and minutes of the day included), the cold ones in their sites' tails.
// The plans are inserted once; the next batch of the same periods finds
// them in the cache.
func TestTailsExactOnceAndRouted(t *testing.T) {
	e := newTailEnv(t, 2)
	tailPlans(t, e)
	e.commit(t, tailHits()...)
	e.flush(t)
	e.checkTails(t, tailCold)
	st := e.f.Stats()
	t.Logf("stats: %+v", st)
	// Plans: 2 hours, 2 days, 2 months of 2 sites = 12, one inserted
	// before; one find per level and scan.
	if st.PlanInserts != 11 || st.PlanDups != 0 || st.PlanFinds != 3 {
		t.Errorf("plans: %d inserted, %d duplicates, %d finds; want 11, 0, 3", st.PlanInserts, st.PlanDups, st.PlanFinds)
	}
	if st.Tails.Writes == 0 || st.Finds != 0 {
		t.Errorf("%d tails written, %d finds of the fallback", st.Tails.Writes, st.Finds)
	}
	// Again in the same periods: no plan is looked for.
	e.commit(t, hit{"a.example", "/c1", "2024-02-01T00:00:40Z", 1}, hit{"a.example", "/hot", "2024-02-01T00:00:40Z", 1})
	e.flush(t)
	if st2 := e.f.Stats(); st2.PlanFinds != st.PlanFinds || st2.PlanInserts != st.PlanInserts {
		t.Errorf("second batch: plans found %d, inserted %d", st2.PlanFinds-st.PlanFinds, st2.PlanInserts-st.PlanInserts)
	}
	e.checkTails(t, tailCold)
}

// tailRun writes tailHits in a fresh tail env, stopping (stop) wherever
// stop says, then resuming (a new flusher: its plan cache and known set
// lost) until the batch is acknowledged, and checks every count.
func tailRun(t *testing.T, stop func(e *env) *hooks) {
	t.Helper()
	e := newTailEnv(t, 2)
	tailPlans(t, e)
	e.commit(t, tailHits()...)
	h := stop(e)
	for range 50 {
		sent, err := e.f.Flush(context.Background())
		if err == nil && sent {
			break
		}
		e.f = e.newFlusher(t, Config{MaxOps: 2, PreallocateMinHits: 5})
		if h != nil {
			*testHooks(e.f) = *h // the same failures, further on
		}
	}
	if b, _ := e.sealed(); b != nil {
		t.Fatalf("batch %s never acknowledged", b.ID)
	}
	e.checkTails(t, tailCold)
}

// TestTailsResumedAtEveryChunk stops a tails batch after each of its
// chunks (progress saved) and resumes it with a new flusher: every page
// counts once.
func TestTailsResumedAtEveryChunk(t *testing.T) {
	e := newTailEnv(t, 2)
	tailPlans(t, e)
	e.commit(t, tailHits()...)
	var passes []pass
	testHooks(e.f).afterChunk = func(p pass, _ int) error { passes = append(passes, p); return nil }
	e.flush(t)
	t.Logf("%d chunks, progress after each: %v", len(passes), passes)
	for _, p := range []pass{minuteTailPass, coarseTailPass} {
		if n := strings.Count(fmt.Sprint(passes), p.String()); n < 2 {
			t.Errorf("%s pass in %d chunks, want at least 2 (the test's point)", p, n)
		}
	}
	for n := 1; n <= len(passes); n++ {
		t.Run(fmt.Sprintf("stop after chunk %d", n), func(t *testing.T) {
			tailRun(t, func(e *env) *hooks {
				stop := errors.New("stop")
				testHooks(e.f).afterChunk = func(_ pass, chunk int) error {
					if chunk == n {
						return stop
					}
					return nil
				}
				return nil
			})
		})
	}
}

// TestTailsFailedMidChunk fails each bulk write of a tails batch once (the
// chunk's other bulk writes may have gone in, its progress not saved),
// and loses each whole insert's reply once: the batch is resumed from its
// last progress each time and every page counts once.
func TestTailsFailedMidChunk(t *testing.T) {
	for _, mode := range []string{"bulk write fails", "insert reply lost"} {
		for k := 1; k <= 12; k++ {
			t.Run(fmt.Sprintf("%s at %d", mode, k), func(t *testing.T) {
				n := 0
				defer func() {
					if n < k {
						t.Errorf("only %d calls: the failure never came", n)
					}
				}()
				tailRun(t, func(e *env) *hooks {
					fail := errors.New("lost")
					h := testHooks(e.f)
					if mode == "bulk write fails" {
						h.exists = func(pass, string) bool { return true } // updates first: the three-step path
						h.beforeBulk = func(int) error {
							if n++; n == k {
								return fail
							}
							return nil
						}
					} else {
						h.afterWhole = func(pass) error {
							if n++; n == k {
								return fail
							}
							return nil
						}
					}
					return h
				})
			})
		}
	}
}

// TestTailsBatchSentTwice writes a tails batch whole, loses its progress
// and acknowledgement, and sends it again: every tail and bucket skips it.
func TestTailsBatchSentTwice(t *testing.T) {
	e := newTailEnv(t, 2)
	tailPlans(t, e)
	e.commit(t, tailHits()...)
	crash := errors.New("crash")
	testHooks(e.f).afterChunk = func(p pass, _ int) error {
		if p == donePass {
			return crash
		}
		return nil
	}
	if _, err := e.f.Flush(context.Background()); !errors.Is(err, crash) {
		t.Fatalf("Flush = %v, want the crash", err)
	}
	batch, _ := e.sealed()
	if err := e.buf.SaveProgress(batch.ID, nil); err != nil {
		t.Fatal(err)
	}
	e.f = e.newFlusher(t, Config{MaxOps: 2, PreallocateMinHits: 5})
	e.flush(t)
	e.checkTails(t, tailCold)
}

// rebuilt returns a new buffer (another state dir) holding batch id of
// counts sealed again, as recovery rebuilds a lost one from the progress
// record, in layout l (the record's; LayoutPages for a record of
// before), and a flusher on it.
func (e *env) rebuilt(t *testing.T, id string, counts map[string]measure.Vector, l buffer.Layout, cfg Config) (*buffer.Buffer, *Flusher) {
	t.Helper()
	buf := testenv.OpenBuffer(t, filepath.Join(t.TempDir(), "rebuilt.db"), buffer.Options{InstanceID: e.buf.InstanceID()})
	if err := buf.Rebuild(buffer.Rebuilt{Checkpoints: map[string][]byte{}, Counts: counts, Batch: id, Layout: l, Since: time.Now()}); err != nil {
		t.Fatal(err)
	}
	cfg.Buffer, cfg.DB, cfg.Timeout = buf, e.db, 5*time.Second
	cfg.Numbers = e.numbers
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return buf, f
}

// TestTailsRebuilt loses the state dir of a tails batch after each of its
// chunks; the batch rebuilt from the record (its layout with it) is
// written by a new flusher and every page counts once.
func TestTailsRebuilt(t *testing.T) {
	for n := 1; n <= 12; n++ {
		t.Run(fmt.Sprintf("lost after chunk %d", n), func(t *testing.T) {
			e := newTailEnv(t, 2)
			tailPlans(t, e)
			counts := e.commit(t, tailHits()...)
			stop := errors.New("state dir lost")
			testHooks(e.f).afterChunk = func(_ pass, chunk int) error {
				if chunk == n {
					return stop
				}
				return nil
			}
			_, err := e.f.Flush(context.Background())
			batch, _ := e.sealed()
			if err == nil {
				t.Skipf("the batch has fewer than %d chunks", n)
			}
			if batch.Layout != buffer.LayoutTails {
				t.Fatalf("sealed in layout %d", batch.Layout)
			}
			buf, f := e.rebuilt(t, batch.ID, counts, batch.Layout, Config{MaxOps: 2, PreallocateMinHits: 5})
			if sent, err := f.Flush(context.Background()); err != nil || !sent {
				t.Fatalf("rebuilt: Flush = %v, %v", sent, err)
			}
			if b, _ := sealedIn(buf); b != nil {
				t.Fatalf("rebuilt batch not acknowledged")
			}
			e.checkTails(t, tailCold)
		})
	}
}

// TestOldLayoutBatchStaysOld: a batch of a logtally before tails (no
// layout: every page to its own buckets), stopped after its minute pass,
// is finished in that layout by this version, resumed or rebuilt from a
// record that names no layout: every page in its own buckets, once.
// Rebuilt in the tails layout instead, its minute counts would be
// written again to the tails: the layout mark is what keeps them once.
func TestOldLayoutBatchStaysOld(t *testing.T) {
	var none [bucket.Levels][]string
	for _, c := range []struct {
		name    string
		finish  buffer.Layout
		rebuild bool
	}{{"resumed", buffer.LayoutPages, false}, {"rebuilt", buffer.LayoutPages, true}, {"rebuilt in the wrong layout", buffer.LayoutTails, true}} {
		t.Run(c.name, func(t *testing.T) {
			e := newTailEnv(t, 2)
			counts := e.commit(t, tailHits()...)
			sealed, err := e.buf.Seal(buffer.Seal{})
			if err != nil {
				t.Fatal(err)
			}
			// The older logtally's state dir: the batch with no layout.
			oldBuf, old := e.rebuilt(t, sealed.ID, counts, buffer.LayoutPages, Config{MaxOps: 2, PreallocateMinHits: 5})
			if b, _ := sealedIn(oldBuf); b.Layout != buffer.LayoutPages {
				t.Fatalf("rebuilt in layout %d", b.Layout)
			}
			stop := errors.New("stop")
			testHooks(old).afterChunk = func(p pass, _ int) error {
				if p == dailyPass {
					return stop // the minute pass written
				}
				return nil
			}
			if _, err := old.Flush(context.Background()); !errors.Is(err, stop) {
				t.Fatalf("Flush = %v, want the stop", err)
			}
			buf := oldBuf
			f, err := New(Config{Buffer: oldBuf, DB: e.db, Numbers: e.numbers, MaxOps: 2, PreallocateMinHits: 5, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if c.rebuild {
				buf, f = e.rebuilt(t, sealed.ID, counts, c.finish, Config{MaxOps: 2, PreallocateMinHits: 5})
			}
			if sent, err := f.Flush(context.Background()); err != nil || !sent {
				t.Fatalf("Flush = %v, %v", sent, err)
			}
			if b, _ := sealedIn(buf); b != nil {
				t.Fatal("not acknowledged")
			}
			if c.finish == buffer.LayoutPages {
				e.checkTails(t, none)
				return
			}
			want := bucketcheck.Counts{Minute: e.want["minutes"], Daily: e.want["daily"], Monthly: e.want["monthly"], Sites: e.want["sites"]}
			rec := &quiet{TB: t}
			if r := bucketcheck.CompareAll(rec, want, bucketcheck.Read(t, e.db)); r.Dup[bucket.Minute] == 0 {
				t.Errorf("rebuilt in the other layout, yet no minute count twice (%v): the test shows nothing", r)
			}
		})
	}
}

// quiet records Errorf calls instead of failing.
type quiet struct {
	testing.TB
	errs int
}

func (q *quiet) Errorf(string, ...any) { q.errs++ }

// A proposal that meets another writer's plan (a duplicate key in the
// insertMany of proposals) gives way to it: the others of the same call
// go in, and the plan read back is the other writer's, never this one's.
func TestPlanProposalMeetsAnotherWriters(t *testing.T) {
	e := newTailEnv(t, 2)
	pl := e.f.maint.plans
	ctx := context.Background()
	sec := time.Date(2024, 2, 1, 0, 10, 0, 0, time.UTC).Unix()
	theirs := bucket.NewPlan(bucket.Daily, "a.example", sec, []string{"/theirs"}, 3)
	if _, err := pl.colls[bucket.Daily].InsertOne(ctx, theirs.Doc()); err != nil {
		t.Fatal(err)
	}
	mine := bucket.NewPlan(bucket.Daily, "a.example", sec, []string{"/mine"}, 1)
	other := bucket.NewPlan(bucket.Daily, "b.example", sec, nil, 2)
	out := map[planKey]*bucket.Plan{}
	lost, err := pl.insert(ctx, []*bucket.Plan{&mine, &other}, out)
	if err != nil {
		t.Fatal(err)
	}
	mk, ok := planKey{bucket.Daily, "a.example", mine.Start}, planKey{bucket.Daily, "b.example", other.Start}
	if !slices.Equal(lost, []planKey{mk}) || len(out) != 1 || out[ok] == nil {
		t.Fatalf("lost %v, inserted %v; want a.example's proposal lost, b.example's in", lost, out)
	}
	if ins, calls, dups := pl.inserts.Load(), pl.insertCalls.Load(), pl.dups.Load(); ins != 2 || calls != 1 || dups != 1 {
		t.Errorf("%d plans inserted in %d calls, %d duplicates; want 2, 1, 1", ins, calls, dups)
	}
	// What the batch routes by: the plan in, read by a find.
	pl.mu.Lock()
	delete(pl.cache, mk)
	pl.mu.Unlock()
	got, err := pl.get(ctx, []planKey{mk, ok}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := got[mk]; p == nil || !slices.Equal(p.Hot, []string{"/theirs"}) || p.Shards != 3 {
		t.Errorf("a.example's plan: %+v, want the other writer's", got[mk])
	}
	if p := got[ok]; p == nil || p.Shards != 2 {
		t.Errorf("b.example's plan: %+v, want this writer's", got[ok])
	}
}

// TestMinuteTailsByWriter: three writers send cold pages of the same
// minutes, the same pages among them. A minute's cold pages go to the
// tail of each writer's shard (its number mod bucket.MinuteTailShards),
// so no one minute tail takes every writer's batch; a daily or monthly
// cold page's entries are in the one shard of the page, whoever writes
// it. A batch sent again after a lost reply goes to the same shard:
// every page counts once.
func TestMinuteTailsByWriter(t *testing.T) {
	e := newTailEnv(t, 16)
	writers := []*env{e}
	for i := range 2 {
		buf := testenv.OpenBuffer(t, filepath.Join(t.TempDir(), fmt.Sprintf("w%d.db", i)), buffer.Options{})
		w := &env{srv: e.srv, db: e.db, buf: buf, want: e.want, numbers: e.numbers, tails: true}
		w.f = w.newFlusher(t, Config{MaxOps: 16, PreallocateMinHits: 5})
		writers = append(writers, w)
	}
	var all []hit
	for i, w := range writers {
		hs := append(pagesAt(t, "a.example", "/c/", 3, "2024-03-10T10:00:00Z"),
			hit{"a.example", fmt.Sprintf("/own/%d", i), "2024-03-10T10:00:50Z", 1})
		all = append(all, hs...)
		w.commit(t, hs...)
	}
	e.srv.DropNextReply()
	if _, err := writers[1].f.Flush(context.Background()); err == nil {
		t.Fatal("the second writer's reply was not lost")
	}
	for _, w := range writers {
		w.flush(t)
	}
	e.checkTails(t, coldIDs(t, all))
	ctx := context.Background()
	tails := func(coll, siteField, pageField string) []bson.Raw {
		t.Helper()
		cur, err := e.db.Collection(coll).Find(ctx, bson.D{{Key: siteField, Value: "a.example"},
			{Key: pageField, Value: bson.D{{Key: "$gte", Value: "~0"}, {Key: "$lt", Value: "~:"}}}})
		if err != nil {
			t.Fatal(err)
		}
		var docs []bson.Raw
		if err := cur.All(ctx, &docs); err != nil {
			t.Fatal(err)
		}
		return docs
	}
	// The minute's tails: one per writer, each applied by its writer
	// alone, in the writer's shard.
	minutes := tails("minutes", "site", "page")
	if len(minutes) != len(writers) {
		t.Fatalf("%d minute tails, want %d (one per writer)", len(minutes), len(writers))
	}
	numbers := map[int]bool{}
	for _, d := range minutes {
		id := d.Lookup("_id").StringValue()
		elems, err := d.Lookup(bucket.FieldApplied).Document().Elements()
		if err != nil || len(elems) != 1 {
			t.Fatalf("%s: applied %v (%v), want one writer", id, elems, err)
		}
		n, err := strconv.Atoi(elems[0].Key())
		if err != nil {
			t.Fatal(err)
		}
		numbers[n] = true
		if want := bucket.TailPage(n % bucket.MinuteTailShards); !strings.HasSuffix(id, want) {
			t.Errorf("writer %d's minute tail is %s, want its shard %s", n, id, want)
		}
	}
	if len(numbers) != len(writers) {
		t.Errorf("minute tails' writers %v, want %d", numbers, len(writers))
	}
	// The day's: each page's entry in one shard, whoever wrote it.
	in := map[string]int{}
	for _, d := range tails("daily", "metadata.site", "metadata.page") {
		pages, err := d.Lookup(bucket.FieldPages).Document().Elements()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pages {
			in[p.Key()]++
		}
	}
	if len(in) != 3+len(writers) {
		t.Errorf("daily tails hold %d pages, want %d", len(in), 3+len(writers))
	}
	for p, n := range in {
		if n != 1 {
			t.Errorf("daily: %s in %d tails, want 1", p, n)
		}
	}
}
