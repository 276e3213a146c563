package bucketcheck

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/internal/mongotest"
)

// dimsLog has lines of every kind of loggen's lists, on two UTC days:
//
//	1  192.0.2.7 (DE, AS64496)       google.com search     Chrome Windows desktop
//	2  3fff:200::1 (US, AS64498)     (self) internal       Googlebot
//	3  198.18.1.2 (BR, no AS)        (spam) spam           curl
//	4  3fff:400::9 (no country, AS)  (invalid) other       Chrome Windows desktop
//	5  1.2.3.4 (no network)          (direct) direct       "-" (other suspect)
//	6  2001:db8::1, common: referrer, channel and the agent's unknown; next day
const dimsLog = `192.0.2.7 - - [31/Jan/2026:23:59:58 +0000] "GET /a HTTP/1.1" 200 1 "https://www.google.com/" "` + chrome + `"
3fff:200::1 - - [31/Jan/2026:23:59:59 +0000] "GET /a HTTP/1.1" 200 1 "https://s.test/docs/getting-started-1" "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
198.18.1.2 - - [31/Jan/2026:23:59:59 +0000] "GET /a HTTP/1.1" 200 1 "https://semalt.com/" "curl/8.5.0"
3fff:400::9 - - [31/Jan/2026:23:59:59 +0000] "GET /a HTTP/1.1" 200 1 "www.google.com" "` + chrome + `"
1.2.3.4 - - [31/Jan/2026:23:59:59 +0000] "GET /a HTTP/1.1" 200 1 "-" "-"
not a line
2001:db8::1 - - [01/Feb/2026:00:00:01 +0000] "GET /a HTTP/1.1" 200 1
`

const chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"

