package flusher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/measure"
)

// A tail that has no room for a batch's share, or a share too large for
// one update: the share goes to spill documents, every page counts
// exactly once. In every test here a.example's daily tail of 2024-03-10
// (one shard, by the plan inserted beforehand) holds 30 pages, and the
// batch under test brings it 17 more, for which it has no room: MongoDB
// refuses the update (mongotest's MaxDocSize, a few kB, stands for its
// 16 MiB), or the tail's own size bound does (tailBounds, a few kB too).
// b.example's 60 pages of the batch go to its two daily shards (its plan
// proposed without history; 4 pages each before), each with room,
// updated in the same bulk write as a.example's tail: in the size mode
// each share is more than one update may carry (the part bound), so it
// goes to spill documents in parts, its tail untouched.

// spillMode is how a tail is told it has no room.
type spillMode string

const (
	refusedMode spillMode = "refused by the server"
	boundMode   spillMode = "over its size bound"
)

// pagesAt returns n cold pages of site, prefix and a number, one hit
// each, 15 seconds apart from from (RFC 3339).
func pagesAt(t *testing.T, site, prefix string, n int, from string) []hit {
	t.Helper()
	at, err := time.Parse(time.RFC3339, from)
	if err != nil {
		t.Fatal(err)
	}
	hs := make([]hit, n)
	for i := range hs {
		hs[i] = hit{site, fmt.Sprintf("%s%d", prefix, i), at.Add(time.Duration(i) * 15 * time.Second).Format(time.RFC3339), 1}
	}
	return hs
}

// spillEnv is a tail env whose a.example daily tail of 2024-03-10 holds
// 30 pages (prefill), with the batch under test committed, not sealed,
// and the bound of mode set (see above).
type spillEnv struct {
	*env
	mode   spillMode
	bounds *tailBounds               // boundMode: every flusher's
	maxDoc int                       // refusedMode: the server's bound
	hits   []hit                     // every hit committed
	batch  map[string]measure.Vector // the counts of the batch under test
	room   int64                     // the bound's room over the tail after the prefill
}

// spillBatch is the batch under test: a.example's 15 new pages and 2 of
// its prefill again, b.example's 60.
func spillBatch(t *testing.T) []hit {
	a := pagesAt(t, "a.example", "/q/", 15, "2024-03-10T10:10:00Z")
	a = append(a, hit{"a.example", "/p/0", "2024-03-10T10:14:00Z", 2}, hit{"a.example", "/p/1", "2024-03-10T10:14:15Z", 1})
	return append(a, pagesAt(t, "b.example", "/b/", 60, "2024-03-10T10:20:00Z")...)
}

