package dashboard

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/internal/browsertest"
	"github.com/logtally/logtally/internal/fill"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/query"
)

// shownSources is what the page shows of where traffic comes from, read
// through its test hooks (app.js).
type shownSources struct {
	State       string
	Empty       string
	Hint        string
	Attribution []string
	Markup      int      // script, img or other elements a value could have made
	Pressed     []string // the channels whose buttons are pressed
	Tables      []struct {
		Dim     string
		Channel string // the channel whose referrers the table shows
		Rows    []struct {
			Source, Text, Views, Share string
			Crawler                    string // a crawler's purpose and operator
		}
	}
}

const readSources = `(() => {
  const sec = document.querySelector('#sources-section');
  return {
    State: sec.dataset.state || '',
    Empty: document.querySelector('#sources-empty').hidden ? '' : document.querySelector('#sources-empty').textContent,
    Hint: document.querySelector('#sources-hint').textContent,
    Attribution: Array.from(document.querySelectorAll('#sources-attribution .attr-line')).map((e) => e.textContent),
    Markup: sec.querySelectorAll('script, img, iframe, svg, b, i, a').length,
    Pressed: Array.from(sec.querySelectorAll('button.src-pick[aria-pressed=true]')).map((b) => b.closest('tr').dataset.source),
    Tables: Array.from(document.querySelectorAll('table.src')).map((t) => ({
      Dim: t.dataset.dim,
      Channel: t.dataset.channel || '',
      Rows: Array.from(t.querySelectorAll('tbody tr')).map((r) => ({
        Source: r.dataset.source,
        Text: r.querySelector('td.src-value').firstChild.textContent,
        Views: r.querySelector('td[data-measure=views]').dataset.value,
        Share: r.querySelector('td[data-measure=share]').dataset.value,
        Crawler: (r.querySelector('td.src-value .src-crawler') || {}).textContent || '',
      })),
    })),
  };
})()`

