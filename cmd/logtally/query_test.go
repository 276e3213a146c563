package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/salts"
	"github.com/logtally/logtally/visitor"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

const querySite = "query.test"

// queryConfig writes a config for the query tests: the fixture's log as
// the one source, small flush chunks (the embedded server), no
// preallocation, and minuteRetention. It returns the config's path.
func queryConfig(t *testing.T, dir, name, uri, db, logPath string, minuteRetention time.Duration) string {
	t.Helper()
	return writeConfig(t, filepath.Join(dir, name), uri, db, querySite, logPath, noPrealloc, func(c *config.Config) {
		c.Buckets.MinuteRetention = config.Duration(minuteRetention)
	})
}

// queryRun runs logtally in this process with args.
func queryRun(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return out.String(), errb.String(), code
}

// stepStarts are the starts of the steps of [from, to), counted here
// independently of the query package.
func stepStarts(step string, from, to time.Time) []time.Time {
	var ts []time.Time
	for t := from; t.Before(to); {
		ts = append(ts, t)
		switch step {
		case "minute":
			t = t.Add(time.Minute)
		case "hour":
			t = t.Add(time.Hour)
		case "day":
			t = t.AddDate(0, 0, 1)
		default:
			t = t.AddDate(0, 1, 0)
		}
	}
	return ts
}

// expected returns the count of page in the step starting at t, from the
// log file's buckets as bucketcheck counted them.
func expected(want bucketcheck.Counts, step string, t time.Time, page string) int64 {
	return expectedOf(want, querySite, step, t, page)
}

// expectedOf is expected for a page of site.
func expectedOf(want bucketcheck.Counts, site, step string, t time.Time, page string) int64 {
	key := "/" + site + page
	switch step {
	case "minute":
		return want.Minute[t.Format("200601021504")+key]["totalViews"]
	case "hour":
		return want.Daily[t.Format("20060102")+key]["hourly."+strconv.Itoa(t.Hour())]
	case "day":
		return want.Daily[t.Format("20060102")+key]["daily"]
	}
	return want.Monthly[t.Format("200601")+key]["total"]
}

// point is one parsed output line: step start (UTC, RFC 3339) and page.
type point struct{ time, page string }

// parseTable reads the table format: "time page count" rows, then one
// "total page count" row per page.
func parseTable(t *testing.T, out string) (counts, totals map[point]int64, order []string) {
	t.Helper()
	counts, totals = map[point]int64{}, map[point]int64{}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "time (UTC)") {
		t.Fatalf("table header %q", lines[0])
	}
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "(top ") {
			continue
		}
		f := strings.Fields(l)
		if len(f) < 3 {
			t.Fatalf("table line %q", l)
		}
		n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil {
			t.Fatalf("table line %q: %v", l, err)
		}
		label, page := strings.Join(f[:len(f)-2], " "), f[len(f)-2]
		if label == "total" {
			totals[point{"", page}] = n
			order = append(order, page)
			continue
		}
		var ts time.Time
		for _, layout := range []string{"2006-01-02 15:04", "2006-01-02", "2006-01"} {
			if ts, err = time.Parse(layout, label); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("table label %q", label)
		}
		p := point{ts.Format(time.RFC3339), page}
		if _, dup := counts[p]; dup {
			t.Errorf("table: %v twice", p)
		}
		counts[p] = n
	}
	return counts, totals, order
}

func parseCSV(t *testing.T, out string) (map[point]int64, []string) {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("csv: %v\n%s", err, out)
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != "time,page,count" {
		t.Fatalf("csv header: %q", rows)
	}
	counts := map[point]int64{}
	var order []string
	for _, r := range rows[1:] {
		ts, err := time.Parse(time.RFC3339, r[0])
		if err != nil {
			t.Fatalf("csv time %q: %v", r[0], err)
		}
		n, err := strconv.ParseInt(r[2], 10, 64)
		if err != nil {
			t.Fatalf("csv count %q: %v", r[2], err)
		}
		p := point{ts.UTC().Format(time.RFC3339), r[1]}
		if _, dup := counts[p]; dup {
			t.Errorf("csv: %v twice", p)
		}
		counts[p] = n
		if !slices.Contains(order, r[1]) {
			order = append(order, r[1])
		}
	}
	return counts, order
}

func parseJSON(t *testing.T, out string) (map[point]int64, []string) {
	t.Helper()
	var pts []struct {
		Time  time.Time `json:"time"`
		Page  string    `json:"page"`
		Count int64     `json:"count"`
	}
	if err := json.Unmarshal([]byte(out), &pts); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	counts := map[point]int64{}
	var order []string
	for _, p := range pts {
		k := point{p.Time.UTC().Format(time.RFC3339), p.Page}
		if _, dup := counts[k]; dup {
			t.Errorf("json: %v twice", k)
		}
		counts[k] = p.Count
		if !slices.Contains(order, p.Page) {
			order = append(order, p.Page)
		}
	}
	return counts, order
}

