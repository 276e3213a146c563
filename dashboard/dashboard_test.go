package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/fill"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/query"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// hits returns n hits of a few pages between from and from+span, every
// status and bot class, some without a response time.
func hits(seed uint64, n int, from time.Time, span time.Duration, pages ...string) []fill.Hit {
	rng := rand.New(rand.NewPCG(seed, 20))
	statuses := []int{200, 200, 200, 304, 404, 500, 101}
	var out []fill.Hit
	for i := range n {
		rt := int64(rng.IntN(900_000))
		if i%4 == 0 {
			rt = -1
		}
		out = append(out, fill.Hit{
			Page: pages[rng.IntN(len(pages))],
			At:   from.Add(time.Duration(rng.Int64N(int64(span)))).Truncate(time.Second),
			F: measure.Hit{Status: statuses[rng.IntN(len(statuses))], Bot: botclass.Class(rng.IntN(int(botclass.NumClasses))),
				Bytes: uint64(rng.IntN(50_000)), RT: rt},
		})
	}
	return out
}

// counts are what the page should say of some hits, counted here.
type counts struct {
	views, bots, s4xx, s5xx, bytes, rtN int64
	classes                             [botclass.NumClasses]int64
	pages                               map[string]int64
}

func count(hs []fill.Hit, from, to time.Time, page string) *counts {
	c := &counts{pages: map[string]int64{}}
	for _, h := range hs {
		if h.At.Before(from) || !h.At.Before(to) || page != "" && h.Page != page {
			continue
		}
		c.views++
		c.pages[h.Page]++
		c.classes[h.F.Bot]++
		if h.F.Bot != botclass.Person {
			c.bots++
		}
		switch h.F.Status / 100 {
		case 4:
			c.s4xx++
		case 5:
			c.s5xx++
		}
		c.bytes += int64(h.F.Bytes)
		if h.F.RT >= 0 {
			c.rtN++
		}
	}
	return c
}

// reply is api/view's body as the page reads it.
type reply struct {
	Step     string               `json:"step"`
	From     int64                `json:"from"`
	To       int64                `json:"to"`
	Times    []int64              `json:"times"`
	Totals   map[string]float64   `json:"totals"`
	Series   map[string][]float64 `json:"series"`
	Previous *struct {
		From, To int64
		Totals   map[string]float64   `json:"totals"`
		Series   map[string][]float64 `json:"series"`
	} `json:"previous"`
	PrevNote   string           `json:"previous_note"`
	Pages      []map[string]any `json:"pages"`
	PagesTotal int              `json:"pages_total"`
	Notes      []string         `json:"notes"`
	Visitors   any              `json:"visitors"`
}

func (c *counts) check(t *testing.T, what string, got map[string]float64) {
	t.Helper()
	want := map[string]int64{"views": c.views, "bots": c.bots, "people": c.views - c.bots, "4xx": c.s4xx, "5xx": c.s5xx,
		"bytes": c.bytes, "rt_count": c.rtN, "unmeasured": 0,
		"bot_search": c.classes[botclass.Search], "bot_ai": c.classes[botclass.AI], "bot_tool": c.classes[botclass.Tool],
		"bot_other": c.classes[botclass.Other], "bot_suspect": c.classes[botclass.Suspect]}
	for k, w := range want {
		if v, ok := got[k]; !ok || int64(v) != w {
			t.Errorf("%s %s = %v, want %d", what, k, got[k], w)
		}
	}
}

func get(t *testing.T, h http.Handler, target string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Host = "localhost"
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	body, _ := io.ReadAll(w.Result().Body)
	return w.Result(), body
}

func viewURL(site, page string, from, to time.Time) string {
	v := url.Values{"site": {site}, "from": {fmt.Sprint(from.UnixMilli())}, "to": {fmt.Sprint(to.UnixMilli())}}
	if page != "" {
		v.Set("page", page)
	}
	return "/api/view?" + v.Encode()
}

