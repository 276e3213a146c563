package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The running daemon serves /metrics, /healthz and /status on [http]
// listen, and the password of a MongoDB URI never shows, in them or in
// its log, even with MongoDB unreachable (errors name the address).
func TestDaemonServesMetricsWithoutPassword(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	appendCombined(t, logPath, 0, 12)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dead := strings.TrimPrefix(deadMongo(t), "mongodb://")
	conf := filepath.Join(dir, "logtally.toml")
	os.WriteFile(conf, []byte(fmt.Sprintf(`state_dir = %q
shutdown_timeout = "1s"
[mongo]
uri = "mongodb://alice:s3cret-pw@%s"
timeout = "300ms"
[buffer]
commit_interval = "50ms"
[flush]
interval = "100ms"
max_backoff = "200ms"
[http]
listen = %q
[buckets]
minute_retention = "0" # the test lines are older than the default 48h
[[source]]
site = "s"
paths = [%q]
format = "combined"
`, filepath.Join(dir, "state"), dead, addr, logPath)), 0o600)
	earlierBuffer(t, filepath.Join(dir, "state"))
	d, out := daemon(t, conf)

	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(20 * time.Second)
	var metrics string
	for {
		code, body := get("/metrics")
		if code == 200 && strings.Contains(body, `logtally_hits_total{site="s"} 12`) && strings.Contains(body, "logtally_flush_retries_total") {
			metrics = body
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics never showed 12 hits: %d %s\nlog:\n%s", code, body, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(metrics, "logtally_visitors_error_ratio 0.01625\n") {
		t.Errorf("the daemon's /metrics has no visitors (lateSource.VisitorsNow):\n%s", metrics)
	}
	code, health := get("/healthz")
	if code != 200 {
		t.Errorf("/healthz = %d %s, want 200 while the pipeline runs and http.unhealthy_after (1m) has not passed", code, health)
	}
	var status string
	for {
		_, status = get("/status")
		if strings.Contains(status, `"pending_hits": 12`) && strings.Contains(status, `"indexes_ready": false`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/status never showed the 12 pending hits:\n%s", status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // a few failed flushes, logged with their errors
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
