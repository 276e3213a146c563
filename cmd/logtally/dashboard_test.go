package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/browsertest"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/query"
)

// dashWant are the numbers the page should show of a site over a range,
// taken from bucketcheck's count of the log files: totals, per page
// views, and views per step.
type dashWant struct {
	totals map[string]int64 // views, people, bots, 4xx, 5xx, bytes, bot_search…
	pages  map[string]int64
	steps  map[int64]int64 // step start (Unix ms) → views
}

// expect adds up want's buckets of site's pages over [from, to): the
// minute buckets for a minute step, the daily buckets' hours for an hour
// step (the grain of the step; from and to are aligned to it).
func expect(want bucketcheck.Counts, site string, pages []string, from, to time.Time, step time.Duration) *dashWant {
	e := &dashWant{totals: map[string]int64{}, pages: map[string]int64{}, steps: map[int64]int64{}}
	names := map[string]measure.Index{"4xx": measure.Status4xx, "5xx": measure.Status5xx, "bytes": measure.Bytes,
		"bot_search": measure.BotSearch, "bot_ai": measure.BotAI, "bot_tool": measure.BotTool, "bot_other": measure.BotOther, "bot_suspect": measure.BotSuspect}
	for t := from; t.Before(to); t = t.Add(step) {
		for _, p := range pages {
			var ctrs map[string]int64
			var views int64
			l := bucket.Minute
			if step == time.Minute {
				ctrs = want.Minute[l.ID(t.Unix(), site, p)]
				views = ctrs[l.TotalField()]
			} else {
				l = bucket.Daily
				day, _ := l.Bounds(t.Unix())
				ctrs = want.Daily[l.ID(day, site, p)]
				views = ctrs["hourly."+strconv.Itoa(t.Hour())]
			}
			start, _ := l.Bounds(t.Unix())
			e.totals["views"] += views
			e.pages[p] += views
			e.steps[t.UnixMilli()] += views
			for name, m := range names {
				n := ctrs[l.MeasurePath(m, start, t.Unix())]
				e.totals[name] += n
				if strings.HasPrefix(name, "bot_") {
					e.totals["bots"] += n
				}
			}
		}
	}
	e.totals["people"] = e.totals["views"] - e.totals["bots"]
	for p, n := range e.pages {
		if n == 0 {
			delete(e.pages, p)
		}
	}
	return e
}

// shown is what the page shows, read from its DOM.
type shown struct {
	Totals map[string]struct{ Text, Value string }
	Pages  []struct {
		Page  string
		Cells map[string]struct{ Text, Value string }
		Name  string
	}
	Series []struct {
		Time  int64
		Label string
		Views string
	}
	Classes map[string]string
	XSS     bool
}

// readPage is the script that reads shown from the page.
const readPage = `(() => {
  const out = {Totals: {}, Pages: [], Series: [], Classes: {}, XSS: window.__xss !== undefined || !!document.querySelector('img[src="x"], #pages script')};
  for (const e of document.querySelectorAll('[data-total]')) out.Totals[e.dataset.total] = {Text: e.textContent, Value: e.dataset.value || ''};
  for (const tr of document.querySelectorAll('#pages tr[data-page]')) {
    const row = {Page: tr.dataset.page, Cells: {}, Name: (tr.querySelector('.page-col, td:nth-child(2)') || {}).textContent || ''};
    for (const td of tr.querySelectorAll('td[data-measure]')) row.Cells[td.dataset.measure] = {Text: td.textContent, Value: td.dataset.value || ''};
    out.Pages.push(row);
  }
  for (const tr of document.querySelectorAll('#series-data tr[data-time]')) {
    const v = tr.querySelector('td[data-measure="views"]');
    out.Series.push({Time: Number(tr.dataset.time), Label: tr.cells[0].textContent, Views: v ? v.textContent : ''});
  }
  for (const e of document.querySelectorAll('[data-class]')) out.Classes[e.dataset.class] = e.textContent;
  return out;
})()`

// number reads a whole number as the page writes it ("10,000").
func number(t *testing.T, what, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 10, 64)
	if err != nil {
		t.Errorf("%s: %q is not a whole number", what, s)
	}
	return n
}

