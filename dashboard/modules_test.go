package dashboard

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/logtally/logtally/internal/browsertest"
)

// The page's modules without the DOM (format.js, hash.js, model.js) pass
// their unit tests, testdata/jstest/test.js, in headless Chromium with
// the browser's zone set to Europe/Paris: the test page is served beside
// the static files under the dashboard's CSP, and a script error or a
// CSP violation fails the test.
func TestModules(t *testing.T) {
	br := browsertest.Start(t, "Europe/Paris")
	files, err := fs.Sub(static, "static")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(files))
	mux.Handle("GET /jstest/", http.StripPrefix("/jstest/", http.FileServer(http.Dir("testdata/jstest"))))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", CSP)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		mux.ServeHTTP(w, r)
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(br.Ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/jstest/")); err != nil {
		t.Fatalf("open the test page: %v", err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Poll[string](`document.body.dataset.done === '1' && document.body.dataset.results`,
		chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		t.Fatalf("the tests did not finish (a module failed to load?): %v; the browser reported %q", err, br.Problems())
	}
	br.CheckProblems(t)
	var results []struct{ Name, Err string }
	if err := json.Unmarshal([]byte(raw), &results); err != nil {
		t.Fatalf("results: %v: %s", err, raw)
	}
	if len(results) < 20 {
		t.Errorf("%d results, want every test of test.js: %s", len(results), raw)
	}
	for _, r := range results {
		t.Run(r.Name, func(t *testing.T) {
			if r.Err != "" {
				t.Error(r.Err)
			}
		})
	}
}
