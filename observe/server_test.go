package observe

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/referrer"
)

// fake is a Source whose answers the test sets.
type fake struct {
	mu        sync.Mutex
	stats     pipeline.Stats
	alive     error
	health    error
	status    pipeline.Status
	statusErr error
}

func (f *fake) Stats() pipeline.Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

func (f *fake) Alive(time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.alive
}

// Health is Alive's error, else the health set (a pipeline's Health
// also fails on what does not stop it: MongoDB down with hits pending).
func (f *fake) Health(time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.alive != nil {
		return f.alive
	}
	return f.health
}

func (f *fake) Status() (pipeline.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status, f.statusErr
}

var t0 = time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)

func sampleFake() *fake {
	f := &fake{}
	a := &f.stats.Aggregator
	a.Lines, a.Hits, a.Malformed, a.Filtered, a.TooLong, a.Other, a.Commits, a.SitesFolded = 120, 100, 5, 15, 2, 7, 9, 11
	a.BySource = map[string]aggregate.SourceStats{"web": {Lines: 120, Hits: 100}}
	a.HitsBySite = map[string]uint64{"example.com": 70, "www.example.com": 30}
	a.Outcomes[parser.OK] = 100
	a.Outcomes[parser.MalformedTime] = 3
	a.Outcomes[parser.MalformedEmpty] = 2
	a.Outcomes[parser.FilteredUserAgent] = 15
	f.stats.Flusher = flusher.Stats{Batches: 3, Hits: 80, BulkWrites: 4, Updates: 40, Finds: 2, Inserts: 11, InsertCalls: 2, Retries: 1,
		PlanFinds: 5, PlanInserts: 7, PlanInsertCalls: 3, PlanDups: 2, Tails: flusher.TailStats{Writes: 13, Spills: 1, SpillDocs: 2}}
	f.stats.PendingKeys, f.stats.PendingHits, f.stats.BufferBytes = 6, 20, 4096
	f.status = pipeline.Status{
		Instance: "web-1", BufferID: "0123abcd", BufferPath: "/var/lib/logtally/buffer.db", BufferBytes: 4096,
		LastCommit: t0.Add(-time.Second), PendingKeys: 6, PendingHits: 20,
		InFlight:  &pipeline.BatchStatus{ID: "b2", Keys: 4, Hits: 15, SealedAt: t0.Add(-5 * time.Second), Resume: "start"},
		LastAcked: &pipeline.AckedStatus{ID: "b1", SealedAt: t0.Add(-15 * time.Second)},
		Sources: []pipeline.SourceStatus{
			{Name: "web", LagBytes: 300, Files: []pipeline.FileStatus{
				{Path: "/var/log/nginx/access.log", File: "2049:12", Offset: 700, Size: 1000, Lag: 300, Checkpoint: true, Followed: true},
				{Path: "/var/log/nginx/access.log.1", File: "2049:11", Offset: 500, Size: -1, Lag: -1, Checkpoint: true},
			}},
			{Name: "api", Files: []pipeline.FileStatus{}},
		},
	}
	return f
}

func newServer(t *testing.T, f *fake, cfg Config) *Server {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	cfg.Source = f
	cfg.Clock = clock.NewFake(t0)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func get(t *testing.T, h http.Handler, path string) (int, string, http.Header) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", path, nil)
	req.Host = "127.0.0.1:9464"
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String(), rec.Header()
}