// The panels of where traffic comes from, in headless Chromium: each
// dimension's table shows the top values, (other) and (not counted) with
// their views and shares as counted here (summing to the views), each
// crawler the lists name with its purpose and operator, every
// value as text (an ASN organisation or a crawler name holding markup
// makes no element; a bidirectional control is shown escaped), the geo
// databases' attribution, and for a site whose days hold no counts by
// dimension one line instead of the tables. LOGTALLY_SCREENSHOT_SOURCES
// names a file to keep the panels' screenshot in (docs/dashboard-sources.png).
func TestSourcesPage(t *testing.T) {
	br := browsertest.Start(t, "Europe/Paris")
	srv := mongotest.Start(t)
	db := srv.Database(t)
	now := utc("2026-11-25T12:00:00Z")
	first := utc("2026-11-23T00:00:00Z")
	from, to := first, utc("2026-11-26T00:00:00Z")
	a := hits(7, 240, first, 60*time.Hour, "/", "/a")
	want := fillSources(t, db, "a.test", a, first.AddDate(0, 0, 1), from, to)
	fill.Write(t, db, "off.test", hits(8, 30, first, 24*time.Hour, "/"))
	attr := []string{"IP Geolocation by DB-IP (https://db-ip.com), licensed under CC BY 4.0."}
	d, err := New(Config{Reader: &query.Reader{DB: db, Clock: clock.NewFake(now)}, Attribution: attr})
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(d.Handler())
	defer web.Close()
	views := count(a, from, to, "").views

	ctx, cancel := context.WithTimeout(br.Ctx, 3*time.Minute)
	defer cancel()
	open := func(site string) shownSources {
		t.Helper()
		hash := fmt.Sprintf("#site=%s&from=%d&to=%d", site, from.UnixMilli(), to.UnixMilli())
		if err := chromedp.Do(ctx, chromedp.Navigate(web.URL+"/"+hash)); err != nil {
			t.Fatalf("open %s: %v", site, err)
		}
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`document.body.dataset.view === %q`, hash),
			chromedp.WithPollingTimeout(60*time.Second)))
		if err != nil {
			t.Fatalf("%s: no render: %v", site, err)
		}
		if msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.error || ''`)); msg != "" {
			t.Fatalf("%s: the page says %q", site, msg)
		}
		s, err := chromedp.Run(ctx, chromedp.Evaluate[shownSources](readSources))
		if err != nil {
			t.Fatalf("%s: %v", site, err)
		}
		return s
	}

	s := open("a.test")
	if s.State != "shown" || s.Empty != "" || s.Hint != "views over whole UTC days, 2026-11-23 to 2026-11-25" || !slices.Equal(s.Attribution, attr) {
		t.Errorf("a.test: state %q, line %q, hint %q, attribution %q", s.State, s.Empty, s.Hint, s.Attribution)
	}
	if s.Markup != 0 {
		t.Errorf("a.test: %d elements made of values", s.Markup)
	}
	if len(s.Tables) != int(dims.N) {
		t.Fatalf("%d tables, want %d", len(s.Tables), dims.N)
	}
	seen := map[string]bool{}
	for _, tab := range s.Tables {
		d, ok := dims.Parse(tab.Dim)
		if !ok || seen[tab.Dim] {
			t.Fatalf("table %q", tab.Dim)
		}
		seen[tab.Dim] = true
		rows := wantRows(want[d], views, SourcesTop)
		if len(tab.Rows) != len(rows) {
			t.Errorf("%s: %d rows, want %d", d, len(tab.Rows), len(rows))
			continue
		}
		var sum int64
		for i, r := range tab.Rows {
			n := number(t, d.String()+" views", r.Views)
			sum += n
			share := fmt.Sprint(100 * float64(rows[i].Views) / float64(views))
			if r.Source != rows[i].Value || r.Text != query.Shown(rows[i].Value) || n != rows[i].Views || r.Share != share {
				t.Errorf("%s row %d: %q shown %q, %d views, %s%%; want %q %d %s%%", d, i, r.Source, r.Text, n, r.Share, rows[i].Value, rows[i].Views, share)
			}
			wantFacts := ""
			if f, ok := crawlerFacts[r.Source]; ok && d == dims.Crawler {
				wantFacts = f[1] + " · " + f[0]
			}
			if r.Crawler != wantFacts {
				t.Errorf("%s row %d: %q shown with %q, want %q", d, i, r.Source, r.Crawler, wantFacts)
			}
		}
		if sum != views {
			t.Errorf("%s: the rows sum to %d, want the %d views", d, sum, views)
		}
	}
	// The hostile values are there, as text.
	for _, v := range []string{hostileASN, hostileCrawler, "GPTBot \u202eevil"} {
		found := false
		for _, tab := range s.Tables {
			for _, r := range tab.Rows {
				found = found || r.Source == v && r.Text == query.Shown(v)
			}
		}
		if !found {
			t.Errorf("%q not shown as text", v)
		}
	}

	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#sources-section")))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "dashboard-sources.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if p := os.Getenv("LOGTALLY_SCREENSHOT_SOURCES"); p != "" {
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Clicking a channel shows its referrers (each host's channel from
	// the lists, (other) with the rest of the channel's views); clicking
	// "all channels" shows them all again.
	click := func(sel string) shownSources {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
			t.Fatalf("click %s: %v", sel, err)
		}
		s, err := chromedp.Run(ctx, chromedp.Evaluate[shownSources](readSources))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	referrers := func(s shownSources) (channel string, rows []query.DimValue) {
		for _, tab := range s.Tables {
			if tab.Dim == "referrer" {
				for _, r := range tab.Rows {
					rows = append(rows, query.DimValue{Value: r.Source, Views: number(t, "referrer views", r.Views)})
				}
				return tab.Channel, rows
			}
		}
		t.Fatal("no referrers' table")
		return "", nil
	}
	for _, ch := range []string{"search", "referral"} {
		s = click(fmt.Sprintf(`table.src[data-dim=channel] tr[data-source=%q] button.src-pick`, ch))
		got, rows := referrers(s)
		want := wantByChannel(want[dims.Referrer], ch, want[dims.Channel][ch], SourcesTop)
		for i := range want {
			want[i].Channel = ""
		}
		if got != ch || !slices.Equal(rows, want) || !slices.Equal(s.Pressed, []string{ch}) {
			t.Errorf("%s clicked: the referrers of %q, pressed %q:\n got %v\nwant %v", ch, got, s.Pressed, rows, want)
		}
	}
	if len(wantByChannel(want[dims.Referrer], "referral", want[dims.Channel]["referral"], SourcesTop)) < 2 {
		t.Error("the referral channel's referrers have no (other) row to show")
	}
	s = click(`table.src[data-dim=referrer] button.src-all`)
	if got, rows := referrers(s); got != "" || len(rows) != len(wantRows(want[dims.Referrer], views, SourcesTop)) || len(s.Pressed) != 0 {
		t.Errorf("all channels clicked: the referrers of %q (%d rows), pressed %q", got, len(rows), s.Pressed)
	}

	s = open("off.test")
	if s.State != "off" || !strings.Contains(s.Empty, "[dimensions] enabled = true") || len(s.Tables) != 0 {
		t.Errorf("off.test: state %q, line %q, %d tables", s.State, s.Empty, len(s.Tables))
	}
	br.CheckProblems(t)
}

// number reads a whole number the page wrote in a data-value.
func number(t *testing.T, what, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Errorf("%s: %q is not a number", what, s)
	}
	return n
}
