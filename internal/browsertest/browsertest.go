// Package browsertest is for tests of web pages: it starts a headless
// Chromium (or Chrome) tab, with the page's zone and language set, and
// records every problem the page reports (an uncaught exception, an
// error in the console or the log, such as a CSP violation), so that a
// test of the dashboard fails on a script error it did not look for.
//
// A test without a Chromium on PATH is skipped, saying how to get one
// (Debian: apt-get install chromium; .ci/run installs it).
package browsertest

import (
	"context"
	"os/exec"
	"slices"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser is one headless tab. Ctx drives it (chromedp); it ends with
// the test.
type Browser struct {
	Ctx      context.Context
	mu       sync.Mutex
	problems []string
}

// Start opens a tab of a 1280×1700 window, language en-US, in time zone
// zone (an IANA name), or skips t when no Chromium is on PATH.
func Start(t testing.TB, zone string) *Browser {
	t.Helper()
	exe := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		t.Skip("no Chromium on PATH: the browser tests need it (Debian: apt-get install chromium; .ci/run installs it)")
	}
	b := &Browser{}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(1280, 1700), chromedp.Flag("lang", "en-US"))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithListener(b.listen))
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	b.Ctx = ctx
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: zone}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	return b
}

// listen records the problems the page reports.
func (b *Browser) listen(ev any) {
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
		b.mu.Lock()
		b.problems = append(b.problems, p)
		b.mu.Unlock()
	}
}

// Problems returns the problems the page reported so far.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.problems)
}

// CheckProblems fails t if the page reported a problem.
func (b *Browser) CheckProblems(t testing.TB) {
	t.Helper()
	if p := b.Problems(); len(p) > 0 {
		t.Errorf("the browser reported %d problems (script errors, CSP violations): %q", len(p), p)
	}
}