// Every endpoint answers only the Host names a web page in the
// operator's browser cannot take over by DNS rebinding: IP addresses in
// their usual form, localhost, the listen address's name and http.hosts.
// The numeric forms a resolver reads as loopback (0x7f000001, 127.1) and
// names that resolve to it (127.0.0.1.nip.io) are names like any other.
func TestHostChecked(t *testing.T) {
	dash := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("page")) })
	s := newServer(t, sampleFake(), Config{Listen: "logs.internal:9464", Hosts: []string{"metrics.example.org"}, Dashboard: dash})
	for _, path := range []string{"/status", "/metrics", "/healthz", "/", "/dashboard"} {
		for host, want := range map[string]int{
			"attacker.example": 403, "attacker.example:9464": 403, "127.0.0.1.nip.io:9464": 403, "0x7f000001:9464": 403,
			"127.1:9464": 403, "2130706433": 403, "": 403, "a.localhost:9464": 403, "localhost.attacker.example": 403,
			"127.0.0.1:9464": 200, "127.0.0.1": 200, "[::1]:9464": 200, "localhost:9464": 200, "LOCALHOST.:9464": 200,
			"10.0.0.5:9464": 200, "[2001:db8::5]:9464": 200, "logs.internal:9464": 200, "Metrics.Example.Org": 200,
		} {
			if path == "/dashboard" && want == 200 {
				want = 301
			}
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", path, nil)
			req.Host = host
			s.Handler().ServeHTTP(rec, req)
			if rec.Code != want {
				t.Errorf("GET %s Host %q: %d, want %d", path, host, rec.Code, want)
			}
			if want == 403 && strings.Contains(rec.Body.String(), "buffer.db") {
				t.Errorf("GET %s Host %q answered with the status: %s", path, host, rec.Body)
			}
		}
	}
	// The page has its own checks (package dashboard).
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/dashboard/", nil)
	req.Host = "attacker.example"
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Body.String() != "page" {
		t.Errorf("GET /dashboard/: %d %q, want the page's handler", rec.Code, rec.Body)
	}
}