// browser drives one headless Chromium tab (browsertest: it records
// every uncaught exception and console or CSP error) through renders.
type browser struct {
	*browsertest.Browser
	renders int
}

func newBrowser(t *testing.T, zone string) *browser {
	t.Helper()
	return &browser{Browser: browsertest.Start(t, zone)}
}

// do runs steps, failing the test on an error.
func (b *browser) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval returns the value of expression in the page.
func eval[T any](t *testing.T, b *browser, what, expression string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 2*time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expression))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// rendered waits for the page's next render (body[data-renders] past the
// last one seen) and returns what it shows.
func (b *browser) rendered(t *testing.T, what string) *shown {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 2*time.Minute)
	defer cancel()
	renders, err := chromedp.Run(ctx, chromedp.Poll[int](fmt.Sprintf(`Number(document.body.dataset.renders) > %d && Number(document.body.dataset.renders)`, b.renders),
		chromedp.WithPollingTimeout(90*time.Second)))
	if err != nil {
		t.Fatalf("%s: no render: %v", what, err)
	}
	b.renders = renders
	if msg := eval[string](t, b, what, `document.body.dataset.error || ''`); msg != "" {
		t.Fatalf("%s: the page says %q", what, msg)
	}
	s := eval[shown](t, b, what, readPage)
	return &s
}

// serveDashboard starts logtally serve with conf on a free loopback
// address, waits until it answers, and returns the address.
func serveDashboard(t *testing.T, conf string) string {
	t.Helper()
	addr := testenv.FreeAddr(t)
	srv := command("serve", "-config", conf, "-listen", addr)
	out := &syncbuf.Buffer{}
	srv.Stdout, srv.Stderr = out, out
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	testenv.Wait(t, 30*time.Second, "logtally serve to answer", func() bool { code, _ := testenv.Get(addr, "/api/sites"); return code == 200 }, out)
	return addr
}

// check compares what the page shows with e: the totals and the top
// pages, as the page writes them, and the series when it is listed.
func (s *shown) check(t *testing.T, what string, e *dashWant, series bool) {
	t.Helper()
	for _, k := range []string{"views", "people", "bots", "4xx", "5xx"} {
		if got := number(t, what+" total "+k, s.Totals[k].Text); got != e.totals[k] {
			t.Errorf("%s: total %s shows %q, want %d", what, k, s.Totals[k].Text, e.totals[k])
		}
	}
	if got := s.Totals["bytes"].Value; got != strconv.FormatInt(e.totals["bytes"], 10) {
		t.Errorf("%s: bytes %q (shown %q), want %d", what, got, s.Totals["bytes"].Text, e.totals["bytes"])
	}
	for _, c := range []string{"search", "ai", "tool", "other", "suspect"} {
		if got := number(t, what+" class "+c, s.Classes[c]); got != e.totals["bot_"+c] {
			t.Errorf("%s: class %s shows %q, want %d", what, c, s.Classes[c], e.totals["bot_"+c])
		}
	}
	if len(s.Pages) != len(e.pages) {
		t.Errorf("%s: %d pages shown, want %d", what, len(s.Pages), len(e.pages))
	}
	for i, p := range s.Pages {
		got := number(t, what+" page "+p.Page, p.Cells["views"].Text)
		if got != e.pages[p.Page] || !strings.Contains(p.Name, query.Shown(p.Page)) {
			t.Errorf("%s: page %q (named %q) shows %q views, want %d", what, p.Page, p.Name, p.Cells["views"].Text, e.pages[p.Page])
		}
		if i > 0 && got > number(t, what, s.Pages[i-1].Cells["views"].Text) {
			t.Errorf("%s: pages not ranked by views", what)
		}
	}
	if !series {
		return
	}
	if len(s.Series) != len(e.steps) {
		t.Errorf("%s: %d steps listed, want %d", what, len(s.Series), len(e.steps))
	}
	for _, st := range s.Series {
		if got := number(t, what+" series", st.Views); got != e.steps[st.Time] {
			t.Errorf("%s: step %s (%q) shows %d views, want %d", what, time.UnixMilli(st.Time).UTC().Format(time.RFC3339), st.Label, got, e.steps[st.Time])
		}
	}
}