// The API's numbers are the hits' and query's, at the step that suits
// each range, with the previous period and the top pages.
func TestViewNumbers(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	now := utc("2026-11-25T12:00:00Z")
	day := utc("2026-11-25T00:00:00Z")
	a := hits(1, 300, day.AddDate(0, 0, -2), 60*time.Hour, "/", "/a", "/b", "/<img src=x>")
	fill.Write(t, db, "a.test", a)
	fill.Write(t, db, "b.test", hits(2, 40, day, 12*time.Hour, "/x"))
	r := &query.Reader{DB: db, Retention: bucket.Retention{Minute: 48 * time.Hour}, Clock: clock.NewFake(now)}
	d, err := New(Config{Reader: r, Refresh: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h := d.Handler()

	resp, body := get(t, h, "/api/sites")
	var sites sitesReply
	if resp.StatusCode != 200 || json.Unmarshal(body, &sites) != nil || !slices.Equal(sites.Sites, []string{"a.test", "b.test"}) ||
		sites.Refresh != 10 || sites.Top != DefaultTop || sites.Now != now.UnixMilli() {
		t.Fatalf("sites: %d %s", resp.StatusCode, body)
	}

	for _, tc := range []struct {
		from, to time.Time
		page     string
		step     string
		steps    int
	}{
		{utc("2026-11-25T09:00:00Z"), utc("2026-11-25T12:00:00Z"), "", "minute", 180},
		{day.AddDate(0, 0, -1), day.AddDate(0, 0, 1), "", "hour", 48},
		{day.AddDate(0, 0, -1), day.AddDate(0, 0, 1), "/a", "hour", 48},
		{day.AddDate(0, 0, -20), day.AddDate(0, 0, 1), "", "day", 21},
		{utc("2025-01-01T00:00:00Z"), utc("2026-12-01T00:00:00Z"), "", "month", 23},
	} {
		resp, body := get(t, h, viewURL("a.test", tc.page, tc.from, tc.to))
		var got reply
		if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil {
			t.Fatalf("%s: %d %s", tc.step, resp.StatusCode, body)
		}
		if got.Step != tc.step || len(got.Times) != tc.steps {
			t.Errorf("%s to %s: step %s × %d, want %s × %d", tc.from, tc.to, got.Step, len(got.Times), tc.step, tc.steps)
		}
		want := count(a, tc.from, tc.to, tc.page)
		if want.views == 0 {
			t.Fatalf("%s: no hit in the range", tc.step)
		}
		want.check(t, tc.step+" totals", got.Totals)
		var sum float64
		for _, v := range got.Series["views"] {
			sum += v
		}
		if int64(sum) != want.views || len(got.Series["views"]) != tc.steps {
			t.Errorf("%s: series sums to %v, want %d", tc.step, sum, want.views)
		}
		// The previous period: the same span just before.
		if got.Previous == nil || got.Previous.To != got.From || got.Previous.From >= got.From {
			t.Fatalf("%s: previous %+v (%s)", tc.step, got.Previous, got.PrevNote)
		}
		count(a, time.UnixMilli(got.Previous.From), time.UnixMilli(got.Previous.To), tc.page).check(t, tc.step+" previous", got.Previous.Totals)
		if tc.page != "" {
			if len(got.Pages) != 0 || got.PagesTotal != 0 {
				t.Errorf("a page's view lists pages: %d", len(got.Pages))
			}
			continue
		}
		// The top pages, the most viewed first, with their sparklines.
		if got.PagesTotal != len(want.pages) || len(got.Pages) != len(want.pages) {
			t.Fatalf("%s: %d of %d pages, want %d", tc.step, len(got.Pages), got.PagesTotal, len(want.pages))
		}
		for i, p := range got.Pages {
			name := p["page"].(string)
			views := int64(p["views"].(float64))
			spark := p["spark"].([]any)
			var ssum float64
			for _, v := range spark {
				ssum += v.(float64)
			}
			if views != want.pages[name] || int64(ssum) != views || len(spark) != tc.steps {
				t.Errorf("%s page %q: %d views, spark %v over %d, want %d", tc.step, name, views, ssum, len(spark), want.pages[name])
			}
			if i > 0 && views > int64(got.Pages[i-1]["views"].(float64)) {
				t.Errorf("%s: pages not ranked", tc.step)
			}
		}
		// The page and logtally query agree: the same reader, the same request.
		res, err := r.Query(context.Background(), query.Request{Site: "a.test", From: tc.from, To: tc.to, Step: mustStep(got.Step), Measures: measures, Top: DefaultTop})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range measures {
			if strconv.FormatFloat(got.Totals[m.String()], 'f', -1, 64) != res.Value(&res.Site, m, -1).String() {
				t.Errorf("%s %s: page %v, query %v", tc.step, m, got.Totals[m.String()], res.Value(&res.Site, m, -1))
			}
		}
	}

	// Top bounds the table; the total says how many pages there are.
	_, body = get(t, h, viewURL("a.test", "", day.AddDate(0, 0, -3), day.AddDate(0, 0, 1))+"&top=2")
	var top reply
	json.Unmarshal(body, &top)
	if len(top.Pages) != 2 || top.PagesTotal != 4 {
		t.Errorf("top 2: %d pages of %d", len(top.Pages), top.PagesTotal)
	}
}

func mustStep(s string) query.Step {
	st, err := query.ParseStep(s)
	if err != nil {
		panic(err)
	}
	return st
}

// A range past the minute buckets' retention is shown per hour, saying
// why; a previous period past every retention is left out, saying why.
func TestViewRetention(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	from := utc("2026-11-20T10:00:00Z")
	hs := hits(3, 30, from, time.Hour, "/")
	fill.Write(t, db, "a.test", hs)
	r := &query.Reader{DB: db, Retention: bucket.Retention{Minute: 48 * time.Hour, Daily: 10 * 24 * time.Hour, Monthly: 400 * 24 * time.Hour}, Clock: clock.NewFake(utc("2026-11-25T12:00:00Z"))}
	d, err := New(Config{Reader: r})
	if err != nil {
		t.Fatal(err)
	}
	_, body := get(t, d.Handler(), viewURL("a.test", "", from, from.Add(time.Hour)))
	var got reply
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Step != "hour" || len(got.Notes) == 0 || !strings.Contains(got.Notes[0], "minute buckets are kept for 48h0m0s (buckets.minute_retention): this range is shown per hour") {
		t.Errorf("step %s, notes %q", got.Step, got.Notes)
	}
	count(hs, from, from.Add(time.Hour), "").check(t, "hour", got.Totals)
	// 2025-10 is past the monthly retention: the range is refused, naming it.
	resp, body := get(t, d.Handler(), viewURL("a.test", "", utc("2025-01-01T00:00:00Z"), utc("2026-11-01T00:00:00Z")))
	if resp.StatusCode != 400 || !strings.Contains(string(body), "monthly buckets are kept for") {
		t.Errorf("past every retention: %d %s", resp.StatusCode, body)
	}
	// A range whose previous period is past it: shown, the previous not.
	resp, body = get(t, d.Handler(), viewURL("a.test", "", utc("2025-12-01T00:00:00Z"), utc("2026-11-25T00:00:00Z")))
	got = reply{}
	json.Unmarshal(body, &got)
	if resp.StatusCode != 200 || got.Step != "day" || got.Previous != nil || !strings.Contains(got.PrevNote, "The previous period cannot be shown") {
		t.Errorf("%d %s: previous %+v, note %q", resp.StatusCode, body, got.Previous, got.PrevNote)
	}
	// Its visitors are past their documents' retention (the daily one):
	// left out, saying why; the rest is shown.
	if got.Visitors != nil || !strings.Contains(strings.Join(got.Notes, "\n"), "Visitors cannot be shown: day-salted visitors documents are kept for 240h0m0s (buckets.daily_retention)") {
		t.Errorf("visitors %v, notes %q", got.Visitors, got.Notes)
	}
}

// Who is asking: GET only, loopback Host names (and dashboard.hosts)
// without authentication, the password with it; the headers that keep
// other origins out; bad parameters and unknown sites say what is wrong.
func TestGuard(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	fill.Write(t, db, "a.test", hits(4, 10, utc("2026-11-25T10:00:00Z"), time.Hour, "/"))
	r := &query.Reader{DB: db}
	d, err := New(Config{Reader: r, Hosts: []string{"stats.example.org"}, Logger: slog.New(slog.NewTextHandler(tWriter{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	h := d.Handler()
	for _, tc := range []struct {
		host string
		code int
	}{
		{"localhost:9465", 200}, {"127.0.0.1:9465", 200}, {"[::1]:9465", 200}, {"example.com", 403},
		{"stats.example.org", 200}, {"STATS.example.org:443", 200}, {"evil.localhost.example", 403}, {"", 403},
		{"0x7f000001:9465", 403}, {"127.1:9465", 403}, {"127.0.0.1.nip.io:9465", 403}, {"2130706433", 403},
		{"a.localhost:9465", 403}, {"10.0.0.5:9465", 200},
	} {
		req := httptest.NewRequest(http.MethodGet, "/api/sites", nil)
		req.Host = tc.host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != tc.code {
			t.Errorf("Host %q: %d, want %d", tc.host, w.Code, tc.code)
		}
	}
	for _, path := range []string{"/", "/api/sites"} {
		resp, _ := get(t, h, path)
		if resp.Header.Get("Content-Security-Policy") != CSP || resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", path, resp.Header)
		}
	}
	// The page's scripts are ES modules (and uPlot a classic script): with
	// nosniff, the browser runs each only when it comes with a JavaScript
	// type (http.FileServer's, by extension).
	scripts, _ := fs.Glob(static, "static/*.js")
	vendored, _ := fs.Glob(static, "static/vendor/*.js")
	if len(scripts) < 2 || len(vendored) == 0 {
		t.Errorf("scripts in static/: %q %q", scripts, vendored)
	}
	for _, name := range append(scripts, vendored...) {
		resp, _ := get(t, h, strings.TrimPrefix(name, "static"))
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if resp.StatusCode != 200 || !slices.Contains([]string{"text/javascript", "application/javascript", "application/x-javascript"}, ct) {
			t.Errorf("%s: %d, Content-Type %q, want a JavaScript type", name, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		req := httptest.NewRequest(m, "/api/view", strings.NewReader("{}"))
		req.Host = "localhost"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d", m, w.Code)
		}
	}
	from, to := utc("2026-11-25T00:00:00Z"), utc("2026-11-26T00:00:00Z")
	for _, tc := range []struct {
		target string
		code   int
		want   string
	}{
		{"/api/view?from=1&to=2", 400, "site is required"},
		{"/api/view?site=a.test&from=x&to=2", 400, "from: a time in Unix milliseconds"},
		{"/api/view?site=a.test&from=5&to=2", 400, "from must be before to"},
		{"/api/view?site=a.test&from=0&to=" + fmt.Sprint(utc("2030-01-01T00:00:00Z").UnixMilli()), 400, "a range of at most"},
		{viewURL("a.test", "", from, to) + "&top=-1", 400, "top: a positive number"},
		{viewURL("nosuch.test", "", from, to), 404, `unknown site \"nosuch.test\"`},
		{viewURL("a.test", "/nope", from, to), 404, "no buckets for page"},
		{viewURL("a.test", "", from, to), 200, `"views":10`},
	} {
		resp, body := get(t, h, tc.target)
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s, want %d %q", tc.target, resp.StatusCode, body, tc.code, tc.want)
		}
	}
	// A bucket the reader cannot decode: a 500 with a generic message, and
	// the log names the cause, not the page (text from the logs).
	var logged strings.Builder
	dl, err := New(Config{Reader: r, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	// A hot page: the test breaks its own minute bucket.
	fill.WriteHot(t, db, "a.test", []fill.Hit{{Page: "/secret-page", At: from.Add(time.Hour), F: measure.Hit{Status: 200}}})
	var colls bucket.Collections
	if _, err := db.Collection(colls.Name(bucket.Minute)).UpdateMany(context.Background(), bson.D{{Key: bucket.Minute.PageField(), Value: "/secret-page"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "measures.bytes", Value: "many"}}}}); err != nil {
		t.Fatal(err)
	}
	resp, body := get(t, dl.Handler(), viewURL("a.test", "", from, from.Add(2*time.Hour)))
	if resp.StatusCode != 500 || strings.Contains(string(body), "secret") || strings.Contains(logged.String(), "secret") ||
		!strings.Contains(logged.String(), "not an integer") {
		t.Errorf("an undecodable bucket: %d %s; log %q", resp.StatusCode, body, logged.String())
	}

	// Busy: Concurrent requests at once, the next is turned away.
	for range Concurrent {
		d.busy <- struct{}{}
	}
	if resp, _ := get(t, h, "/api/sites"); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("busy: %d", resp.StatusCode)
	}
	for range Concurrent {
		<-d.busy
	}

	// With a password, any Host, but only with the credentials.
	d, err = New(Config{Reader: r, User: "ops", Password: "correct horse"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user, pass string
		set        bool
		code       int
	}{{"", "", false, 401}, {"ops", "wrong", true, 401}, {"OPS", "correct horse", true, 401}, {"ops", "correct horse", true, 200}} {
		req := httptest.NewRequest(http.MethodGet, "/api/sites", nil)
		req.Host = "stats.example.net"
		if tc.set {
			req.SetBasicAuth(tc.user, tc.pass)
		}
		w := httptest.NewRecorder()
		d.Handler().ServeHTTP(w, req)
		if w.Code != tc.code || tc.code == 401 && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("%q:%q: %d, want %d", tc.user, tc.pass, w.Code, tc.code)
		}
		if strings.Contains(w.Body.String(), "correct horse") {
			t.Error("the password in a response")
		}
	}
}

// tWriter writes a log to the test's.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// The static files are served, never a listing of their directories.
func TestFilesOnly(t *testing.T) {
	srv := mongotest.Start(t)
	d, err := New(Config{Reader: &query.Reader{DB: srv.Database(t)}})
	if err != nil {
		t.Fatal(err)
	}
	for target, want := range map[string]int{
		"/": 200, "/app.js": 200, "/vendor/uPlot.min.css": 200, "/vendor/LICENSE": 200,
		"/vendor/": 404, "/vendor": 404, "/nothing": 404, "/nothing/": 404,
		// The mux sends unclean paths to their clean form first.
		"/vendor/.": 307, "/./vendor/": 307, "//vendor/": 307, "/vendor//": 307,
	} {
		resp, body := get(t, d.Handler(), target)
		if resp.StatusCode != want || strings.Contains(string(body), `<a href="LICENSE">`) {
			t.Errorf("GET %s: %d, want %d\n%.200s", target, resp.StatusCode, want, body)
		}
	}
}

// The API names each page as it is (for the links and requests) and as
// it is shown (query.Shown): a page with a bidirectional control cannot
// pass for another in the table or the heading.
func TestViewShowsNamesEscaped(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	const spoof = "/\u202etxt.exe"
	fill.Write(t, db, "a.test", hits(5, 12, utc("2026-11-25T10:00:00Z"), time.Hour, spoof, "/exe.txt"))
	d, err := New(Config{Reader: &query.Reader{DB: db}})
	if err != nil {
		t.Fatal(err)
	}
	from, to := utc("2026-11-25T10:00:00Z"), utc("2026-11-25T11:00:00Z")
	type reply struct {
		PageShown string `json:"page_shown"`
		Pages     []struct{ Page, Shown string }
	}
	for _, page := range []string{"", spoof} {
		resp, body := get(t, d.Handler(), viewURL("a.test", page, from, to))
		var got reply
		if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		if page != "" {
			if got.PageShown != `/\u202etxt.exe` {
				t.Errorf("page %q: page_shown %q", page, got.PageShown)
			}
			continue
		}
		shown := map[string]string{}
		for _, p := range got.Pages {
			shown[p.Page] = p.Shown
		}
		if len(shown) != 2 || shown[spoof] != `/\u202etxt.exe` || shown["/exe.txt"] != "/exe.txt" {
			t.Errorf("pages %+v", got.Pages)
		}
	}
}

// An API request past Config.Timeout is a 504 saying the database did
// not answer in time (a read that cannot start within the bound).
func TestAPITimeout(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	fill.Write(t, db, "a.test", hits(5, 12, utc("2026-11-25T10:00:00Z"), time.Hour, "/a"))
	for _, tc := range []struct {
		timeout time.Duration
		want    int
	}{{time.Nanosecond, http.StatusGatewayTimeout}, {0, http.StatusOK}} {
		d, err := New(Config{Reader: &query.Reader{DB: db, Clock: clock.NewFake(utc("2026-11-26T00:00:00Z"))}, Timeout: tc.timeout})
		if err != nil {
			t.Fatal(err)
		}
		resp, body := get(t, d.Handler(), viewURL("a.test", "", utc("2026-11-25T00:00:00Z"), utc("2026-11-26T00:00:00Z")))
		if resp.StatusCode != tc.want || tc.want == http.StatusGatewayTimeout && !strings.Contains(string(body), "the database did not answer in time") {
			t.Errorf("timeout %v: %d %s, want %d", tc.timeout, resp.StatusCode, body, tc.want)
		}
	}
}