// TestQuery counts a known log with the real daemon into the embedded
// server, then checks every step and format of logtally query against the
// log's own count (bucketcheck), every step present, empty ones 0; -top,
// -page and -tz; and that each kind of bad request exits 2 with its message
// and prints nothing on stdout.
func TestQuery(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	dir := t.TempDir()
	fixture, err := os.ReadFile(filepath.Join("..", "..", "testdata", "query", "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "access.log")
	if err := os.WriteFile(logPath, fixture, 0o644); err != nil {
		t.Fatal(err)
	}
	want := bucketcheck.CountFiles(t, logPath, querySite)
	if want.Hits != 25 {
		t.Fatalf("fixture: %d hits, want 25", want.Hits)
	}

	// The daemon keeps minute buckets (minute_retention 0), whatever the
	// wall clock says of the fixture's 2026-10-31.
	d, out := daemon(t, queryConfig(t, dir, "daemon.toml", srv.URI(), db.Name(), logPath, 0))
	countAll(t, d, out, db, want)

	// The query reads with the default minute retention, 48h before a
	// fixed now.
	conf := queryConfig(t, dir, "query.toml", srv.URI(), db.Name(), logPath, 48*time.Hour)
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	processClock = clock.NewFake(now)
	t.Cleanup(func() { processClock = clock.Real{} })

	var pages []string // the fixture's pages, most viewed first
	totals := map[string]int64{}
	for id, c := range want.Monthly {
		_, key, _ := strings.Cut(id, "/")
		page := strings.TrimPrefix(key, querySite)
		if totals[page] == 0 {
			pages = append(pages, page)
		}
		totals[page] += c["total"]
	}
	slices.SortFunc(pages, func(a, b string) int {
		if totals[a] != totals[b] {
			return int(totals[b] - totals[a])
		}
		return strings.Compare(a, b)
	})

	utc := func(s string) time.Time {
		ts, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	cases := []struct {
		step     string
		from, to time.Time
		args     []string // -from and -to as given
	}{
		{"minute", utc("2026-10-31T23:57:00Z"), utc("2026-11-01T00:03:00Z"), []string{"-from", "2026-10-31T23:57:00Z", "-to", "2026-11-01T00:02:30Z"}},
		{"hour", utc("2026-10-31T23:00:00Z"), utc("2026-11-01T03:00:00Z"), []string{"-from", "2026-10-31T23:00:00Z", "-to", "2026-11-01T03:00:00Z"}},
		{"day", utc("2026-10-30T00:00:00Z"), utc("2026-11-02T00:00:00Z"), []string{"-from", "2026-10-30", "-to", "2026-11-02"}},
		{"month", utc("2026-09-01T00:00:00Z"), utc("2026-12-01T00:00:00Z"), []string{"-from", "2026-09-15", "-to", "2026-12-01"}},
	}
	check := func(t *testing.T, step string, from, to time.Time, pages []string, got map[point]int64, order []string) {
		t.Helper()
		if !slices.Equal(order, pages) {
			t.Errorf("pages %q, want %q (most viewed first)", order, pages)
		}
		starts := stepStarts(step, from, to)
		var zeros int
		for _, ts := range starts {
			for _, p := range pages {
				k := point{ts.Format(time.RFC3339), p}
				w := expected(want, step, ts, p)
				if g, ok := got[k]; !ok {
					t.Errorf("%s %s: missing", k.time, p)
				} else if g != w {
					t.Errorf("%s %s: %d, want %d", k.time, p, g, w)
				}
				if w == 0 {
					zeros++
				}
			}
		}
		if len(got) != len(starts)*len(pages) {
			t.Errorf("%d points, want %d steps x %d pages", len(got), len(starts), len(pages))
		}
		if zeros == 0 {
			t.Errorf("the range has no empty step: the test does not check zero filling")
		}
	}
	for _, tc := range cases {
		t.Run(tc.step, func(t *testing.T) {
			base := append([]string{"query", "-config", conf, "-site", querySite, "-step", tc.step}, tc.args...)
			// Every page with views in the range.
			var inRange []string
			for _, p := range pages {
				for _, ts := range stepStarts(tc.step, tc.from, tc.to) {
					if expected(want, tc.step, ts, p) > 0 {
						inRange = append(inRange, p)
						break
					}
				}
			}
			for _, format := range []string{"csv", "json", "table"} {
				stdout, stderr, code := queryRun(append(base, "-format", format)...)
				if code != 0 {
					t.Fatalf("%s: exit %d: %s", format, code, stderr)
				}
				var got map[point]int64
				var order []string
				switch format {
				case "csv":
					got, order = parseCSV(t, stdout)
				case "json":
					got, order = parseJSON(t, stdout)
				default:
					var tot map[point]int64
					got, tot, order = parseTable(t, stdout)
					for _, p := range inRange {
						var sum int64
						for _, ts := range stepStarts(tc.step, tc.from, tc.to) {
							sum += expected(want, tc.step, ts, p)
						}
						if tot[point{"", p}] != sum {
							t.Errorf("table: total of %s %d, want %d", p, tot[point{"", p}], sum)
						}
					}
				}
				t.Run(format, func(t *testing.T) { check(t, tc.step, tc.from, tc.to, inRange, got, order) })
			}

			// -top 3: the three most viewed pages of the range.
			stdout, stderr, code := queryRun(append(base, "-format", "csv", "-top", "3")...)
			if code != 0 {
				t.Fatalf("-top 3: exit %d: %s", code, stderr)
			}
			got, order := parseCSV(t, stdout)
			t.Run("top", func(t *testing.T) { check(t, tc.step, tc.from, tc.to, inRange[:3], got, order) })

			// -page: that page alone.
			stdout, stderr, code = queryRun(append(base, "-format", "json", "-page", "/c")...)
			if code != 0 {
				t.Fatalf("-page /c: exit %d: %s", code, stderr)
			}
			got, order = parseJSON(t, stdout)
			t.Run("page", func(t *testing.T) { check(t, tc.step, tc.from, tc.to, []string{"/c"}, got, order) })
		})
	}

	// -tz changes the labels, not the steps.
	t.Run("tz", func(t *testing.T) {
		args := []string{"query", "-config", conf, "-site", querySite, "-step", "hour", "-format", "csv",
			"-from", "2026-11-01T00:00:00+01:00", "-to", "2026-11-01T04:00:00+01:00", "-tz", "Europe/Paris"}
		stdout, stderr, code := queryRun(args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "\n2026-11-01T00:00:00+01:00,/,") || strings.Contains(stdout, "Z,") {
			t.Errorf("times not in Europe/Paris:\n%s", stdout)
		}
		got, order := parseCSV(t, stdout)
		check(t, "hour", utc("2026-10-31T23:00:00Z"), utc("2026-11-01T03:00:00Z"), pages, got, order)
	})

	// The chart: the five most viewed of the six pages, with a legend.
	t.Run("chart", func(t *testing.T) {
		stdout, stderr, code := queryRun("query", "-config", conf, "-site", querySite, "-step", "minute",
			"-from", "2026-10-31T23:57:00Z", "-to", "2026-11-01T00:03:00Z", "-format", "chart")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		// The range's pages, most viewed first.
		inRange := map[string]int64{}
		var ranked []string
		for _, p := range pages {
			for _, ts := range stepStarts("minute", utc("2026-10-31T23:57:00Z"), utc("2026-11-01T00:03:00Z")) {
				inRange[p] += expected(want, "minute", ts, p)
			}
			ranked = append(ranked, p)
		}
		slices.SortStableFunc(ranked, func(a, b string) int { return int(inRange[b] - inRange[a]) })
		for i, p := range ranked {
			legend := fmt.Sprintf(" %s (%d)", p, inRange[p])
			if in := strings.Contains(stdout, legend); in != (i < 5) {
				t.Errorf("legend %q shown: %v, want %v", legend, in, i < 5)
			}
		}
		for _, s := range []string{"views of query.test per minute, 2026-10-31 23:57 to 2026-11-01 00:02 (UTC), top 5 of 6 pages", "2026-10-31 23:57", "─ / ("} {
			if !strings.Contains(stdout, s) {
				t.Errorf("chart lacks %q", s)
			}
		}
		if strings.Contains(stdout, "\x1b[") {
			t.Errorf("color escapes in a chart written to a pipe")
		}
		t.Logf("logtally query -format chart:\n%s", stdout)
	})

	// Each request error: exit 2, one message, nothing on stdout.
	t.Run("errors", func(t *testing.T) {
		q := []string{"query", "-config", conf, "-site", querySite}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{append(q, "-from", "2026-11-01", "-to", "2026-10-31"), "logtally: query: from 2026-11-01T00:00:00Z is not before to 2026-10-31T00:00:00Z"},
			{append(q, "-from", "2026-11-01", "-to", "2026-11-01"), "is not before to"},
			{append(q, "-from", "yesterday"), `logtally: query: -from: time "yesterday": want RFC 3339`},
			{append(q, "-from", "2026-11-01", "-to", "31/10/2026"), `logtally: query: -to: time "31/10/2026"`},
			{append(q, "-from", "2026-11-01", "-step", "week"), `logtally: query: step "week": must be minute, hour, day or month`},
			{append(q, "-from", "2026-11-01", "-format", "xml"), `logtally: query: -format "xml": must be one of table, csv, json, chart`},
			{append(q, "-from", "2026-11-01", "-tz", "Mars/Olympus"), `logtally: query: -tz "Mars/Olympus"`},
			{append(q, "-from", "2026-11-01", "-top", "3", "-page", "/"), "-top ranks the pages of a site; it cannot be used with -page"},
			{[]string{"query", "-config", conf, "-from", "2026-11-01"}, "logtally: query: -site is required"},
			{[]string{"query", "-config", conf, "-site", querySite}, "logtally: query: -from is required"},
			{[]string{"query", "-config", conf, "-site", "nosuch.test", "-from", "2026-10-01", "-to", "2026-11-02", "-step", "day"},
				`logtally: query: unknown site "nosuch.test": no bucket in minutes, daily or monthly`},
			{append(q, "-from", "2026-10-01", "-to", "2026-11-02", "-step", "day", "-page", "/nope"),
				`logtally: query: no buckets for page "/nope" of site "query.test": the site has buckets, this page none`},
			{append(q, "-step", "minute", "-from", "2026-10-30T00:00:00Z", "-to", "2026-10-31T23:59:00Z"),
				"logtally: query: minute buckets are kept for 48h0m0s (buckets.minute_retention): 2026-10-30T00:00:00Z to 2026-10-30T12:00:00Z cannot be answered at -step minute; use -step hour, or -from 2026-10-30T12:00:00Z or later"},
			{append(q, "-step", "minute", "-from", "2026-10-29T00:00:00Z", "-to", "2026-10-30T00:00:00Z"),
				"2026-10-29T00:00:00Z to 2026-10-30T00:00:00Z cannot be answered at -step minute; use -step hour\n"},
		} {
			stdout, stderr, code := queryRun(tc.args...)
			if code != 2 {
				t.Errorf("%q: exit %d, want 2 (stderr %q)", tc.args[4:], code, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("%q: stderr %q, want %q", tc.args[4:], stderr, tc.want)
			}
			if stdout != "" {
				t.Errorf("%q: stdout %q, want nothing", tc.args[4:], stdout)
			}
		}
	})

	// A known site without views in the range: no series, exit 0.
	for format, want := range map[string]string{"csv": "time,page,count\n", "json": "[]\n", "table": "time (UTC)  page  count\nno views of site query.test in this range\n"} {
		stdout, stderr, code := queryRun("query", "-config", conf, "-site", querySite, "-step", "day", "-format", format,
			"-from", "2025-01-01", "-to", "2025-02-01")
		if code != 0 || stdout != want {
			t.Errorf("%s, a range without views: exit %d, %s\n%q, want %q", format, code, stderr, stdout, want)
		}
	}

	// The same range as the refused one, at an hour step, is answered.
	stdout, stderr, code := queryRun("query", "-config", conf, "-site", querySite, "-step", "hour", "-format", "csv",
		"-from", "2026-10-30T00:00:00Z", "-to", "2026-10-31T23:59:00Z", "-page", "/")
	if code != 0 || !strings.Contains(stdout, "2026-10-31T23:00:00Z,/,5\n") {
		t.Errorf("hour step before the minute retention: exit %d, %s\n%s", code, stderr, stdout)
	}
}

// qhit is a hit of TestQueryMeasures' fixture with its facts.
type qhit struct {
	page string
	at   time.Time
	f    measure.Hit
}

// qsums are the sums of a set of hits, counted here.
type qsums struct {
	views, s2, s3, s4, s5, bytes, rtSum, rtN, rtMax int64
	classes                                         [botclass.NumClasses]int64
}

func (s *qsums) add(f measure.Hit) {
	s.views++
	s.classes[f.Bot]++
	switch f.Status / 100 {
	case 2:
		s.s2++
	case 3:
		s.s3++
	case 4:
		s.s4++
	case 5:
		s.s5++
	}
	s.bytes += int64(f.Bytes)
	if f.RT >= 0 {
		s.rtSum += f.RT
		s.rtN++
		s.rtMax = max(s.rtMax, f.RT)
	}
}

// value returns measure name of s as the query prints it, parsed: whole
// measures exactly, fractions as float64.
func (s *qsums) value(name string) float64 {
	bots := s.views - s.classes[botclass.Person]
	switch name {
	case "views":
		return float64(s.views)
	case "bots":
		return float64(bots)
	case "people":
		return float64(s.views - bots)
	case "2xx":
		return float64(s.s2)
	case "3xx":
		return float64(s.s3)
	case "4xx":
		return float64(s.s4)
	case "5xx":
		return float64(s.s5)
	case "bytes":
		return float64(s.bytes)
	case "error_rate":
		if s.views == 0 {
			return 0
		}
		return float64(s.s4+s.s5) / float64(s.views)
	case "rt_avg_ms":
		if s.rtN == 0 {
			return 0
		}
		return float64(s.rtSum) / float64(s.rtN) / 1000
	case "rt_max_ms":
		return float64(s.rtMax) / 1000
	}
	panic(name)
}

// near compares a printed value with the expected one: exactly for whole
// measures, to the printed precision for fractions.
func near(name, got string, want float64) bool {
	g, err := strconv.ParseFloat(got, 64)
	if err != nil {
		return false
	}
	switch name {
	case "error_rate":
		return math.Abs(g-want) <= 0.5e-6+1e-12
	case "rt_avg_ms", "rt_max_ms":
		return math.Abs(g-want) <= 0.5e-3+1e-12
	}
	return g == want && !strings.Contains(got, ".")
}

var queryMeasureColumns = []string{"views", "bots", "people", "2xx", "3xx", "4xx", "5xx", "error_rate", "bytes", "rt_avg_ms", "rt_max_ms"}

// TestQueryMeasures writes hits with every measure through a buffer and
// the real flusher into the embedded server, then checks logtally query
// -measure at every step and in CSV, JSON and table against the sums
// counted here from the hits, -bots from the sites collection and from a
// page, and each new misuse (exit 2, one message, nothing on stdout).
func TestQueryMeasures(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	dir := t.TempDir()
	var hits []qhit
	starts := []time.Time{
		time.Date(2026, 10, 31, 23, 58, 0, 0, time.UTC), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 1, 0, 1, 0, 0, time.UTC), time.Date(2026, 11, 1, 10, 30, 0, 0, time.UTC),
	}
	statuses := []int{200, 200, 304, 404, 500, 201, 101}
	for i := range 30 {
		f := measure.Hit{Status: statuses[i%7], Bot: botclass.Class(i % 6), Bytes: uint64(1000*i + 7), RT: int64(1500*i + 1)}
		if i%4 == 0 {
			f.RT = -1
		}
		hits = append(hits, qhit{[]string{"/", "/a", "/api"}[i%3], starts[i%4].Add(time.Duration(i) * time.Second), f})
	}
	buf := testenv.OpenBuffer(t, filepath.Join(dir, "buffer.db"), buffer.Options{})
	counts := map[string]measure.Vector{}
	for _, h := range hits {
		k := string(buffer.AppendKey(nil, []byte(querySite), []byte(h.page), h.at.Unix()))
		v := counts[k]
		v.Add(&h.f)
		counts[k] = v
	}
	if err := buf.Commit(buffer.Commit{Counts: buffer.CountsOf(counts)}); err != nil {
		t.Fatal(err)
	}
	fl, err := flusher.New(flusher.Config{Buffer: buf, DB: db, MaxOps: 40, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if sent, err := fl.Flush(context.Background()); err != nil || !sent {
		t.Fatalf("flush: %v %v", sent, err)
	}
	buf.Close()

	conf := queryConfig(t, dir, "query.toml", srv.URI(), db.Name(), filepath.Join(dir, "access.log"), 48*time.Hour)
	now := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	processClock = clock.NewFake(now)
	t.Cleanup(func() { processClock = clock.Real{} })
	base := []string{"query", "-config", conf, "-site", querySite}

	// expect returns the sums per page and step start of [from, to).
	expect := func(step string, from, to time.Time, page string) map[point]*qsums {
		out := map[point]*qsums{}
		for _, h := range hits {
			if h.at.Before(from) || !h.at.Before(to) || page != "" && h.page != page {
				continue
			}
			var st time.Time
			for _, s := range stepStarts(step, from, to) {
				if !h.at.Before(s) {
					st = s
				}
			}
			k := point{st.Format(time.RFC3339), h.page}
			if out[k] == nil {
				out[k] = &qsums{}
			}
			out[k].add(h.f)
		}
		return out
	}
	all := "views,bots,people,2xx,3xx,4xx,5xx,error_rate,bytes,rt_avg,rt_max"
	for _, tc := range []struct {
		step, page, format string
		from, to           time.Time
	}{
		{"minute", "", "csv", time.Date(2026, 10, 31, 23, 58, 0, 0, time.UTC), time.Date(2026, 11, 1, 0, 3, 0, 0, time.UTC)},
		{"hour", "", "json", time.Date(2026, 10, 31, 23, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 11, 0, 0, 0, time.UTC)},
		{"hour", "/a", "csv", time.Date(2026, 10, 31, 23, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 11, 0, 0, 0, time.UTC)},
		{"day", "", "csv", time.Date(2026, 10, 30, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)},
		{"month", "", "json", time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.step+tc.page, func(t *testing.T) {
			args := append(slices.Clone(base), "-step", tc.step, "-format", tc.format, "-measure", all,
				"-from", tc.from.Format(time.RFC3339), "-to", tc.to.Format(time.RFC3339))
			if tc.page != "" {
				args = append(args, "-page", tc.page)
			}
			stdout, stderr, code := queryRun(args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			// Parse into point -> column -> printed value.
			got := map[point]map[string]string{}
			if tc.format == "csv" {
				rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				if want := "time,page," + strings.Join(queryMeasureColumns, ","); strings.Join(rows[0], ",") != want {
					t.Fatalf("header %q, want %q", rows[0], want)
				}
				for _, r := range rows[1:] {
					m := map[string]string{}
					for i, c := range queryMeasureColumns {
						m[c] = r[2+i]
					}
					got[point{r[0], r[1]}] = m
				}
			} else {
				var pts []map[string]json.RawMessage
				if err := json.Unmarshal([]byte(stdout), &pts); err != nil {
					t.Fatalf("%v\n%s", err, stdout)
				}
				for _, p := range pts {
					m := map[string]string{}
					for _, c := range queryMeasureColumns {
						m[c] = string(p[c])
					}
					var ts, page string
					json.Unmarshal(p["time"], &ts)
					json.Unmarshal(p["page"], &page)
					got[point{ts, page}] = m
				}
			}
			want := expect(tc.step, tc.from, tc.to, tc.page)
			pages := map[string]bool{}
			for k := range want {
				pages[k.page] = true
			}
			steps := stepStarts(tc.step, tc.from, tc.to)
			if len(got) != len(steps)*len(pages) {
				t.Errorf("%d points, want %d steps × %d pages", len(got), len(steps), len(pages))
			}
			for _, st := range steps {
				for p := range pages {
					k := point{st.Format(time.RFC3339), p}
					w := want[k]
					if w == nil {
						w = &qsums{}
					}
					for _, c := range queryMeasureColumns {
						if g, ok := got[k][c]; !ok || !near(c, g, w.value(c)) {
							t.Errorf("%s %s %s = %q, want %v", k.time, k.page, c, g, w.value(c))
						}
					}
				}
			}
		})
	}

	// A table shows one measure; its total is the range's.
	stdout, stderr, code := queryRun(append(slices.Clone(base), "-step", "day", "-measure", "error_rate", "-page", "/api",
		"-from", "2026-10-31", "-to", "2026-11-02")...)
	var api qsums
	for _, h := range hits {
		if h.page == "/api" {
			api.add(h.f)
		}
	}
	wantTotal := strconv.FormatFloat(math.Round(api.value("error_rate")*1e6)/1e6, 'f', -1, 64)
	if code != 0 || !strings.HasPrefix(stdout, "time (UTC)  page  error_rate\n") || !strings.Contains(stdout, "total       /api  "+strings.Repeat(" ", len("error_rate")-len(wantTotal))+wantTotal+"\n") {
		t.Errorf("table of error_rate: exit %d %s\n%s(want total %s)", code, stderr, stdout, wantTotal)
	}

	// -bots: the site's classes from the sites collection, a page's from
	// its monthly buckets; csv and json.
	for _, tc := range []struct {
		page, from, to string
	}{
		{"", "2026-10-31", "2026-11-02"},
		{"", "2026-11-01", "2026-11-02"},
		{"/a", "2026-10-01", "2026-11-30"},
	} {
		from, _ := time.Parse("2006-01-02", tc.from)
		to, _ := time.Parse("2006-01-02", tc.to)
		var w qsums
		for _, h := range hits {
			if (tc.page == "" || h.page == tc.page) && !h.at.Before(from) && h.at.Before(to) {
				w.add(h.f)
			}
		}
		args := append(slices.Clone(base), "-bots", "-from", tc.from, "-to", tc.to)
		if tc.page != "" {
			args = append(args, "-page", tc.page)
		}
		stdout, stderr, code := queryRun(append(args, "-format", "csv")...)
		if code != 0 {
			t.Fatalf("-bots %q: exit %d: %s", tc.page, code, stderr)
		}
		rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
		if err != nil || len(rows) != 7 || strings.Join(rows[0], ",") != "class,views,share_percent" {
			t.Fatalf("-bots csv: %v\n%s", err, stdout)
		}
		for cl := range botclass.NumClasses {
			r := rows[1+int(cl)]
			share := math.Round(10000*float64(w.classes[cl])/float64(w.views)) / 100
			if r[0] != cl.String() || r[1] != strconv.FormatInt(w.classes[cl], 10) || r[2] != strconv.FormatFloat(share, 'f', -1, 64) {
				t.Errorf("-bots %q %s: %q, want %d (%g%%)", tc.page, cl, r, w.classes[cl], share)
			}
		}
		stdout, stderr, code = queryRun(args...)
		source := "from sites;"
		if tc.page != "" {
			source = "from monthly;"
		}
		if code != 0 || !strings.HasPrefix(stdout, "class    views    share\npeople ") || !strings.Contains(stdout, fmt.Sprintf("\ntotal    %*d  100.00%%\n", len("views"), w.views)) || !strings.Contains(stdout, source) {
			t.Errorf("-bots %q table: exit %d %s\n%s", tc.page, code, stderr, stdout)
		}
		stdout, _, code = queryRun(append(args, "-format", "json")...)
		var rs []struct {
			Class string `json:"class"`
			Views int64  `json:"views"`
		}
		if err := json.Unmarshal([]byte(stdout), &rs); code != 0 || err != nil || len(rs) != 6 || rs[0].Class != "people" || rs[0].Views != w.classes[botclass.Person] {
			t.Errorf("-bots %q json: exit %d %v\n%s", tc.page, code, err, stdout)
		}
	}

	// Each misuse: exit 2, one message, nothing on stdout.
	q := append(slices.Clone(base), "-from", "2026-11-01")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(slices.Clone(q), "-measure", "views,bytes"), "logtally: query: -measure views,bytes: more than one measure needs -format csv or json (a table shows one)"},
		{append(slices.Clone(q), "-measure", "bytes,rt_avg", "-format", "chart"), "more than one measure needs -format csv or json (a chart shows one)"},
		{append(slices.Clone(q), "-measure", "hits"), `logtally: query: -measure: measure "hits": must be one of views, bots, people, 2xx, 3xx, 4xx, 5xx, error_rate, bytes, rt_avg, rt_max`},
		{append(slices.Clone(q), "-measure", "bytes,bytes", "-format", "csv"), `measure "bytes": listed twice`},
		{append(slices.Clone(q), "-bots", "-measure", "bots"), "logtally: query: -bots counts views by class; it cannot be used with -measure"},
		{append(slices.Clone(q), "-bots", "-top", "3"), "-bots counts the site's or one page's views by class; it cannot be used with -top"},
		{append(slices.Clone(q), "-bots", "-format", "chart"), `logtally: query: -bots -format "chart": must be one of table, csv, json`},
		{append(slices.Clone(q), "-by", "referrer", "-page", "/"), "logtally: query: -by counts a site's views by value per day; they are not kept per page, so it cannot be used with -page"},
		{append(slices.Clone(q), "-by", "referrer", "-bots"), "logtally: query: -by counts a site's views by value; it cannot be used with -bots or -measure"},
		{append(slices.Clone(q), "-bots", "-step", "hour"), "logtally: query: the bot classes are counted per day: step hour: use day or month"},
		{append(slices.Clone(base), "-bots", "-from", "2020-01-01", "-to", "2020-02-01"), ""}, // sites: daily_retention 0 keeps them; below
		{append(slices.Clone(base), "-step", "minute", "-measure", "rt_avg,bytes", "-format", "csv", "-from", "2026-10-30T00:00:00Z", "-to", "2026-10-31T00:00:00Z"),
			"logtally: query: minute buckets are kept for 48h0m0s (buckets.minute_retention): 2026-10-30T00:00:00Z to 2026-10-31T00:00:00Z cannot be answered at -step minute; use -step hour\n"},
		{append(slices.Clone(base), "-bots", "-site", "nosuch.test", "-from", "2026-10-01", "-to", "2026-11-02"), `logtally: query: unknown site "nosuch.test"`},
		{append(slices.Clone(base), "-bots", "-page", "/nope", "-from", "2026-10-01", "-to", "2026-11-02"), `logtally: query: no buckets for page "/nope"`},
	} {
		stdout, stderr, code := queryRun(tc.args...)
		if tc.want == "" {
			// A site's classes before any document: zeros, exit 0.
			if code != 0 || !strings.Contains(stdout, "\ntotal        0    0.00%\n") {
				t.Errorf("%q: exit %d %s\n%s", tc.args[4:], code, stderr, stdout)
			}
			continue
		}
		if code != 2 || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want 2, %q", tc.args[4:], code, stderr, stdout, tc.want)
		}
	}
}

// TestQueryVisitors counts a log of known visitors with the real daemon
// into the wire server (buckets compared with the file's count), then
// checks logtally query -measure visitors: the day's estimate is the one
// of the registers computed here from the file under the day's salt
// (read from MongoDB), within 3 standard errors of the people in it, with
// its error; a month step over daily salts is labelled a sum of daily
// uniques; a page, a minute or hour step, another measure, -top and the
// chart are refused with exit 2.
func TestQueryVisitors(t *testing.T) {
	srv := mongotest.Start(t)
	db := srv.Database(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	const site, n = "visitors.test", 1500
	at := clock.Real{}.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	var b strings.Builder
	people := 0
	for i := range n {
		ua := "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0"
		if i%5 == 0 {
			ua = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
		} else {
			people++
		}
		fmt.Fprintf(&b, "10.9.%d.%d - - [%s] \"GET /p%d HTTP/1.1\" 200 512 \"-\" \"%s\"\n",
			i>>8&255, i&255, at.Format("02/Jan/2006:15:04:05 -0700"), i%3, ua)
	}
	if err := os.WriteFile(logPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	want := bucketcheck.CountFiles(t, logPath, site)
	conf := writeConfig(t, filepath.Join(dir, "daemon.toml"), srv.URI(), db.Name(), site, logPath, noPrealloc, func(c *config.Config) {
		c.Buckets.MinuteRetention = config.Duration(48 * time.Hour) // the default
	})
	d, out := daemon(t, conf)
	countAll(t, d, out, db, want)

	// The registers every host must reach: the file's people keyed here.
	salt, ok := salts.NewLookup(db, visitor.Day, 0).For(at.Unix())
	if !ok {
		t.Fatal("no salt of the day in MongoDB")
	}
	sk := visitor.NewSketch(visitor.SitePrecision)
	for l := range strings.Lines(b.String()) {
		if strings.Contains(l, "Googlebot") {
			continue
		}
		client, _, _ := strings.Cut(l, " ")
		sk.Add(visitor.KeyOf(salt, []byte(site), []byte(client), visitor.UADigest([]byte("Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0"))))
	}
	est := math.Round(sk.Estimate())
	if d := est/float64(people) - 1; math.Abs(d) > 3*visitor.StdError(visitor.SitePrecision) {
		t.Fatalf("the file's sketch estimates %.0f of %d people: beyond 3 s.e.", est, people)
	}

	day := at.Format("2006-01-02")
	next := at.AddDate(0, 0, 1).Format("2006-01-02")
	base := []string{"query", "-config", conf, "-site", site, "-measure", "visitors", "-from", day, "-to", next}
	stdout, stderr, code := queryRun(append(base, "-format", "csv")...) // -step day: the default with visitors
	if code != 0 {
		t.Fatalf("csv: exit %d: %s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	wantRow := []string{day + "T00:00:00Z", site, strconv.FormatFloat(est, 'f', 0, 64), "0.01625", "day"}
	if len(rows) != 2 || strings.Join(rows[0], ",") != "time,site,visitors,visitors_error,salt_period" || !slices.Equal(rows[1], wantRow) {
		t.Errorf("csv:\n%s\nwant the row %q", stdout, wantRow)
	}
	t.Logf("%d people: estimate %.0f ± 1.6%%", people, est)
	stdout, stderr, code = queryRun(append(base, "-step", "day")...)
	if code != 0 || !strings.Contains(stdout, "(1 s.e.)") || !strings.Contains(stdout, strconv.FormatFloat(est, 'f', 0, 64)+"  ±1.6%") {
		t.Errorf("table: exit %d: %s\n%s", code, stderr, stdout)
	}

	// A month step over daily salts: a sum of daily uniques, so labelled.
	month := []string{"query", "-config", conf, "-site", site, "-measure", "visitors", "-step", "month", "-from", at.Format("2006-01"), "-to", at.AddDate(0, 1, 0).Format("2006-01")}
	stdout, stderr, code = queryRun(append(month, "-format", "json")...)
	var pts []map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &pts) != nil || len(pts) != 1 || pts[0]["visitors_daily_sum"] != est || pts[0]["visitors"] != nil {
		t.Errorf("month json: exit %d: %s\n%s", code, stderr, stdout)
	}
	stdout, _, _ = queryRun(month...)
	if head, _, _ := strings.Cut(stdout, "\n"); !strings.Contains(head, "sum of daily uniques, not uniques") {
		t.Errorf("month table header %q", head)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-step", "hour"}, "-step day or -step month"},
		{[]string{"-step", "minute"}, "-step day or -step month"},
		{[]string{"-measure", "visitors,views"}, "read alone"},
		{[]string{"-top", "2"}, "per site"},
		{[]string{"-format", "chart"}, "table, csv, json"},
	} {
		stdout, stderr, code := queryRun(append(slices.Clone(base), c.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
	stdout, stderr, code = queryRun("query", "-config", conf, "-site", "nobody.test", "-measure", "visitors", "-from", day)
	if code != 2 || !strings.Contains(stderr, "no visitors document") {
		t.Errorf("unknown site: exit %d: %s%s", code, stdout, stderr)
	}
}

// countAll waits until the daemon d has every hit of want in db, stops it
// with SIGTERM and checks every bucket equals want.
func countAll(t *testing.T, d *exec.Cmd, out *syncbuf.Buffer, db *mongo.Database, want bucketcheck.Counts) {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- d.Wait() }()
	if !testenv.Until(60*time.Second, func() bool {
		select {
		case err := <-exited:
			t.Fatalf("logtally run exited early: %v\n%s", err, out)
		default:
		}
		return monthTotal(t, db) >= want.Hits
	}) {
		t.Fatalf("MongoDB did not reach %d hits:\n%s", want.Hits, out)
	}
	d.Process.Signal(syscall.SIGTERM)
	if err := <-exited; err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, out)
	}
	if res := bucketcheck.CompareAll(t, want, bucketcheck.Read(t, db)); !res.Exact() {
		t.Fatalf("buckets differ from the log: %v", res)
	}
}
