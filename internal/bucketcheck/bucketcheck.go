// Package bucketcheck is a test helper: it counts the hits of access-log
// files per bucket, independently of logtally's parser, reads every
// counter and measure of every bucket and site document from MongoDB, and
// compares the two. The end-to-end tests (crash, nginx, pipeline, the real
// Apache log) judge logtally with it: every counter and every measure of
// every minute, daily and monthly bucket and every per-site daily document
// must equal the files' count.
//
// What a line says, read with this package's own regular expressions:
//   - combined or common lines (anything before the "[time]" is skipped,
//     so vhost_combined too), any method, the path without its query
//     string: the page;
//   - the status (its class: 2xx, 3xx, 4xx, 5xx, others), the size ("-"
//     is 0), the user agent (none on a common line: a person);
//   - an optional trailing ` rt=<seconds> urt="<seconds>"`, the nginx
//     log_format `... "$http_user_agent" rt=$request_time
//     urt="$upstream_response_time"` that the tests write: the response
//     time is rt, or, when rt is "-" or absent, the sum of urt's values
//     (separated by "," or ":", "-" being none), or none when neither has
//     a value. A test writing these fields must give its source a format
//     that reads them; with a plain combined source the daemon does not.
//
// The class of a user agent is loggen.Agents' (the generated lines' table
// of real agents with the class each must get) when the agent is in it;
// any other agent is classified with botclass.New(nil), the daemon's own
// classifier, whose classes are judged by its own table test, not here.
//
// Caveats: the page is the path as logged (no decoding, no rewrite unless
// Options.Page does it, no length bound), which is what the tests write;
// it assumes the default collection names; a Counts built with Add (page
// views only) is compared on views only.
package bucketcheck

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/measure"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Buckets maps a bucket (or site document) id to its non-zero counters and
// measures, by dotted path ("seconds.7", "hourly.13", "total",
// "measures.bytes", "measures.status_2xx.13", "views").
type Buckets map[string]map[string]int64

// Counts are the buckets of the three levels and the site documents.
type Counts struct {
	Minute, Daily, Monthly Buckets
	// Sites are the per-site daily documents (bucket.SiteID).
	Sites Buckets
	// ViewsOnly is set by Add: the hits' measures are not known, so
	// CompareAll compares the page views alone.
	ViewsOnly bool
	// Hits is the number of hits counted (CountFiles), MonthTotal the sum
	// of the monthly buckets' totals (Read).
	Hits, MonthTotal int64
	// Files is the number of files CountFiles read.
	Files int
}

func newCounts() Counts {
	return Counts{Minute: Buckets{}, Daily: Buckets{}, Monthly: Buckets{}, Sites: Buckets{}}
}

// init makes the maps a Counts literal left nil.
func (c *Counts) init() {
	for _, b := range []*Buckets{&c.Minute, &c.Daily, &c.Monthly, &c.Sites} {
		if *b == nil {
			*b = Buckets{}
		}
	}
}

// Hit is what a line says beyond its time, site and page.
type Hit struct {
	// Status is the response status (100..599).
	Status int
	// Bytes is the size logged ("-": 0).
	Bytes int64
	// Bot is the user agent's class.
	Bot botclass.Class
	// RT is the response time in microseconds; negative: none logged.
	RT int64
}

// Options change how CountFilesWith reads lines.
type Options struct {
	// Page, if set, maps the path (without its query string) to the page,
	// as the source's page rules do.
	Page func(path string) string
}

// CountFiles counts the hits of site in every file glob matches.
func CountFiles(t testing.TB, glob, site string) Counts {
	t.Helper()
	return CountFilesWith(t, glob, site, Options{})
}

