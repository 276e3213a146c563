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
// Where the traffic comes from (package dims): CountFiles also counts
// each hit per site day under one value of each dimension, from
// loggen's lists only (never logtally's referrer, geo, uafamily or
// botclass): the referer's row of loggen.Referrers (a Self row names the
// site CountFiles is given), the client's network of loggen.Networks (an
// address in none: country and network "(unknown)"), the agent's row of
// loggen.Agents; a common line's referrer, channel and agent values are
// "(unknown)". The client is the third field before "[time]". A line
// whose agent, referrer or client (an address, or not one) is in no list
// is counted under a value no daemon gives, and CompareDims names its
// kind. ReadDims reads the site days' sources (bucket.SiteSources) and
// CompareDims compares every value of every dimension of every site day.
// The daemon must read loggeo's databases ([geo] country_db, asn_db) and
// keep every value by name (the lists are far below
// dims.DefaultLimits).
//
// Cold pages (docs/buckets.md): Read adds a page's entries in its site's
// tails to its bucket's id and names the id in Counts.Tailed; such a
// bucket is compared on what a tail holds (its total, its views per
// minute, hour or day, every measure), a page with its own bucket alone
// on every counter, seconds.<s> and minute.<h>.<m> included. Plans are
// not counts and are skipped.
//
// Caveats: the counts by dimension assume no network of loggen's is a
// hosting one (a person's agent from one is a suspected bot: loggen
// keeps its networks out of geo's list, TestNetworksNotHosting); the page
// is the path as logged (no decoding, no rewrite unless
// Options.Page does it, no length bound), which is what the tests write;
// it assumes the default collection names; a Counts built with Add (page
// views only) is compared on views only.
package bucketcheck

import (
	"strings"
	"time"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/measure"
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
	// Dims are the hits by dimension value per site day, counted by
	// CountFiles from loggen's lists (compared by CompareDims with
	// ReadDims); Read leaves them empty.
	Dims Dims
	// Tailed holds, per level (minute, daily, monthly), the ids of the
	// page buckets that have entries in their site's tails (Read): cold
	// pages, or pages cold for some of their counts (an older host's
	// batches, a page cold in one batch's plan period), whose counts
	// are compared at the tail's grain (Compare).
	Tailed [bucket.Levels]map[string]bool
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
	var c Counts
	c.init()
	return c
}

// init makes the maps a Counts literal left nil.
func (c *Counts) init() {
	for _, b := range []*Buckets{&c.Minute, &c.Daily, &c.Monthly, &c.Sites} {
		if *b == nil {
			*b = Buckets{}
		}
	}
	if c.Dims == nil {
		c.Dims = Dims{}
	}
	for l := range c.Tailed {
		if c.Tailed[l] == nil {
			c.Tailed[l] = map[string]bool{}
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
	for l := range c.Tailed {
		for id := range o.Tailed[l] {
			c.Tailed[l][id] = true
		}
	}
	c.Dims.merge(o.Dims)
	c.ViewsOnly = c.ViewsOnly || o.ViewsOnly
	c.Hits += o.Hits
	c.MonthTotal += o.MonthTotal
	c.Files += o.Files
}