func newSpillEnv(t *testing.T, mode spillMode) *spillEnv {
	t.Helper()
	e := &spillEnv{env: newTailEnv(t, 16), mode: mode}
	ctx := context.Background()
	day := mustUnix(t, "2024-03-10T00:00:00Z")
	for _, p := range []bucket.Plan{
		bucket.NewPlan(bucket.Daily, "a.example", day, nil, 1),
		bucket.NewPlan(bucket.Monthly, "a.example", day, nil, 8),
	} {
		if _, err := e.db.Collection(map[bucket.Level]string{bucket.Daily: "daily", bucket.Monthly: "monthly"}[p.Level]).InsertOne(ctx, p.Doc()); err != nil {
			t.Fatal(err)
		}
	}
	// b.example's daily tails exist too: its updates share the bulk
	// write of a.example's refused one.
	e.add(t, e.env, pagesAt(t, "a.example", "/p/", 30, "2024-03-10T10:00:00Z")...)
	e.add(t, e.env, pagesAt(t, "b.example", "/c/", 4, "2024-03-10T09:00:00Z")...)
	e.f = e.newSpillFlusher(t)
	e.flush(t)
	raw, err := e.db.Collection("daily").FindOne(ctx, bson.D{{Key: "_id", Value: "20240310/a.example~0"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	size, ok := raw.Lookup(bucket.FieldSize).AsInt64OK()
	if !ok {
		t.Fatalf("the tail has no size: %v", raw)
	}
	e.room = size / 3 // about 10 pages more; the batch brings 17
	switch mode {
	case refusedMode:
		e.maxDoc = len(raw) + int(e.room)
		e.srv.MaxDocSize(e.maxDoc)
	case boundMode:
		e.bounds = &tailBounds{tail: size + e.room, part: 2 * size / 3, statement: 1 << 30}
		testHooks(e.f).tailBounds = e.bounds
	}
	e.batch = e.add(t, e.env, spillBatch(t)...)
	return e
}

// add commits hits through env, records them and returns their counts.
func (e *spillEnv) add(t *testing.T, in *env, hits ...hit) map[string]measure.Vector {
	t.Helper()
	e.hits = append(e.hits, hits...)
	return in.commit(t, hits...)
}

// newSpillFlusher returns a new flusher on e's buffer with the mode's
// bound (MaxOps 16: a daily pass's tails of both sites in one bulk
// write).
func (e *spillEnv) newSpillFlusher(t *testing.T) *Flusher {
	t.Helper()
	f := e.newFlusher(t, Config{MaxOps: 16, PreallocateMinHits: 5})
	if e.bounds != nil {
		testHooks(f).tailBounds = e.bounds
	}
	return f
}

// coldIDs returns the page bucket ids of every page of hits, by level:
// they are all cold.
func coldIDs(t *testing.T, hits []hit) [bucket.Levels][]string {
	t.Helper()
	var out [bucket.Levels][]string
	for l := range bucket.Level(bucket.Levels) {
		seen := map[string]bool{}
		for _, h := range hits {
			start, _ := l.Bounds(mustUnix(t, h.at))
			id := l.ID(start, h.site, h.page)
			if !seen[id] {
				seen[id] = true
				out[l] = append(out[l], id)
			}
		}
	}
	return out
}

// spillDoc is a spill document found: its level, site, shard and part.
type spillDoc struct {
	level bucket.Level
	site  string
	shard int
	part  string
}

// check compares every count with the hits (bucketcheck, through
// checkTails: each page in its tails and spills, no cold page with a
// bucket of its own) and checks the spills: a.example's daily share in
// one spill document, b.example's daily shares in parts in the size mode
// and in no spill when MongoDB refuses; nothing else spilled; the tail
// of a.example holding the prefill alone; every tail within the bound.
func (e *spillEnv) check(t *testing.T) {
	t.Helper()
	e.checkTails(t, coldIDs(t, e.hits))
	ctx := context.Background()
	var spills []spillDoc
	for l, name := range []string{"minutes", "daily", "monthly"} {
		level := bucket.Level(l)
		cur, err := e.db.Collection(name).Find(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		var raws []bson.Raw
		if err := cur.All(ctx, &raws); err != nil {
			t.Fatal(err)
		}
		for _, raw := range raws {
			page, _ := raw.Lookup(strings.Split(level.PageField(), ".")...).StringValueOK()
			site, _ := raw.Lookup(strings.Split(level.SiteField(), ".")...).StringValueOK()
			shard, tail := bucket.TailShard(page)
			if !tail {
				continue
			}
			switch e.mode {
			case refusedMode:
				if len(raw) > e.maxDoc {
					t.Errorf("%s %s: %d bytes, over the server's bound %d", name, page, len(raw), e.maxDoc)
				}
			case boundMode:
				if size, _ := raw.Lookup(bucket.FieldSize).AsInt64OK(); size > e.bounds.tail {
					t.Errorf("%s %s: size %d over the bound %d", name, page, size, e.bounds.tail)
				}
			}
			if _, part, ok := strings.Cut(page, "."); ok {
				fields := strings.Split(part, ".")
				spills = append(spills, spillDoc{level, site, shard, fields[len(fields)-1]})
				continue
			}
			if level == bucket.Daily && site == "a.example" {
				var keys []string
				if err := level.DecodeTail(raw, func(c *bucket.TailCell) { keys = append(keys, c.Page) }); err != nil {
					t.Fatal(err)
				}
				slices.Sort(keys)
				want := make([]string, 30)
				for i := range want {
					want[i] = fmt.Sprintf("/p/%d", i)
				}
				slices.Sort(want)
				if !slices.Equal(keys, want) {
					t.Errorf("a.example's daily tail holds %d pages, want the prefill's 30: %v", len(keys), keys)
				}
			}
		}
	}
	parts := map[string][]string{}
	for _, s := range spills {
		if s.level != bucket.Daily {
			t.Errorf("a %s spill of %s: only daily shares spill here", s.level, s.site)
			continue
		}
		k := fmt.Sprintf("%s~%d", s.site, s.shard)
		parts[k] = append(parts[k], s.part)
	}
	if p := parts["a.example~0"]; !slices.Equal(p, []string{"0"}) {
		t.Errorf("a.example's daily share spilled in parts %v, want [0]", p)
	}
	delete(parts, "a.example~0")
	switch e.mode {
	case refusedMode:
		if len(parts) > 0 {
			t.Errorf("spills besides a.example's: %v", parts)
		}
	case boundMode:
		if len(parts) != 2 {
			t.Errorf("b.example's daily shares spilled in %v, want both shards in parts", parts)
		}
		for k, p := range parts {
			var got []int
			for _, s := range p {
				n, err := strconv.Atoi(s)
				if err != nil {
					t.Errorf("%s: part %q", k, s)
				}
				got = append(got, n)
			}
			slices.Sort(got)
			if len(got) < 2 || got[0] != 0 || got[len(got)-1] != len(got)-1 || len(slices.Compact(got)) != len(p) {
				t.Errorf("%s spilled in parts %v, want 0 to n-1, n ≥ 2", k, p)
			}
		}
	}
}

// TestTailFullSpillsExactly writes the batch under test in one attempt:
// the a.example daily tail has no room (refused by MongoDB mid bulk
// write, beside b.example's tails which take theirs; or over its size
// bound), so its share goes to a spill document; every page counts
// once. Before spills, the refused update failed the batch, for ever.
func TestTailFullSpillsExactly(t *testing.T) {
	for _, mode := range []spillMode{refusedMode, boundMode} {
		t.Run(string(mode), func(t *testing.T) {
			e := newSpillEnv(t, mode)
			e.flush(t)
			e.check(t)
			st := e.f.Stats()
			t.Logf("stats: %+v; proxy: %+v", st, e.srv.Faults())
			if mode == refusedMode && e.srv.Faults().TooLarge == 0 {
				t.Error("MongoDB (the proxy) refused no update: the test shows nothing")
			}
			if st.Tails.Spills == 0 || st.Tails.SpillDocs == 0 {
				t.Errorf("%d shares spilled in %d documents", st.Tails.Spills, st.Tails.SpillDocs)
			}
			// The next batch of the period: a.example's tail is full for
			// it too, b.example's takes it.
			e.add(t, e.env, hit{"a.example", "/q/0", "2024-03-10T11:00:00Z", 1}, hit{"a.example", "/r/1", "2024-03-10T11:00:00Z", 4},
				hit{"b.example", "/b/7", "2024-03-10T11:00:00Z", 1})
			e.flush(t)
			e.checkTails(t, coldIDs(t, e.hits))
		})
	}
}

// spillWrites returns the writes of the batch under test that a hook
// sees (bulk writes, whole inserts, spill inserts), in order, counting
// in a clean run.
func spillWrites(t *testing.T, mode spillMode) []string {
	t.Helper()
	e := newSpillEnv(t, mode)
	var writes []string
	h := testHooks(e.f)
	h.beforeBulk = func(n int) error { writes = append(writes, fmt.Sprintf("bulk write of %d", n)); return nil }
	h.beforeWhole = func(p pass, ids []string) { writes = append(writes, fmt.Sprintf("%s whole insert of %d", p, len(ids))) }
	h.beforeSpill = func(p pass, ids []string) { writes = append(writes, fmt.Sprintf("%s spill insert of %d", p, len(ids))) }
	e.flush(t)
	e.check(t)
	return writes
}

// TestTailSpillBatchSentTwice loses the reply to each write of the batch
// under test in turn (applied, the connection closed: mongotest's
// DropNextReply) and sends the batch again: the refused update, the
// spill's insert, every other write. Every page counts once.
func TestTailSpillBatchSentTwice(t *testing.T) {
	for _, mode := range []spillMode{refusedMode, boundMode} {
		writes := spillWrites(t, mode)
		t.Logf("%s: %d writes: %v", mode, len(writes), writes)
		if !slices.ContainsFunc(writes, func(w string) bool { return strings.Contains(w, "spill insert") }) {
			t.Fatalf("%s: no spill insert: the test shows nothing", mode)
		}
		for k := 1; k <= len(writes); k++ {
			t.Run(fmt.Sprintf("%s, reply to %s (%d) lost", mode, writes[k-1], k), func(t *testing.T) {
				e := newSpillEnv(t, mode)
				n := 0
				drop := func() {
					if n++; n == k {
						e.srv.DropNextReply()
					}
				}
				h := testHooks(e.f)
				h.beforeBulk = func(int) error { drop(); return nil }
				h.beforeWhole = func(pass, []string) { drop() }
				h.beforeSpill = func(pass, []string) { drop() }
				failed := 0
				for range 10 {
					if sent, err := e.f.Flush(context.Background()); err == nil && sent {
						break
					}
					failed++
				}
				if b, _ := e.sealed(); b != nil {
					t.Fatalf("batch %s never acknowledged", b.ID)
				}
				if failed == 0 || e.srv.Faults().DroppedReplies != 1 {
					t.Errorf("%d failed attempts, %d replies dropped: want the batch sent again after one", failed, e.srv.Faults().DroppedReplies)
				}
				e.check(t)
			})
		}
	}
}

// TestTailSpillResumedAtEveryChunk stops the batch under test after each
// of its chunks (progress saved) and resumes it with a new flusher (its
// plans and known buckets lost): every page counts once.
func TestTailSpillResumedAtEveryChunk(t *testing.T) {
	for _, mode := range []spillMode{refusedMode, boundMode} {
		e := newSpillEnv(t, mode)
		chunks := 0
		testHooks(e.f).afterChunk = func(pass, int) error { chunks++; return nil }
		e.flush(t)
		for n := 1; n <= chunks; n++ {
			t.Run(fmt.Sprintf("%s, stopped after chunk %d of %d", mode, n, chunks), func(t *testing.T) {
				e := newSpillEnv(t, mode)
				stop := errors.New("stop")
				testHooks(e.f).afterChunk = func(_ pass, chunk int) error {
					if chunk == n {
						return stop
					}
					return nil
				}
				if _, err := e.f.Flush(context.Background()); !errors.Is(err, stop) {
					t.Fatalf("Flush = %v, want the stop", err)
				}
				e.f = e.newSpillFlusher(t)
				e.flush(t)
				e.check(t)
			})
		}
	}
}

// TestTailSpillRebuilt loses the state dir of the batch under test after
// each of its chunks; rebuilt from the record (TestTailsRebuilt's way)
// and written by a new flusher, every page counts once.
func TestTailSpillRebuilt(t *testing.T) {
	for _, mode := range []spillMode{refusedMode, boundMode} {
		for n := 1; n <= 6; n++ {
			t.Run(fmt.Sprintf("%s, lost after chunk %d", mode, n), func(t *testing.T) {
				e := newSpillEnv(t, mode)
				stop := errors.New("state dir lost")
				testHooks(e.f).afterChunk = func(_ pass, chunk int) error {
					if chunk == n {
						return stop
					}
					return nil
				}
				if _, err := e.f.Flush(context.Background()); err == nil {
					t.Skipf("the batch has fewer than %d chunks", n)
				}
				batch, _ := e.sealed()
				buf, f := e.rebuilt(t, batch.ID, e.batch, batch.Layout, Config{MaxOps: 16, PreallocateMinHits: 5})
				if e.bounds != nil {
					testHooks(f).tailBounds = e.bounds
				}
				if sent, err := f.Flush(context.Background()); err != nil || !sent {
					t.Fatalf("rebuilt: Flush = %v, %v", sent, err)
				}
				if b, _ := sealedIn(buf); b != nil {
					t.Fatal("rebuilt batch not acknowledged")
				}
				e.check(t)
			})
		}
	}
}

// TestTailSpillTwoWriters has two writers (two buffers, two writer
// numbers) send their shares to a.example's full daily tail, the second
// losing a reply on the way: each share goes to a spill of its own
// writer and batch, every page counts once; then a share small enough
// for the room left goes to the tail itself.
func TestTailSpillTwoWriters(t *testing.T) {
	for _, mode := range []spillMode{refusedMode, boundMode} {
		t.Run(string(mode), func(t *testing.T) {
			e := newSpillEnv(t, mode)
			buf2 := testenv.OpenBuffer(t, t.TempDir()+"/second.db", buffer.Options{})
			second := &env{srv: e.srv, db: e.db, buf: buf2, want: e.want, numbers: e.numbers, tails: true}
			f2 := second.newFlusher(t, Config{MaxOps: 16, PreallocateMinHits: 5})
			if e.bounds != nil {
				testHooks(f2).tailBounds = e.bounds
			}
			e.add(t, second, pagesAt(t, "a.example", "/r/", 15, "2024-03-10T12:00:00Z")...)
			e.add(t, second, hit{"a.example", "/q/3", "2024-03-10T12:30:00Z", 1}, hit{"a.example", "/p/2", "2024-03-10T12:30:00Z", 1})
			spilled := 0
			testHooks(f2).beforeSpill = func(pass, []string) {
				if spilled++; spilled == 1 {
					e.srv.DropNextReply()
				}
			}
			if _, err := f2.Flush(context.Background()); err == nil {
				t.Fatal("the second writer's reply was not lost")
			}
			e.flush(t)
			if sent, err := f2.Flush(context.Background()); err != nil || !sent {
				t.Fatalf("second writer: Flush = %v, %v", sent, err)
			}
			e.checkTails(t, coldIDs(t, e.hits))
			ctx := context.Background()
			n, err := e.db.Collection("daily").CountDocuments(ctx, bson.D{
				{Key: "metadata.site", Value: "a.example"},
				{Key: "metadata.page", Value: bson.D{{Key: "$gt", Value: "~0."}, {Key: "$lt", Value: "~0/"}}}})
			if err != nil || n != 2 {
				t.Errorf("a.example's daily spills: %d (%v), want 2 (one per writer)", n, err)
			}
			// A share that fits the room left goes to the tail.
			e.add(t, second, hit{"a.example", "/s", "2024-03-10T13:00:00Z", 1})
			if sent, err := f2.Flush(context.Background()); err != nil || !sent {
				t.Fatalf("second writer: Flush = %v, %v", sent, err)
			}
			e.checkTails(t, coldIDs(t, e.hits))
			raw, err := e.db.Collection("daily").FindOne(ctx, bson.D{{Key: "_id", Value: "20240310/a.example~0"}}).Raw()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := raw.LookupErr(bucket.FieldPages, "/s"); err != nil {
				t.Error("the small share did not go to the tail")
			}
		})
	}
}

// TestTailFilledByItsBatchIsNotSpilled: a tail takes the batch's share,
// which leaves it without room for that share again, and the reply is
// lost. The batch sent again finds the tail carrying it (the fallback's
// find), not full: nothing goes to a spill, every page counts once.
func TestTailFilledByItsBatchIsNotSpilled(t *testing.T) {
	e := newSpillEnv(t, boundMode)
	ctx := context.Background()
	day := mustUnix(t, "2024-03-10T00:00:00Z")
	share := bucket.NewTail(bucket.Daily, "a.example", 0, day)
	for k, v := range e.batch {
		site, page, sec, err := buffer.DecodeKey([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		if string(site) == "a.example" {
			share.Add(string(page), sec, &v)
		}
	}
	growth := share.Growth(bucket.NumberedGuard(1, 2))
	e.bounds.tail += 3*growth/2 - e.room // room for the share once, not twice
	bulks := 0
	testHooks(e.f).beforeBulk = func(int) error {
		if bulks++; bulks == 1 { // the daily tails' (a.example's alone: b.example's spill)
			e.srv.DropNextReply()
		}
		return nil
	}
	if _, err := e.f.Flush(ctx); err == nil {
		t.Fatal("the reply was not lost")
	}
	finds := e.f.Stats().Finds
	e.flush(t)
	e.checkTails(t, coldIDs(t, e.hits))
	if e.f.Stats().Finds == finds {
		t.Error("the batch sent again found no tail carrying it: the test shows nothing")
	}
	raw, err := e.db.Collection("daily").FindOne(ctx, bson.D{{Key: "_id", Value: "20240310/a.example~0"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.LookupErr(bucket.FieldPages, "/q/3"); err != nil {
		t.Error("a.example's share is not in its tail")
	}
	if size, _ := raw.Lookup(bucket.FieldSize).AsInt64OK(); size+growth <= e.bounds.tail {
		t.Errorf("the tail has room for the share again (size %d, growth %d, bound %d): the test shows nothing", size, growth, e.bounds.tail)
	}
	n, err := e.db.Collection("daily").CountDocuments(ctx, bson.D{{Key: "metadata.site", Value: "a.example"},
		{Key: "metadata.page", Value: bson.D{{Key: "$gt", Value: "~0."}, {Key: "$lt", Value: "~0/"}}}})
	if err != nil || n != 0 {
		t.Errorf("a.example's share spilled too: %d spill documents (%v)", n, err)
	}
}
