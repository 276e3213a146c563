package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/testenv"
)

// The running daemon serves /metrics, /healthz and /status on [http]
// listen, and the password of a MongoDB URI never shows, in them or in
// its log, even with MongoDB unreachable (errors name the address).
func TestDaemonServesMetricsWithoutPassword(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	appendCombined(t, logPath, 0, 12)
	addr := testenv.FreeAddr(t)
	dead := strings.TrimPrefix(deadMongo(t), "mongodb://")
	conf := fastConfig(t, dir, "mongodb://alice:s3cret-pw@"+dead, config.DefaultDatabase, "s", logPath, listen(addr), deadMongoTimings)
	earlierBuffer(t, filepath.Join(dir, "state"))
	d, out := daemon(t, conf)

	get := func(path string) (int, string) { return testenv.Get(addr, path) }
	var metrics string
	var code int
	if !testenv.Until(20*time.Second, func() bool {
		code, metrics = get("/metrics")
		return code == 200 && strings.Contains(metrics, `logtally_hits_total{site="s"} 12`) && strings.Contains(metrics, "logtally_flush_retries_total")
	}) {
		t.Fatalf("/metrics never showed 12 hits: %d %s\nlog:\n%s", code, metrics, out)
	}
	if !strings.Contains(metrics, "logtally_visitors_error_ratio 0.01625\n") {
		t.Errorf("the daemon's /metrics has no visitors (lateSource.VisitorsNow):\n%s", metrics)
	}
	code, health := get("/healthz")
	if code != 200 {
		t.Errorf("/healthz = %d %s, want 200 while the pipeline runs and http.unhealthy_after (1m) has not passed", code, health)
	}
	var status string
	if !testenv.Until(20*time.Second, func() bool {
		_, status = get("/status")
		return strings.Contains(status, `"pending_hits": 12`) && strings.Contains(status, `"indexes_ready": false`)
	}) {
		t.Fatalf("/status never showed the 12 pending hits:\n%s", status)
	}
	failedFlushes(t, out, 3) // a few, logged with their errors
	d.Process.Signal(syscall.SIGTERM)
	d.Wait()
	for what, text := range map[string]string{"/metrics": metrics, "/healthz": health, "/status": status, "the log": out.String()} {
		if strings.Contains(text, "s3cret") {
			t.Errorf("the password shows in %s:\n%s", what, text)
		}
	}
	if !strings.Contains(out.String(), "alice:xxxxx@") {
		t.Errorf("the log does not show the redacted URI:\n%s", out)
	}
}