// testDashboard opens the dashboard of the buckets want counts in a real
// headless Chromium, served by `logtally serve` and by the daemon at
// daemonAddr, and compares what the page shows with want: site a over
// its four days (totals, classes, top pages, the hourly series, visitors
// against query), a two-hour custom range entered in the browser's zone
// (per minute), then site b (its page names are markup: shown as text,
// never run), and live: lines appended to site b's log now appear in its
// last hour without the page being reloaded, with their visitors. It
// keeps a screenshot as the test's artifact.
func testDashboard(t *testing.T, conf, daemonAddr string, db *mongo.Database, want bucketcheck.Counts, a string, aPages []string, b string, bPages []string, bLog string) {
	addr := serveDashboard(t, conf)

	const zone = "America/New_York"
	liveSeen := 0
	br := newBrowser(t, zone)
	from, to := time.Date(2015, 5, 17, 0, 0, 0, 0, time.UTC), time.Date(2015, 5, 21, 0, 0, 0, 0, time.UTC)
	hash := func(site string, from, to time.Time) string {
		return fmt.Sprintf("#site=%s&from=%d&to=%d", url.QueryEscape(site), from.UnixMilli(), to.UnixMilli())
	}
	br.do(t, "open", chromedp.Navigate("http://"+addr+"/"+hash(a, from, to)))
	br.do(t, "open the data", chromedp.Click(chromedp.CSS("#series-details summary")))
	s := br.rendered(t, "site a, four days")
	e := expect(want, a, aPages, from, to, time.Hour)
	if e.totals["views"] != 10000 {
		t.Fatalf("the files count %d hits of site a in the four days", e.totals["views"])
	}
	s.check(t, "site a, four days", e, true)

	// Visitors: what logtally query reads. Lines older than their salt
	// period's grace have none (2015: every line here), and the page says
	// they are not recorded.
	r := &query.Reader{DB: db}
	vis, err := r.Visitors(context.Background(), query.Request{Site: a, From: from, To: to, Step: query.Day, Measures: []query.Measure{query.Visitors}})
	switch {
	case errors.Is(err, query.ErrUnknownSite):
		if v := s.Totals["visitors"]; v.Value != "" || !strings.Contains(v.Text, "not recorded") {
			t.Errorf("visitors: query has none, the page shows %q (%q)", v.Text, v.Value)
		}
	case err != nil:
		t.Fatal(err)
	default:
		got, err := strconv.ParseFloat(s.Totals["visitors"].Value, 64)
		if tot := vis.Total(); err != nil || math.Abs(got-tot.Estimate) > 0.5 {
			t.Errorf("visitors: the page shows %q (%q), query reads %.1f", s.Totals["visitors"].Text, s.Totals["visitors"].Value, tot.Estimate)
		}
	}

	png, err := chromedp.Run(br.Ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shot := filepath.Join(t.ArtifactDir(), "dashboard.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if p := os.Getenv("LOGTALLY_SCREENSHOT"); p != "" {
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))

	// A custom range, typed in the browser's zone: 06:00 to 08:00 in New
	// York on 18 May 2015 is 10:00 to 12:00 UTC, shown per minute.
	ny, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	cfrom, cto := time.Date(2015, 5, 18, 6, 0, 0, 0, ny), time.Date(2015, 5, 18, 8, 0, 0, 0, ny)
	br.do(t, "custom range",
		chromedp.SetValue(chromedp.CSS("#from"), cfrom.Format("2006-01-02T15:04")),
		chromedp.SetValue(chromedp.CSS("#to"), cto.Format("2006-01-02T15:04")),
		chromedp.Click(chromedp.CSS("#apply")))
	s = br.rendered(t, "site a, two hours")
	ce := expect(want, a, aPages, cfrom.UTC(), cto.UTC(), time.Minute)
	if ce.totals["views"] == 0 {
		t.Fatal("no hit in the two hours")
	}
	s.check(t, "site a, two hours", ce, true)
	if len(s.Series) == 0 || !strings.Contains(s.Series[0].Label, "06:00") {
		t.Errorf("the first step is not labelled in the browser's zone (06:00 in New York): %+v", s.Series[:min(1, len(s.Series))])
	}

	// Another site, picked in the page: its page names are markup.
	br.do(t, "pick site b", chromedp.SetValue(chromedp.CSS("#site"), b))
	eval[bool](t, br, "pick site b", `document.getElementById('site').dispatchEvent(new Event('change', {bubbles: true}))`)
	s = br.rendered(t, "site b")
	s.check(t, "site b, two hours", expect(want, b, bPages, cfrom.UTC(), cto.UTC(), time.Minute), true)
	if s.XSS {
		t.Error("a page name ran as markup")
	}
	// Names with bidirectional controls or invisible characters show
	// them escaped: /\u202etxt.exe does not pass for /exe.txt.
	names := map[string]string{}
	for _, p := range s.Pages {
		names[p.Page] = p.Name
	}
	if names[spoofPage] != `/\u202etxt.exe` || names["/zero\u200bwidth"] != `/zero\u200bwidth` {
		t.Errorf("site b: the spoofing pages are named %q and %q", names[spoofPage], names["/zero\u200bwidth"])
	}

	// Live: the last hour of site b, then lines appended now. The page
	// refreshes itself (about every flush interval, at least 2 s) and
	// shows them, without a reload (the marker set here survives).
	eval[bool](t, br, "mark the page", `(window.__marker = 'same page', true)`)
	br.do(t, "last hour", chromedp.Click(chromedp.CSS(`[data-range="1h"]`)))
	live := func(n int) {
		t.Helper()
		f, err := os.OpenFile(bLog, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		now := clock.Real{}.Now().UTC() // the daemon's clock
		for i := range n {
			fmt.Fprintf(f, "198.51.100.%d - - [%s] \"GET /live HTTP/1.1\" 200 512 \"-\" \"Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0\"\n",
				liveSeen+i, now.Format("02/Jan/2006:15:04:05 -0700"))
		}
		liveSeen += n
		f.Close()
	}
	// The visitors registers are written after the buckets of the same
	// batch: the page may show the views a refresh before their visitors.
	visitorsNear := func(s *shown) bool {
		v, err := strconv.ParseFloat(s.Totals["visitors"].Value, 64)
		return err == nil && math.Abs(v-float64(liveSeen)) <= 1
	}
	for _, n := range []int{5, 3} {
		live(n)
		deadline := time.Now().Add(90 * time.Second)
		for {
			s = br.rendered(t, "live")
			if s.Totals["views"].Text == strconv.Itoa(liveSeen) && visitorsNear(s) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("live: the page shows %q views and %q visitors of the last hour, want %d", s.Totals["views"].Text, s.Totals["visitors"].Value, liveSeen)
			}
		}
	}
	if m := eval[string](t, br, "the marker", `String(window.__marker)`); m != "same page" {
		t.Errorf("live: the page was reloaded (marker %q)", m)
	}
	if len(s.Pages) != 1 || s.Pages[0].Page != "/live" {
		t.Errorf("live: pages %+v, want /live", s.Pages)
	}
	// These lines are read within their day: their visitors are recorded,
	// as query reads them (the last hour's whole UTC days).
	now := clock.Real{}.Now().UTC()
	vis, err = r.Visitors(context.Background(), query.Request{Site: b, From: now.Add(-time.Hour).Truncate(24 * time.Hour), To: now.Add(24 * time.Hour).Truncate(24 * time.Hour),
		Step: query.Day, Measures: []query.Measure{query.Visitors}})
	if err != nil {
		t.Fatalf("live visitors: %v", err)
	}
	got, err := strconv.ParseFloat(s.Totals["visitors"].Value, 64)
	if tot := vis.Total(); err != nil || math.Abs(got-tot.Estimate) > 0.5 || math.Abs(tot.Estimate-float64(liveSeen)) > 1 {
		t.Errorf("live visitors: the page shows %q (%q), query reads %.2f, %d people wrote", s.Totals["visitors"].Text, s.Totals["visitors"].Value, tot.Estimate, liveSeen)
	}

	// The daemon's listener serves the same page at /dashboard/.
	br.renders = 0
	br.do(t, "open the daemon's", chromedp.Navigate("http://"+daemonAddr+"/dashboard/"+hash(a, from, to)))
	s = br.rendered(t, "the daemon's page")
	s.check(t, "the daemon's page", e, false)

	// A page's own view names it escaped in the heading and the title.
	br.do(t, "open the spoofing page", chromedp.Navigate("http://"+daemonAddr+"/dashboard/"+hash(b, cfrom, cto)+"&page="+url.QueryEscape(spoofPage)))
	br.rendered(t, "the spoofing page")
	if h := eval[string](t, br, "heading", `document.getElementById('title-page').textContent + ' | ' + document.title`); h != `/\u202etxt.exe | /\u202etxt.exe · b.test · logtally` {
		t.Errorf("the spoofing page's heading and title: %q", h)
	}

	br.CheckProblems(t)
}

