package verify

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/internal/fill"
	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
)

const tailSite = "tails.test"

// Pages of the fixture: "/" hot, "/both" in its bucket and a tail, the
// others cold: a name that needs escaping as a field, one that must not
// be echoed (U+202E), /x and /y, and "(other)": the pages of a minute
// past max_pages_per_minute (4).
const (
	pHot     = "/"
	pBoth    = "/both"
	pEscaped = "/a.b$c%"
	pEvil    = "/\u202eevil"
)

// tailFixture writes a combined log of the fixture's hits, one every 5
// seconds from 2026-03-31 23:55 to 2026-04-01 00:05 (a day and a month
// begin), and returns its path and the hits as the parser counts them.
func tailFixture(t *testing.T) (string, []fill.Hit) {
	t0 := time.Date(2026, 3, 31, 23, 55, 0, 0, time.UTC)
	pages := []string{pHot, pBoth, pEscaped, pEvil, "/x", "/y", pBoth, pHot}
	statuses := []int{200, 200, 304, 404, 500, 200, 301, 101}
	var b bytes.Buffer
	var hits []fill.Hit
	seen := map[int64]map[string]bool{} // pages of each minute, for (other)
	for i := range 120 {
		at := t0.Add(time.Duration(i) * 5 * time.Second)
		page := pages[i%len(pages)]
		agent := loggen.Agents[i%len(loggen.Agents)]
		st, size := statuses[i%len(statuses)], 100+i*37%900
		fmt.Fprintf(&b, "10.0.0.%d - - [%s] \"GET %s HTTP/1.1\" %d %d \"-\" \"%s\"\n",
			i%200, at.Format("02/Jan/2006:15:04:05 -0700"), page, st, size, agent.UA)
		m := at.Unix() / 60
		if seen[m] == nil {
			seen[m] = map[string]bool{}
		}
		if !seen[m][page] && len(seen[m]) >= 4 {
			page = string(parser.Other)
		} else {
			seen[m][page] = true
		}
		hits = append(hits, fill.Hit{Page: page, At: at, F: measure.Hit{Status: st, Bot: agent.Class, Bytes: uint64(size), RT: -1}})
	}
	path := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, hits
}

// tailsLayout: "/" hot; every other hit of /both in shard 0; (other) in
// shard 0, the other cold pages in shard 1 (0 in a minute tail, which
// has no other).
func tailsLayout(hotInTails bool) fill.Layout {
	return fill.Layout{
		Tail: func(l bucket.Level, i int, h fill.Hit) int {
			switch h.Page {
			case pHot:
				if hotInTails {
					return 0
				}
				return -1
			case pBoth:
				if i%2 == 0 {
					return -1
				}
				return 0
			case string(parser.Other):
				return 0
			}
			if l == bucket.Minute {
				return 0 // a minute's tail is one document
			}
			return 1
		},
		Hot:    []string{pHot},
		Shards: 2,
	}
}

func verifyTails(t *testing.T, db *mongo.Database, path string, maxSums int) (*Report, string) {
	t.Helper()
	rep, err := Verify(context.Background(), []string{path}, Options{
		Parser:  parser.Config{Format: "combined", Site: tailSite, Page: parser.PageConfig{MaxPagesPerMinute: 4}},
		MaxLine: 1 << 16, Jobs: 1, AllHosts: true, DB: db, MaxSums: maxSums,
	})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep.Write(&out)
	return rep, out.String()
}