// CountFilesWith is CountFiles with options.
func CountFilesWith(t testing.TB, glob, site string, o Options) Counts {
	t.Helper()
	c := newCounts()
	files, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	c.Files = len(files)
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		n := 0
		for sc.Scan() {
			n++
			ts, page, h, ok, err := parseLine(sc.Bytes())
			if err != nil {
				t.Fatalf("%s:%d: %v", f, n, err)
			}
			if !ok {
				continue
			}
			if o.Page != nil {
				page = o.Page(page)
			}
			c.AddHit(ts, site, page, h)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return c
}

var (
	lineRe = regexp.MustCompile(`\[([^\]]+)\] "[A-Z]+ ([^ ?"]+)[^"]*" (\d{3}) (\d+|-)`)
	// restRe reads what follows the size: the referer and user agent
	// (whose closing quote may be missing: real logs cut it), then the
	// timing fields.
	restRe = regexp.MustCompile(`^(?: "(?:[^"\\]|\\.)*" "((?:[^"\\]|\\.)*)"?)?(?: rt=(\S+))?(?: urt="([^"]*)")?`)
)

// parseLine reads one line; ok is false for a line that is no hit. An
// error is a timing field this package cannot read (a test's bug).
func parseLine(line []byte) (ts time.Time, page string, h Hit, ok bool, err error) {
	m := lineRe.FindSubmatchIndex(line)
	if m == nil {
		return ts, "", h, false, nil
	}
	ts, err = time.Parse("02/Jan/2006:15:04:05 -0700", string(line[m[2]:m[3]]))
	if err != nil {
		return ts, "", h, false, err
	}
	page = string(line[m[4]:m[5]])
	h.Status, _ = strconv.Atoi(string(line[m[6]:m[7]]))
	if size := string(line[m[8]:m[9]]); size != "-" {
		if h.Bytes, err = strconv.ParseInt(size, 10, 64); err != nil {
			return ts, "", h, false, err
		}
	}
	r := restRe.FindSubmatch(line[m[1]:])
	if r[1] != nil { // nil: no user agent (common)
		h.Bot = Class(string(r[1]))
	}
	h.RT = -1
	if r[2] != nil {
		if h.RT, err = micros(string(r[2])); err != nil {
			return ts, "", h, false, fmt.Errorf("rt=%s: %w", r[2], err)
		}
	}
	if h.RT < 0 && r[3] != nil {
		for _, v := range strings.FieldsFunc(string(r[3]), func(r rune) bool { return r == ',' || r == ':' }) {
			us, err := micros(strings.TrimSpace(v))
			if err != nil {
				return ts, "", h, false, fmt.Errorf("urt=%q: %w", r[3], err)
			}
			if us >= 0 {
				h.RT = max(h.RT, 0) + us
			}
		}
	}
	return ts, page, h, true, nil
}

// micros reads seconds with up to 6 decimals ("0.123") as microseconds;
// "-" is -1 (none).
func micros(s string) (int64, error) {
	if s == "-" {
		return -1, nil
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 6 || strings.Trim(whole+frac, "0123456789") != "" {
		return 0, errors.New("not seconds with up to 6 decimals")
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, err
	}
	f := int64(0)
	if frac != "" {
		if f, err = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64); err != nil {
			return 0, err
		}
	}
	return w*1e6 + f, nil
}

var (
	rulesOnce sync.Once
	rules     *botclass.Rules
)

// Class returns the class of user agent ua (as logged, without quotes):
// loggen.Agents' class if the table has ua, else the daemon's classifier's
// (botclass.New(nil)).
func Class(ua string) botclass.Class {
	if c, ok := loggen.Class(ua); ok {
		return c
	}
	rulesOnce.Do(func() {
		var err error
		if rules, err = botclass.New(nil); err != nil {
			panic(err)
		}
	})
	return rules.Classify([]byte(ua))
}

// Add counts one page view of site and page at ts, knowing nothing else of
// the hit: the Counts is then compared on views only (ViewsOnly). The ids
// and counter paths are the bucket package's (the shapes); the count is
// this package's.
func (c *Counts) Add(ts time.Time, site, page string) {
	c.ViewsOnly = true
	c.add(ts, site, page, nil)
}

// AddHit counts one hit of site and page at ts and its measures.
func (c *Counts) AddHit(ts time.Time, site, page string, h Hit) {
	c.add(ts, site, page, h.measures())
}

// value is one measure a hit adds to.
type value struct {
	m measure.Index
	n int64
}

// measures returns what h adds, views aside: its status class, its bot
// class, its bytes and its response time.
func (h Hit) measures() []value {
	var st measure.Index
	switch h.Status / 100 {
	case 2:
		st = measure.Status2xx
	case 3:
		st = measure.Status3xx
	case 4:
		st = measure.Status4xx
	case 5:
		st = measure.Status5xx
	default:
		st = measure.StatusOther
	}
	vs := []value{{st, 1}}
	if bot, ok := measure.Bot(h.Bot); ok {
		vs = append(vs, value{bot, 1})
	}
	if h.Bytes > 0 {
		vs = append(vs, value{measure.Bytes, h.Bytes})
	}
	if h.RT >= 0 {
		vs = append(vs, value{measure.RTSum, h.RT}, value{measure.RTCount, 1}, value{measure.RTMax, h.RT})
	}
	return vs
}

func (c *Counts) add(ts time.Time, site, page string, vs []value) {
	c.init()
	sec := ts.Unix()
	for l, b := range [bucket.Levels]Buckets{c.Minute, c.Daily, c.Monthly} {
		level := bucket.Level(l)
		start, _ := level.Bounds(sec)
		ctrs := counters(b, level.ID(start, site, page))
		for _, p := range level.Paths(start, sec) {
			ctrs[p]++
		}
		for _, v := range vs {
			put(ctrs, level.MeasurePath(v.m, start, sec), v.n)
		}
	}
	ctrs := counters(c.Sites, bucket.SiteID(sec, site))
	ctrs[bucket.SiteMeasurePath(measure.Views)]++
	for _, v := range vs {
		put(ctrs, bucket.SiteMeasurePath(v.m), v.n)
	}
	c.Hits++
}

func counters(b Buckets, id string) map[string]int64 {
	if b[id] == nil {
		b[id] = map[string]int64{}
	}
	return b[id]
}

// put adds n to path p, or keeps the greater for a maximum.
func put(ctrs map[string]int64, p string, n int64) {
	if n == 0 {
		return
	}
	if isMax(p) {
		ctrs[p] = max(ctrs[p], n)
	} else {
		ctrs[p] += n
	}
}

// maxPrefix begins the paths of measure.RTMax, the one maximum.
var maxPrefix = bucket.FieldMeasures + "." + measure.RTMax.Name()

func isMax(p string) bool {
	return strings.HasPrefix(p, maxPrefix) && (len(p) == len(maxPrefix) || p[len(maxPrefix)] == '.')
}

func isMeasure(p string) bool { return strings.HasPrefix(p, bucket.FieldMeasures+".") }

// Read reads every non-zero counter and measure of every bucket in db's
// bucket collections and of every document of its site collection
// (default names).
func Read(t testing.TB, db *mongo.Database) Counts {
	t.Helper()
	c := newCounts()
	var names bucket.Collections
	for l, b := range [bucket.Levels + 1]Buckets{c.Minute, c.Daily, c.Monthly, c.Sites} {
		name := bucket.DefaultSiteCollection
		if l < bucket.Levels {
			name = names.Name(bucket.Level(l))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cur, err := db.Collection(name).Find(ctx, bson.D{})
		if err != nil {
			cancel()
			t.Fatalf("read %s: %v", name, err)
		}
		var docs []bson.M
		err = cur.All(ctx, &docs)
		cancel()
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		for _, d := range docs {
			id := d["_id"].(string)
			b[id] = map[string]int64{}
			flatten(b[id], "", d)
			if l == int(bucket.Monthly) {
				c.MonthTotal += b[id][bucket.Monthly.TotalField()]
			}
		}
	}
	return c
}
func flatten(out map[string]int64, prefix string, m bson.M) {
	for k, v := range m {
		switch k {
		case bucket.FieldID, bucket.FieldApplied, bucket.FieldMetadata, bucket.FieldSite, bucket.FieldPage, bucket.FieldTimestamp:
			if prefix == "" {
				continue
			}
		}
		switch v := v.(type) {
		case bson.M:
			flatten(out, prefix+k+".", v)
		case bson.D:
			m := bson.M{}
			for _, e := range v {
				m[e.Key] = e.Value
			}
			flatten(out, prefix+k+".", m)
		case int64:
			if v != 0 {
				out[prefix+k] = v
			}
		case int32:
			if v != 0 {
				out[prefix+k] = int64(v)
			}
		}
	}
}

// Compare reports (t.Errorf) every counter and measure of kind ("minute",
// "daily", "monthly" or "sites") that differs, and returns the hits lost
// and duplicated, judged by each bucket's total counter (a site
// document's views).
func Compare(t testing.TB, kind string, want, got Buckets) (lost, dup int64) {
	t.Helper()
	return compare(t, kind, want, got, false)
}

func compare(t testing.TB, kind string, want, got Buckets, viewsOnly bool) (lost, dup int64) {
	t.Helper()
	total := bucket.SiteMeasurePath(measure.Views)
	for l := range bucket.Level(bucket.Levels) {
		if l.String() == kind {
			total = l.TotalField()
		}
	}
	what := kind + " bucket"
	if kind == "sites" {
		what = "site document"
	}
	ids := maps.Clone(want)
	maps.Copy(ids, got)
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		w, g := want[id], got[id]
		if d := g[total] - w[total]; d > 0 {
			dup += d
		} else {
			lost -= d
		}
		paths := maps.Clone(w)
		if paths == nil {
			paths = map[string]int64{}
		}
		maps.Copy(paths, g)
		for _, p := range slices.Sorted(maps.Keys(paths)) {
			if viewsOnly && isMeasure(p) {
				continue
			}
			if w[p] != g[p] {
				t.Errorf("%s %s: %s = %d, want %d", what, id, p, g[p], w[p])
			}
		}
	}
	return lost, dup
}

// Result is the outcome of CompareAll, per level and for the site
// documents.
type Result struct {
	Lost, Dup [4]int64 // minute, daily, monthly, sites
}

// Exact reports whether nothing was lost or duplicated at any level.
func (r Result) Exact() bool { return r.Lost == [4]int64{} && r.Dup == [4]int64{} }

// String formats the result for a test log.
func (r Result) String() string {
	return fmt.Sprintf("lost %d/%d/%d/%d, duplicated %d/%d/%d/%d (minute/daily/monthly/sites)",
		r.Lost[0], r.Lost[1], r.Lost[2], r.Lost[3], r.Dup[0], r.Dup[1], r.Dup[2], r.Dup[3])
}

// CompareAll compares the three levels and the site documents with
// Compare: every counter and measure (rt_max_us as a maximum, the others
// as sums), or the views alone when want.ViewsOnly.
func CompareAll(t testing.TB, want, got Counts) Result {
	t.Helper()
	var r Result
	for i, k := range []struct {
		kind      string
		want, got Buckets
	}{
		{"minute", want.Minute, got.Minute},
		{"daily", want.Daily, got.Daily},
		{"monthly", want.Monthly, got.Monthly},
		{"sites", want.Sites, got.Sites},
	} {
		r.Lost[i], r.Dup[i] = compare(t, k.kind, k.want, k.got, want.ViewsOnly)
	}
	return r
}

// Merge adds o's counts to c (maxima: the greater).
func (c *Counts) Merge(o Counts) {
	c.init()
	for _, lv := range [][2]Buckets{{c.Minute, o.Minute}, {c.Daily, o.Daily}, {c.Monthly, o.Monthly}, {c.Sites, o.Sites}} {
		for id, ctrs := range lv[1] {
			dst := counters(lv[0], id)
			for p, n := range ctrs {
				put(dst, p, n)
			}
		}
	}
	c.ViewsOnly = c.ViewsOnly || o.ViewsOnly
	c.Hits += o.Hits
	c.MonthTotal += o.MonthTotal
	c.Files += o.Files
}
