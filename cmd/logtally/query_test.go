package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
)

const querySite = "query.test"

// queryConfig writes a config for the query tests: the fixture's log as
// the one source, small flush chunks (the embedded server), no
// preallocation, and minuteRetention. It returns the config's path.
func queryConfig(t *testing.T, dir, name, uri, db, logPath, minuteRetention string) string {
	t.Helper()
	return writeConfig(t, filepath.Join(dir, name), testConfig{
		StateDir: filepath.Join(dir, "state"), URI: uri, DB: db, Site: querySite, LogPath: logPath,
		Buckets: fmt.Sprintf("preallocate = false\nminute_retention = %q", minuteRetention),
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
	key := "/" + querySite + page
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
	d, out := daemon(t, queryConfig(t, dir, "daemon.toml", srv.URI(), db.Name(), logPath, "0s"))
	exited := make(chan error, 1)
	go func() { exited <- d.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for bucketcheck.Read(t, db).MonthTotal < want.Hits {
		select {
		case err := <-exited:
			t.Fatalf("logtally run exited early: %v\n%s", err, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("MongoDB did not reach %d hits:\n%s", want.Hits, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	d.Process.Signal(syscall.SIGTERM)
	if err := <-exited; err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, out)
	}
	if res := bucketcheck.CompareAll(t, want, bucketcheck.Read(t, db)); !res.Exact() {
		t.Fatalf("buckets differ from the log: %v", res)
	}

	// The query reads with the default minute retention, 48h before a
	// fixed now.
	conf := queryConfig(t, dir, "query.toml", srv.URI(), db.Name(), logPath, "48h")
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	queryNow = func() time.Time { return now }
	t.Cleanup(func() { queryNow = time.Now })

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