// testDashboardBeforeMeasures makes site's buckets look as a logtally
// before the measures wrote them (their measures removed, the views
// kept; in its tails' cells, every counter but the views) and checks, in
// the browser, that the page shows the views and says every other
// measure is not recorded. It changes the database: run it after the
// buckets were compared.
func testDashboardBeforeMeasures(t *testing.T, conf string, db *mongo.Database, want bucketcheck.Counts, site string, pages []string) {
	ctx := context.Background()
	var colls bucket.Collections
	for l := range bucket.Level(bucket.Levels) {
		coll := db.Collection(colls.Name(l))
		if _, err := coll.UpdateMany(ctx, bson.D{{Key: l.SiteField(), Value: site}},
			bson.D{{Key: "$unset", Value: bson.D{{Key: bucket.FieldMeasures, Value: ""}}}}); err != nil {
			t.Fatal(err)
		}
		viewsOnlyTails(t, coll, l, site)
	}
	addr := serveDashboard(t, conf)
	br := newBrowser(t, "UTC")
	from, to := time.Date(2015, 5, 18, 10, 0, 0, 0, time.UTC), time.Date(2015, 5, 18, 12, 0, 0, 0, time.UTC)
	br.do(t, "open", chromedp.Navigate(fmt.Sprintf("http://%s/#site=%s&from=%d&to=%d", addr, url.QueryEscape(site), from.UnixMilli(), to.UnixMilli())))
	s := br.rendered(t, "before the measures")
	e := expect(want, site, pages, from, to, time.Minute)
	if got := number(t, "views", s.Totals["views"].Text); got != e.totals["views"] || got == 0 {
		t.Errorf("views: the page shows %q, want %d", s.Totals["views"].Text, e.totals["views"])
	}
	for _, k := range []string{"people", "bots", "4xx", "5xx", "bytes", "error_rate", "rt_avg"} {
		if v := s.Totals[k]; v.Value != "" || !strings.Contains(v.Text, "not recorded") {
			t.Errorf("%s: the page shows %q (%q), want not recorded", k, v.Text, v.Value)
		}
	}
	notes := eval[string](t, br, "notes", `document.getElementById('notes').textContent`)
	if !strings.Contains(notes, "counted before the measures were recorded") {
		t.Errorf("no note says the measures were not recorded: %q", notes)
	}
	br.CheckProblems(t)
}