func TestMetrics(t *testing.T) {
	s := newServer(t, sampleFake(), Config{Version: "v1.2.3"})
	code, body, hdr := get(t, s.Handler(), "/metrics")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %q\n%s", code, hdr.Get("Content-Type"), body)
	}
	for _, want := range []string{
		`logtally_build_info{version="v1.2.3"} 1`,
		`logtally_alive 1`,
		`logtally_lines_total{source="web"} 120`,
		`logtally_too_long_lines_total 2`,
		`logtally_hits_total{site="example.com"} 70`,
		`logtally_hits_total{site="www.example.com"} 30`,
		`logtally_other_hits_total 7`,
		`logtally_sites_folded_hits_total 11`,
		`logtally_commits_total 9`,
		`logtally_malformed_lines_total{reason="time"} 3`,
		`logtally_malformed_lines_total{reason="empty_line"} 2`,
		`logtally_malformed_lines_total{reason="host"} 0`,
		`logtally_filtered_lines_total{reason="user_agent"} 15`,
		`logtally_filtered_lines_total{reason="status"} 0`,
		`logtally_buffer_pending_buckets 6`,
		`logtally_buffer_pending_hits 20`,
		`logtally_buffer_size_bytes 4096`,
		`logtally_flush_batches_total{result="ok"} 3`,
		`logtally_flush_batches_total{result="failed"} 0`,
		`logtally_flush_duration_seconds_count 0`,
		`logtally_flushed_hits_total 80`,
		`logtally_flush_retries_total 1`,
		`logtally_mongo_operations_total{op="bulk_write"} 4`,
		`logtally_mongo_operations_total{op="update"} 40`,
		`logtally_mongo_operations_total{op="find"} 2`,
		`logtally_mongo_operations_total{op="insert"} 2`,
		`logtally_mongo_operations_total{op="plan_find"} 5`,
		`logtally_mongo_operations_total{op="plan_insert"} 3`,
		`logtally_tail_writes_total 13`,
		`logtally_tail_spills_total 1`,
		`logtally_tail_spill_documents_total 2`,
		`logtally_plans_proposed_total{result="inserted"} 5`,
		`logtally_plans_proposed_total{result="lost"} 2`,
		`logtally_mongo_buckets_created_total 11`,
		`logtally_files_followed{source="web"} 1`,
		`logtally_files_followed{source="api"} 0`,
		`logtally_file_lag_bytes{source="web"} 300`,
		`logtally_file_lag_bytes{source="api"} 0`,
		`logtally_last_commit_timestamp_seconds 1.769939999e+09`,
		`logtally_last_acked_batch_sealed_timestamp_seconds 1.769939985e+09`,
		"# TYPE logtally_lines_total counter",
		"# TYPE logtally_buffer_pending_buckets gauge",
		"go_goroutines ",
		"process_open_fds ",
	} {
		if !strings.Contains(body, want+"\n") && !strings.Contains(body, want) {
			t.Errorf("no %q in /metrics", want)
		}
	}
	for _, never := range []string{"/var/log", "access.log", "promhttp_metric_handler_requests_total"} {
		if strings.Contains(body, never) {
			t.Errorf("/metrics holds %q", never)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
	// Names and help follow Prometheus's conventions.
	problems, err := testutil.CollectAndLint(newCollector(sampleFake(), "v", nil, clock.NewFake(t0), slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// A failing Status leaves the file and time metrics out, the rest stays.
func TestMetricsWithoutStatus(t *testing.T) {
	f := sampleFake()
	f.statusErr = errors.New("buffer closed")
	f.alive = errors.New("flusher: no progress since 2026-02-01T09:00:00Z")
	_, body, _ := get(t, newServer(t, f, Config{}).Handler(), "/metrics")
	if !strings.Contains(body, `logtally_lines_total{source="web"} 120`) || !strings.Contains(body, "logtally_alive 0") {
		t.Errorf("totals missing:\n%s", body)
	}
	if strings.Contains(body, "logtally_file_lag_bytes") {
		t.Errorf("lag without a status:\n%s", body)
	}
}

func TestHealthz(t *testing.T) {
	f := sampleFake()
	s := newServer(t, f, Config{})
	if code, body, _ := get(t, s.Handler(), "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("alive: %d %q", code, body)
	}
	f.alive = errors.New("aggregator: no progress since 2026-02-01T09:59:00Z")
	if code, body, _ := get(t, s.Handler(), "/healthz"); code != 503 || body != "aggregator: no progress since 2026-02-01T09:59:00Z\n" {
		t.Errorf("stuck: %d %q", code, body)
	}
	// Alive but not healthy: /healthz says Health's reason.
	f.alive = nil
	f.mu.Lock()
	f.health = errors.New("MongoDB unreachable since 2026-02-01T09:58:00Z: 300 hits pending")
	f.mu.Unlock()
	if code, body, _ := get(t, s.Handler(), "/healthz"); code != 503 || body != "MongoDB unreachable since 2026-02-01T09:58:00Z: 300 hits pending\n" {
		t.Errorf("not making progress: %d %q", code, body)
	}
	_, status, _ := get(t, s.Handler(), "/status")
	if !strings.Contains(status, `"health": "MongoDB unreachable since 2026-02-01T09:58:00Z: 300 hits pending"`) {
		t.Errorf("/status does not show Health's reason:\n%s", status)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/healthz", nil)
	req.Host = "localhost"
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz: %d", rec.Code)
	}
	if code, _, _ := get(t, s.Handler(), "/nothing"); code != 404 {
		t.Errorf("GET /nothing: %d", code)
	}
}

func TestStatus(t *testing.T) {
	f := sampleFake()
	f.status.Instance = ""
	s := newServer(t, f, Config{Version: "v1.2.3", Instance: "web-2", MongoURI: "mongodb://db:27017/"})
	code, body, hdr := get(t, s.Handler(), "/status")
	if code != 200 || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /status: %d %s\n%s", code, hdr.Get("Content-Type"), body)
	}
	var rep StatusReport
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Instance != "web-2" || rep.BufferID != "0123abcd" || rep.Version != "v1.2.3" || rep.Health != "ok" ||
		rep.Mongo != "mongodb://db:27017/" || !rep.Time.Equal(t0) || rep.PendingHits != 20 || rep.PendingKeys != 6 {
		t.Errorf("report: %+v", rep)
	}
	if rep.InFlight == nil || rep.InFlight.ID != "b2" || rep.InFlight.Hits != 15 || rep.InFlight.Resume != "start" ||
		rep.LastAcked == nil || rep.LastAcked.ID != "b1" || !rep.LastAcked.SealedAt.Equal(t0.Add(-15*time.Second)) {
		t.Errorf("batches: %+v %+v", rep.InFlight, rep.LastAcked)
	}
	if len(rep.Sources) != 2 || rep.Sources[0].LagBytes != 300 || len(rep.Sources[0].Files) != 2 ||
		rep.Sources[0].Files[0] != f.status.Sources[0].Files[0] || rep.Sources[1].Files == nil {
		t.Errorf("sources: %+v", rep.Sources)
	}
	// The lists built in, each as its package describes it.
	wantLists := []List{{"bot lists", botclass.Version()}, {"referrer lists", referrer.Version()}, {"hosting networks", geo.HostingVersion()}}
	if !slices.Equal(rep.Lists, wantLists) {
		t.Errorf("lists %+v, want %+v", rep.Lists, wantLists)
	}
	for _, l := range rep.Lists {
		if !strings.Contains(l.Version, "@") {
			t.Errorf("list %q: version %q names no commit", l.Name, l.Version)
		}
	}
	for _, k := range []string{`"in_flight": {`, `"last_acked": {`, `"lag": -1`, `"files": []`} {
		if !strings.Contains(body, k) {
			t.Errorf("no %s in\n%s", k, body)
		}
	}

	f.status.InFlight, f.status.LastAcked = nil, nil
	f.alive = errors.New("flusher: no progress since 2026-02-01T09:00:00Z")
	_, body, _ = get(t, s.Handler(), "/status")
	if !strings.Contains(body, `"in_flight": null`) || !strings.Contains(body, `"health": "flusher: no progress since`) {
		t.Errorf("no batches, not alive:\n%s", body)
	}

	f.statusErr = errors.New("read checkpoints: database not open")
	if code, body, _ := get(t, s.Handler(), "/status"); code != 500 || !strings.Contains(body, "database not open") {
		t.Errorf("status error: %d %s", code, body)
	}
}

// The MongoDB password never shows, wherever it got to: the URI is shown
// redacted, and a message that carries the password (an error logged with
// the URI in it, a health reason) has it cut out.
func TestPasswordNeverShown(t *testing.T) {
	const uri = "mongodb://user:s3cret@127.0.0.1:1/"
	f := sampleFake()
	f.alive = errors.New("flusher: stuck on mongodb://user:s3cret@127.0.0.1:1/")
	tap := NewTap(slog.NewTextHandler(io.Discard, nil))
	log := slog.New(tap).With("component", "flusher")
	log.Warn("flush failed", "err", errors.New(`connection() error occurred during connection handshake: auth error: sasl conversation error: unable to authenticate using mechanism "SCRAM-SHA-256" for mongodb://user:s3cret@127.0.0.1:1/`))
	log.Error("weird", "uri", "mongodb://user:s3cret@127.0.0.1:1/", "json", `{"pw":"s3cret"}`)
	s := newServer(t, f, Config{MongoURI: uri, Tap: tap})
	for _, path := range []string{"/status", "/healthz", "/metrics"} {
		_, body, _ := get(t, s.Handler(), path)
		if strings.Contains(body, "s3cret") {
			t.Errorf("GET %s shows the password:\n%s", path, body)
		}
		if path == "/status" && (!strings.Contains(body, `"mongo": "mongodb://user:xxxxx@127.0.0.1:1/"`) || !strings.Contains(body, `"message": "weird"`)) {
			t.Errorf("GET /status:\n%s", body)
		}
	}
	// Percent-encoded and JSON-escaped passwords too.
	for _, tc := range []struct{ uri, shown string }{
		{"mongodb://u:p%40ss%22w0rd@h/", `p@ss\"w0rd`},
		{"mongodb://u:p%40ss%22w0rd@h/", `p%40ss%22w0rd`},
		{"mongodb+srv://u:abc<def>@h/", `abc<def>`},
	} {
		f := sampleFake()
		f.status.BufferPath = "/x/" + strings.ReplaceAll(tc.shown, `\"`, `"`)
		f.status.Sources = nil
		_, body, _ := get(t, newServer(t, f, Config{MongoURI: tc.uri}).Handler(), "/status")
		if strings.Contains(body, tc.shown) || !strings.Contains(body, `"buffer_path": "/x/xxxxx"`) {
			t.Errorf("%s: %s", tc.uri, body)
		}
	}
}

func TestRedactURI(t *testing.T) {
	for _, tc := range []struct {
		uri, redacted string
		secrets       []string
	}{
		{"mongodb://localhost:27017", "mongodb://localhost:27017", nil},
		{"mongodb://user@h/", "mongodb://user@h/", nil},
		{"mongodb://u:s3cret@h1,h2/?replicaSet=r", "mongodb://u:xxxxx@h1,h2/?replicaSet=r", []string{"s3cret"}},
		{"mongodb://u:p%40ss@h/", "mongodb://u:xxxxx@h/", []string{"p%40ss", "p@ss"}},
		{"mongodb://u:pw@h/", "mongodb://u:xxxxx@h/", nil}, // too short to cut out
		{"mongodb://h/?tls=true&tlsCertificateKeyFilePassword=kk%2Byy", "mongodb://h/?tls=true&tlsCertificateKeyFilePassword=xxxxx", []string{"kk%2Byy", "kk+yy"}},
	} {
		r, secrets := redactURI(tc.uri)
		if r != tc.redacted || strings.Join(secrets, " ") != strings.Join(tc.secrets, " ") {
			t.Errorf("redactURI(%q) = %q %q, want %q %q", tc.uri, r, secrets, tc.redacted, tc.secrets)
		}
	}
}

// Run serves until its context ends, then shuts down and returns nil;
// an address in use is an error of Listen.
func TestRun(t *testing.T) {
	s := newServer(t, sampleFake(), Config{})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Errorf("GET /healthz: %d %q", resp.StatusCode, body)
	}

	busy := newServer(t, sampleFake(), Config{Listen: addr})
	if err := busy.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "listen on "+addr) {
		t.Errorf("second server on %s: %v", addr, err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after Run returned", addr)
	}
}

func TestNewNeedsListenAndSource(t *testing.T) {
	if _, err := New(Config{Source: &fake{}}); err == nil {
		t.Error("no listen address: no error")
	}
	if _, err := New(Config{Listen: "127.0.0.1:0"}); err == nil {
		t.Error("no source: no error")
	}
}

// The measures' counters: hits by bot class (people = views minus the bot
// classes) and by status class, bytes, and response times in seconds,
// with the fixed class names as their only labels.
func TestMetricsMeasures(t *testing.T) {
	f := sampleFake()
	m := &f.stats.Aggregator.Measures
	m[measure.Views] = 100
	m[measure.Status2xx], m[measure.Status3xx], m[measure.Status4xx], m[measure.Status5xx], m[measure.StatusOther] = 80, 9, 7, 3, 1
	m[measure.BotSearch], m[measure.BotAI], m[measure.BotTool], m[measure.BotOther], m[measure.BotSuspect] = 5, 12, 4, 2, 1
	m[measure.Bytes] = 123456789
	m[measure.RTSum], m[measure.RTCount], m[measure.RTMax] = 2_500_000, 90, 700_000
	_, body, _ := get(t, newServer(t, f, Config{}).Handler(), "/metrics")
	for _, want := range []string{
		`logtally_hits_by_class_total{class="people"} 76`,
		`logtally_hits_by_class_total{class="search"} 5`,
		`logtally_hits_by_class_total{class="ai"} 12`,
		`logtally_hits_by_class_total{class="tool"} 4`,
		`logtally_hits_by_class_total{class="bot"} 2`,
		`logtally_hits_by_class_total{class="suspect"} 1`,
		`logtally_hits_by_status_total{class="2xx"} 80`,
		`logtally_hits_by_status_total{class="3xx"} 9`,
		`logtally_hits_by_status_total{class="4xx"} 7`,
		`logtally_hits_by_status_total{class="5xx"} 3`,
		`logtally_hits_by_status_total{class="other"} 1`,
		`logtally_response_bytes_total 1.23456789e+08`,
		`logtally_response_time_seconds_total 2.5`,
		`logtally_response_time_count_total 90`,
		"# TYPE logtally_hits_by_class_total counter",
		"# TYPE logtally_response_time_seconds_total counter",
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("no %q in /metrics", want)
		}
	}
	// Six classes and five status classes, nothing else.
	if n := strings.Count(body, "\nlogtally_hits_by_class_total{"); n != 6 {
		t.Errorf("%d hits_by_class series, want 6", n)
	}
	if n := strings.Count(body, "\nlogtally_hits_by_status_total{"); n != 5 {
		t.Errorf("%d hits_by_status series, want 5", n)
	}
	// More bot hits than views (never in a real count): people is 0, not
	// a wrapped-around 2^64.
	m[measure.Views] = 10
	_, body, _ = get(t, newServer(t, f, Config{}).Handler(), "/metrics")
	if !strings.Contains(body, `logtally_hits_by_class_total{class="people"} 0`+"\n") {
		t.Errorf("people with more bots than views:\n%s", body)
	}
	problems, err := testutil.CollectAndLint(newCollector(f, "v", nil, clock.NewFake(t0), slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}
