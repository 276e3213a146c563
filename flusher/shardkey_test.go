package flusher

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/measure"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// commandLog records the commands a client sends.
type commandLog struct {
	mu   sync.Mutex
	cmds []bson.Raw
}

func (l *commandLog) started(_ context.Context, ev *event.CommandStartedEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cmds = append(l.cmds, append(bson.Raw(nil), ev.Command...))
}

func (l *commandLog) take() []bson.Raw {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.cmds
	l.cmds = nil
	return c
}

// monitored returns e's database through a client whose commands are
// recorded in the returned log.
func (e *env) monitored(t *testing.T) (*mongo.Database, *commandLog) {
	t.Helper()
	log := &commandLog{}
	client, err := mongo.Connect(options.Client().ApplyURI(e.srv.URI()).
		SetMonitor(&event.CommandMonitor{Started: log.started}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	return client.Database(e.db.Name()), log
}

// checkBucketFilter checks that the filter f names a bucket of coll by
// its _id followed by its whole shard key, with values that agree with the
// _id, and returns the fields after them.
func checkBucketFilter(t *testing.T, coll string, f bson.D) (rest bson.D) {
	t.Helper()
	keys := []string{"_id", "site", "page", "timestamp"}
	layout := "200601021504"
	switch coll {
	case "daily":
		keys, layout = []string{"_id", "metadata.site", "metadata.page", "metadata.date"}, "20060102"
	case "monthly":
		keys, layout = []string{"_id", "metadata.site", "metadata.page", "metadata.date"}, "200601"
	}
	if len(f) < len(keys) {
		t.Errorf("%s filter %v: want %v first", coll, f, keys)
		return nil
	}
	for i, k := range keys {
		if f[i].Key != k {
			t.Errorf("%s filter %v: field %d is %q, want %q", coll, f, i, f[i].Key, k)
			return nil
		}
	}
	id, _ := f[0].Value.(string)
	site, _ := f[1].Value.(string)
	page, _ := f[2].Value.(string)
	date, ok := f[3].Value.(bson.DateTime)
	if !ok {
		t.Errorf("%s filter %v: %s is %T, want a date", coll, f, keys[3], f[3].Value)
		return nil
	}
	if want := date.Time().UTC().Format(layout) + "/" + site + page; id != want {
		t.Errorf("%s filter %v: _id %q, shard key says %q", coll, f, id, want)
	}
	return f[len(keys):]
}

// Every update and find the flusher sends names its bucket by _id and the
// whole shard key, and keeps the exactly-once guard: updates only where
// the writer's applied entry $ne the batch, finds only buckets carrying
// it, by buffer id (first batch) and numbered (second).
func TestFiltersCarryTheShardKey(t *testing.T) {
	e := newEnv(t, 4)
	db, log := e.monitored(t)
	e.f = e.newFlusher(t, Config{MaxOps: 4})
	e.f.colls = [3]*mongo.Collection{db.Collection("minutes"), db.Collection("daily"), db.Collection("monthly")}

	// First batch: every bucket is missing, and thought to exist (the
	// three-step path: step 1, find, insert, step 3); second: every
	// bucket exists and is known (step 1 only).
	for round := range 2 {
		testHooks(e.f).exists = nil // round 1: the known set
		if round == 0 {
			testHooks(e.f).exists = func(pass, string) bool { return true }
		}
		e.commit(t, small()...)
		if round == 1 { // the second batch numbered: both guard forms checked
			if err := e.f.number(context.Background()); err != nil || e.buf.Number() == 0 {
				t.Fatalf("writer number: %v", err)
			}
		}
		sealed, err := e.buf.Seal(buffer.Seal{})
		if err != nil {
			t.Fatal(err)
		}
		e.flush(t)
		g := e.f.guard(sealed.ID)
		seen := map[string]int{}
		for _, cmd := range log.take() {
			var d bson.D
			if err := bson.Unmarshal(cmd, &d); err != nil {
				t.Fatal(err)
			}
			op, _ := d[0].Value.(string)
			switch d[0].Key {
			case "update":
				ups, _ := toMap(d)["updates"].(bson.A)
				for _, u := range ups {
					q, _ := toMap(u.(bson.D))["q"].(bson.D)
					rest := checkBucketFilter(t, op, q)
					want := bson.D{{Key: g.Field, Value: bson.D{{Key: "$ne", Value: g.Batch}}}}
					if !equalD(rest, want) {
						t.Errorf("%s update filter %v: after the shard key %v, want the guard %v", op, q, rest, want)
					}
					seen[op+" update"]++
				}
			case "find":
				q, _ := toMap(d)["filter"].(bson.D)
				if len(q) != 2 || q[0].Key != "$or" || !equalD(q[1:], bson.D{{Key: g.Field, Value: g.Batch}}) {
					t.Errorf("%s find filter %v: want {$or: [...], %s: %v}", op, q, g.Field, g.Batch)
					continue
				}
				for _, b := range q[0].Value.(bson.A) {
					if rest := checkBucketFilter(t, op, b.(bson.D)); len(rest) != 0 {
						t.Errorf("%s find: $or branch %v has more than _id and shard key", op, b)
					}
				}
				seen[op+" find"]++
			}
		}
		want := map[string]int{"minutes update": 8, "daily update": 4, "monthly update": 4, "minutes find": 1, "daily find": 1, "monthly find": 1}
		if round == 1 {
			want = map[string]int{"minutes update": 4, "daily update": 2, "monthly update": 2}
		}
		for k, n := range want {
			if seen[k] != n {
				t.Errorf("round %d: %d %ss, want %d (all: %v)", round, seen[k], k, n, seen)
			}
		}
		e.check(t)
	}
}

// equalD compares two filters field by field, in order.
func equalD(a, b bson.D) bool {
	x, err1 := bson.Marshal(a)
	y, err2 := bson.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// The zero-filled documents keep their field order: users match the whole
// metadata subdocument, {metadata: {date, site, page}}.
func TestDocumentFieldOrderUnchanged(t *testing.T) {
	var c Chunker
	for _, p := range []pass{minutePass, dailyPass, monthlyPass} {
		c.Reset(p.level(), 4)
		c.Add(keyAt(t, "a.example", "/x", "2024-03-05T10:20:30Z"), new(measure.OfViews(1)))
		doc := c.Docs[0].Zero()
		var keys []string
		for _, el := range doc {
			keys = append(keys, el.Key)
		}
		want := map[pass]string{
			minutePass:  "_id site page timestamp totalViews seconds measures applied",
			dailyPass:   "_id metadata daily hourly minute measures applied",
			monthlyPass: "_id metadata total daily measures applied",
		}[p]
		if got := strings.Join(keys, " "); got != want {
			t.Errorf("%s document fields %q, want %q", p, got, want)
		}
		if p != minutePass {
			meta := doc[1].Value.(bson.D)
			if meta[0].Key != "date" || meta[1].Key != "site" || meta[2].Key != "page" {
				t.Errorf("%s metadata %v: want date, site, page", p, meta)
			}
		}
	}
}

func keyAt(t *testing.T, site, page, at string) []byte {
	t.Helper()
	ts, err := time.Parse(time.RFC3339, at)
	if err != nil {
		t.Fatal(err)
	}
	return buffer.AppendKey(nil, []byte(site), []byte(page), ts.Unix())
}