// Verify judges the tails' entries with their pages' buckets: a correct
// split passes, as the same counts in page buckets alone do, in one pass
// or a day at a time; a tail's cell off by one is a difference naming
// the page, escaped; a hot page's hits in a tail are lost from its
// bucket's seconds and minutes.
func TestVerifyTails(t *testing.T) {
	path, hits := tailFixture(t)
	pages := map[string]bool{}
	for _, h := range hits {
		pages[h.Page] = true
	}
	if !pages[string(parser.Other)] || len(pages) != 7 {
		t.Fatalf("pages %v", pages)
	}
	srv := mongotest.Start(t)
	buckets, split, misrouted := srv.Database(t), srv.Database(t), srv.Database(t)
	fill.Docs(t, buckets, tailSite, hits, fill.Layout{})
	fill.Docs(t, split, tailSite, hits, tailsLayout(false))
	fill.Docs(t, misrouted, tailSite, hits, tailsLayout(true))

	base, out := verifyTails(t, buckets, path, 0)
	if !base.Exact() || base.NOthers != 0 || base.Hits != 120 || base.Finer != 0 || base.Tails != [bucket.Levels]uint64{} {
		t.Fatalf("page buckets alone: %+v\n%s", base, out)
	}
	// The tails written: a minute's, a day's and a month's of each shard
	// holding a cold hit.
	lay := tailsLayout(false)
	tails := map[string]bool{}
	var wantTails [bucket.Levels]uint64
	for l := range bucket.Level(bucket.Levels) {
		for i, h := range hits {
			if shard := lay.Tail(l, i, h); shard >= 0 {
				start, _ := l.Bounds(h.At.Unix())
				if id := l.ID(start, tailSite, bucket.TailPage(shard)); !tails[id] {
					tails[id] = true
					wantTails[l]++
				}
			}
		}
	}
	if wantTails[bucket.Minute] != 10 || wantTails[bucket.Daily] != 4 || wantTails[bucket.Monthly] != 4 {
		t.Fatalf("tails %v", wantTails)
	}
	for _, maxSums := range []int{0, 10} {
		rep, out := verifyTails(t, split, path, maxSums)
		if maxSums > 0 && rep.Passes < 2 {
			t.Errorf("max sums %d: %d passes", maxSums, rep.Passes)
		}
		if !rep.Exact() || rep.NOthers != 0 || rep.Unknown != 0 || rep.Tails != wantTails || rep.Finer == 0 || rep.Buckets != base.Buckets || rep.Counters+rep.Finer != base.Counters {
			t.Errorf("split, max sums %d: %+v (page buckets alone: %d counters)\n%s", maxSums, rep, base.Counters, out)
		}
		if !strings.Contains(out, "exact: 120 hits") || !strings.Contains(out, "18 tails (10 minute, 4 daily, 4 monthly)") || !strings.Contains(out, "finer than their tails hold") {
			t.Errorf("split, max sums %d:\n%s", maxSums, out)
		}
	}

	// One more view of /\u202eevil in a minute tail (a counter inside
	// the range: MongoDB above the files is a difference), one less in
	// a daily tail's hour, one lost 2xx of (other) in a monthly tail's
	// day (counters reaching outside the range: judged for lost hits).
	ctx := context.Background()
	var colls bucket.Collections
	var evil time.Time // its first hit
	for _, h := range hits {
		if h.Page == pEvil {
			evil = h.At
			break
		}
	}
	if evil.IsZero() || evil.Day() != 31 {
		t.Fatalf("the page's first hit at %v", evil)
	}
	for _, c := range []struct {
		l     bucket.Level
		sec   int64
		shard int
		path  string
		n     int32
	}{
		{bucket.Minute, evil.Unix(), 0, bucket.TailField(pEvil) + ".v", 1},
		{bucket.Daily, evil.Unix(), 1, bucket.TailField(pEvil) + ".23.v", -1},
		{bucket.Monthly, time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC).Unix(), 0, bucket.TailField(string(parser.Other)) + ".1." + bucket.TailCode(measure.Status2xx), -1},
	} {
		start, _ := c.l.Bounds(c.sec)
		id := c.l.ID(start, tailSite, bucket.TailPage(c.shard))
		res, err := split.Collection(colls.Name(c.l)).UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$inc", Value: bson.D{{Key: c.path, Value: c.n}}}})
		if err != nil || res.MatchedCount != 1 {
			t.Fatalf("%s %s: %v, %+v", id, c.path, err, res)
		}
	}
	rep, out := verifyTails(t, split, path, 0)
	// The minute's view one counter more; the hour's view is the hour's
	// and the day's total: two lost, and the 2xx one.
	if rep.Exact() || rep.NDiffs != 4 || rep.More != 1 || rep.Lost != 3 {
		t.Errorf("altered tails: %+v\n%s", rep, out)
	}
	for _, want := range []string{
		"minute bucket " + evil.Format("200601021504") + `/tails.test/\u202eevil with its entries in the tails: totalViews: MongoDB`,
		`daily bucket 20260331/tails.test/\u202eevil with its entries in the tails: hourly.23: MongoDB`,
		`daily bucket 20260331/tails.test/\u202eevil with its entries in the tails: daily: MongoDB`,
		`monthly bucket 202604/tails.test(other) with its entries in the tails: measures.status_2xx.1: MongoDB`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\u202e") {
		t.Errorf("a page's invisible character echoed:\n%s", out)
	}

	// The hot page's hits in a tail: its views per minute and hour are
	// there, its seconds and minutes not in its bucket.
	rep, out = verifyTails(t, misrouted, path, 0)
	if rep.Exact() || rep.More != 0 || rep.Lost == 0 || !strings.Contains(out, "bucket 202603312355/tails.test/ with its entries in the tails: seconds.0: MongoDB 0, files 1 (1 lost)") {
		t.Errorf("a hot page in a tail: %+v\n%s", rep, out)
	}
	for _, d := range rep.Diffs {
		if !strings.HasSuffix(d.ID, tailSite+pHot) || !strings.HasPrefix(d.Path, "seconds.") && !strings.HasPrefix(d.Path, "minute.") {
			t.Errorf("a hot page in a tail: %+v", d)
		}
	}
}
