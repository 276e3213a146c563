package dashboard

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium returns the path of a Chromium (or Chrome) binary, or skips
// the test saying how to get one.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium on PATH: the dashboard's module tests run in it (Debian: apt-get install chromium; .ci/run installs it)")
	return ""
}

// The page's modules without the DOM (format.js, hash.js, model.js) pass
// their unit tests, testdata/jstest/test.js, in headless Chromium with
// the browser's zone set to Europe/Paris: the test page is served beside
// the static files under the dashboard's CSP, and a script error or a
// CSP violation fails the test.
func TestModules(t *testing.T) {
	exe := chromium(t)
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

	var mu sync.Mutex
	var problems []string
	listen := func(ev any) {
		var p string
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			p = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				p += " " + e.ExceptionDetails.Exception.Description
			}
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				p = "log: " + e.Entry.Text + " " + e.Entry.URL
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				p = "console.error"
			}
		}
		if p != "" {
			mu.Lock()
			problems = append(problems, p)
			mu.Unlock()
		}
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.Flag("lang", "en-US"))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelB := chromedp.NewContext(actx, chromedp.WithListener(listen))
	defer cancelB()
	ctx, cancel := context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()

	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Europe/Paris"}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/jstest/")); err != nil {
		t.Fatalf("open the test page: %v", err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Poll[string](`document.body.dataset.done === '1' && document.body.dataset.results`,
		chromedp.WithPollingTimeout(30*time.Second)))
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		t.Fatalf("the tests did not finish (a module failed to load?): %v; the browser reported %q", err, problems)
	}
	if len(problems) > 0 {
		t.Errorf("the browser reported %d problems (script errors, CSP violations): %q", len(problems), problems)
	}
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
