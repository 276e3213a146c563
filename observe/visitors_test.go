package observe

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/salts"
	"github.com/logtally/logtally/tailer"
	"github.com/logtally/logtally/visitor"
)

// TestVisitorsMetrics runs a real pipeline with visitors on: /metrics
// shows this host's estimate of today's visitors, equal to the sketch of
// the file's people keyed here under the day's salt (read from MongoDB),
// its standard error, and the hit of a person whose day's salt the host
// never held (a line of 2020) as unsalted. No address or user agent
// appears; the buckets equal the file's count.
func TestVisitorsMetrics(t *testing.T) {
	dir := t.TempDir()
	db := mongotest.Start(t).Database(t)
	logPath := filepath.Join(dir, "access.log")
	const ua = "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0"
	at := clock.Real{}.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	var b []byte
	var clients []string
	for i := range 400 {
		agent := ua
		if i%4 == 0 {
			agent = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
		} else {
			clients = append(clients, fmt.Sprintf("10.7.%d.%d", i>>8, i&255))
		}
		b = fmt.Appendf(b, "10.7.%d.%d - - [%s] \"GET /p%d HTTP/1.1\" 200 10 \"-\" \"%s\"\n", i>>8, i&255, at.Format("02/Jan/2006:15:04:05 -0700"), i%3, agent)
	}
	b = fmt.Appendf(b, "10.7.9.9 - - [01/Feb/2020:10:00:00 +0000] \"GET /old HTTP/1.1\" 200 10 \"-\" \"%s\"\n", ua)
	if err := os.WriteFile(logPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	want := bucketcheck.CountFiles(t, logPath, "example.com")
	p, err := pipeline.New(pipeline.Config{
		BufferPath:      filepath.Join(dir, "state", "buffer.db"),
		Buffer:          buffer.Options{LockTimeout: time.Second},
		Flush:           flusher.Config{DB: db, Interval: 30 * time.Millisecond, MaxOps: 32, Timeout: 5 * time.Second, MaxBackoff: 100 * time.Millisecond},
		CommitInterval:  10 * time.Millisecond,
		ShutdownTimeout: 10 * time.Second,
		Visitors:        &pipeline.Visitors{Period: visitor.Day, Pages: true},
		Sources: []pipeline.Source{{
			Name: "web", Paths: []string{logPath},
			Parser: parser.Config{Format: "combined", Site: "example.com"},
			Tailer: tailer.Config{PollInterval: 10 * time.Millisecond, RescanInterval: 50 * time.Millisecond},
		}},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() {
		cancel()
		<-done
		p.Close(context.Background())
	}()
	s, err := New(Config{Listen: "127.0.0.1:0", Source: p, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !testenv.Until(60*time.Second, func() bool {
		st := p.Stats()
		return st.Flusher.Hits == uint64(want.Hits) && st.PendingHits == 0
	}) {
		t.Fatalf("timed out waiting for %d hits to be flushed: %+v", want.Hits, p.Stats())
	}
	if res := bucketcheck.CompareAll(t, want, bucketcheck.Read(t, db)); !res.Exact() {
		t.Fatalf("buckets differ from the log: %v", res)
	}

	salt, ok := salts.NewLookup(db, visitor.Day, 0).For(at.Unix())
	if !ok {
		t.Fatal("no salt of the day in MongoDB")
	}
	sk := visitor.NewSketch(visitor.SitePrecision)
	for _, c := range clients {
		sk.Add(visitor.KeyOf(salt, []byte("example.com"), []byte(c), visitor.UADigest([]byte(ua))))
	}
	_, metrics, _ := get(t, s.Handler(), "/metrics")
	for _, w := range []string{
		fmt.Sprintf("logtally_visitors_today{site=\"example.com\"} %.0f\n", math.Round(sk.Estimate())),
		"logtally_visitors_error_ratio 0.01625\n",
		"logtally_visitors_unsalted_hits_total 1\n",
	} {
		if !strings.Contains(metrics, w) {
			t.Errorf("no %q in /metrics", w)
		}
	}
	t.Logf("%d people: this host's estimate %.0f", len(clients), sk.Estimate())
	if strings.Contains(metrics, "10.7.") || strings.Contains(metrics, "Firefox") {
		t.Error("/metrics holds an address or a user agent")
	}
}