// viewsOnlyTails drops from the cells of site's l tails in coll every
// counter but the views ("v"): a cold page's counts as a bucket before
// the measures held them.
func viewsOnlyTails(t *testing.T, coll *mongo.Collection, l bucket.Level, site string) {
	t.Helper()
	ctx := context.Background()
	cur, err := coll.Find(ctx, bson.D{{Key: l.SiteField(), Value: site}, {Key: bucket.FieldPages, Value: bson.D{{Key: "$exists", Value: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.D
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	field := func(d bson.D, k string) any {
		for _, e := range d {
			if e.Key == k {
				return e.Value
			}
		}
		return nil
	}
	var keep func(v any) any // a cell (it has "v") keeps its views alone
	keep = func(v any) any {
		d, ok := v.(bson.D)
		if !ok {
			return v
		}
		for _, e := range d {
			if e.Key == "v" {
				return bson.D{e}
			}
		}
		out := make(bson.D, len(d))
		for i, e := range d {
			out[i] = bson.E{Key: e.Key, Value: keep(e.Value)}
		}
		return out
	}
	for _, d := range docs {
		if _, err := coll.UpdateOne(ctx, bson.D{{Key: bucket.FieldID, Value: field(d, bucket.FieldID)}},
			bson.D{{Key: "$set", Value: bson.D{{Key: bucket.FieldPages, Value: keep(field(d, bucket.FieldPages))}}}}); err != nil {
			t.Fatal(err)
		}
	}
}