func writeLog(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCountDimsByHand: CountFiles counts dimsLog's lines by dimension
// as written out by hand from the lists.
func TestCountDimsByHand(t *testing.T) {
	got := CountFiles(t, writeLog(t, dimsLog), "s.test").Dims
	const u = dims.Unknown
	want := Dims{
		"20260131/s.test": {
			dims.Referrer: {"google.com": 1, "(self)": 1, "(spam)": 1, "(invalid)": 1, "(direct)": 1},
			dims.Channel:  {"search": 1, "internal": 1, "spam": 1, "other": 1, "direct": 1},
			dims.Country:  {"DE": 1, "US": 1, "BR": 1, u: 2},
			dims.ASN:      {"AS64496 Example Telekom": 1, "AS64498 Example Cable": 1, "AS64501 Example Transit": 1, u: 2},
			dims.Browser:  {"Chrome": 2, "(bot)": 3},
			dims.OS:       {"Windows": 2, "(bot)": 3},
			dims.Device:   {"desktop": 2, "(bot)": 3},
			dims.Crawler:  {"(people)": 2, "Googlebot": 1, "curl": 1, "(other suspect)": 1},
		},
		"20260201/s.test": {
			dims.Referrer: {u: 1}, dims.Channel: {u: 1}, dims.Country: {u: 1}, dims.ASN: {u: 1},
			dims.Browser: {u: 1}, dims.OS: {u: 1}, dims.Device: {u: 1}, dims.Crawler: {u: 1},
		},
	}
	same := len(got) == len(want)
	for id, w := range want {
		for dm := range dims.N {
			same = same && got[id] != nil && maps.Equal(got[id][dm], w[dm])
		}
	}
	if !same {
		for id := range want {
			if got[id] == nil {
				t.Errorf("%s: none", id)
				continue
			}
			t.Errorf("%s:\n got %v\nwant %v", id, *got[id], *want[id])
		}
	}
}

// insertDims writes d into db's site collection as the flusher writes a
// site day's sources: sources.<code>.<PageKey(value)>.
func insertDims(t *testing.T, db *mongo.Database, d Dims) {
	t.Helper()
	for id, day := range d {
		src := bson.D{}
		for dm := range dims.N {
			vals := bson.D{}
			for v, n := range day[dm] {
				vals = append(vals, bson.E{Key: bucket.PageKey(v), Value: n})
			}
			src = append(src, bson.E{Key: dims.Dim(dm).Code(), Value: vals})
		}
		if _, err := db.Collection(bucket.DefaultSiteCollection).InsertOne(context.Background(),
			bson.D{{Key: "_id", Value: id}, {Key: bucket.FieldSources, Value: src}}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCompareDims: the files' counts written as the daemon writes them
// and read back with ReadDims are exact; then each fault is reported:
// a value $inc'ed in the database, a wrong row in a list (Agents says
// Firefox where the database has Chrome), a site day missing, and lines
// whose agent, referrer or client is in no list (named by kind, not
// content).
func TestCompareDims(t *testing.T) {
	db := mongotest.Start(t).Database(t)
	ctx := context.Background()
	path := writeLog(t, dimsLog)
	want := CountFiles(t, path, "s.test").Dims
	insertDims(t, db, want)
	if r := CompareDims(t, want, ReadDims(t, db)); !r.Exact() || r.Days != 2 || r.Values != 28+8 {
		t.Fatalf("as written: %v; want 36 values of 2 site days", r)
	}
	check := func(name string, want, got Dims, lost, dup map[dims.Dim]int64, msgs ...string) {
		t.Helper()
		rec := &recorder{TB: t}
		r := CompareDims(rec, want, got)
		var wl, wd [dims.N]int64
		for dm, n := range lost {
			wl[dm] = n
		}
		for dm, n := range dup {
			wd[dm] = n
		}
		if r.Lost != wl || r.Dup != wd || r.Exact() {
			t.Errorf("%s: %v", name, r)
		}
		all := strings.Join(rec.errs, "\n")
		for _, m := range msgs {
			if !strings.Contains(all, m) {
				t.Errorf("%s: missing %q in:\n%s", name, m, all)
			}
		}
	}

	// A value $inc'ed in the database.
	if _, err := db.Collection(bucket.DefaultSiteCollection).UpdateOne(ctx, bson.D{{Key: "_id", Value: "20260131/s.test"}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "sources.bot." + bucket.PageKey("Googlebot"), Value: int64(1)}}}}); err != nil {
		t.Fatal(err)
	}
	check("a value $inc'ed", want, ReadDims(t, db), nil, map[dims.Dim]int64{dims.Crawler: 1},
		`site day 20260131/s.test: crawler "Googlebot" = 2, want 1`)

	// A wrong row in a list: the files counted with it differ.
	fresh := mongotest.Start(t).Database(t)
	insertDims(t, fresh, want)
	saved := loggen.Agents[0].Browser
	loggen.Agents[0].Browser = "Firefox"
	wrong := CountFiles(t, path, "s.test").Dims
	loggen.Agents[0].Browser = saved
	check("a wrong row", wrong, ReadDims(t, fresh), map[dims.Dim]int64{dims.Browser: 2}, map[dims.Dim]int64{dims.Browser: 2},
		`site day 20260131/s.test: browser "Firefox" = 0, want 2`, `site day 20260131/s.test: browser "Chrome" = 2, want 0`)

	// A site day missing.
	if _, err := fresh.Collection(bucket.DefaultSiteCollection).DeleteOne(ctx, bson.D{{Key: "_id", Value: "20260201/s.test"}}); err != nil {
		t.Fatal(err)
	}
	one := map[dims.Dim]int64{}
	for dm := range dims.N {
		one[dims.Dim(dm)] = 1
	}
	check("a site day missing", want, ReadDims(t, fresh), one, nil, `site day 20260201/s.test: os "(unknown)" = 0, want 1`)

	// Lines whose fields are in no list.
	unl := CountFiles(t, writeLog(t, dimsLog+
		`192.0.2.8 - - [01/Feb/2026:00:00:01 +0000] "GET /a HTTP/1.1" 200 1 "-" "SecretAgent/1.0"
192.0.2.8 - - [01/Feb/2026:00:00:01 +0000] "GET /a HTTP/1.1" 200 1 "https://secret.example/" "curl/8.5.0"
secret.proxy - - [01/Feb/2026:00:00:01 +0000] "GET /a HTTP/1.1" 200 1 "-" "curl/8.5.0"
`), "s.test").Dims
	rec := &recorder{TB: t}
	CompareDims(rec, unl, ReadDims(t, db))
	all := strings.Join(rec.errs, "\n")
	for _, kind := range []string{"agent", "referrer", "client"} {
		if !strings.Contains(all, "1 lines whose "+kind+" is in no list of loggen") {
			t.Errorf("no line whose %s is in no list reported:\n%s", kind, all)
		}
	}
	if strings.Contains(all, "Secret") || strings.Contains(all, "secret") {
		t.Errorf("a line's content reported:\n%s", all)
	}
}
