package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// While the first start waits for MongoDB (no buffer.db: it is rebuilt
// from the instance's progress record), the HTTP endpoints already answer,
// and /healthz and /status say what it waits for.
func TestHealthzWhileWaitingForMongo(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	appendCombined(t, logPath, 0, 3)
	addr := freeAddr(t)
	conf := filepath.Join(dir, "logtally.toml")
	os.WriteFile(conf, []byte(fmt.Sprintf(`state_dir = %q
instance = "web-1"
shutdown_timeout = "1s"
[mongo]
uri = %q
timeout = "300ms"
[http]
listen = %q
[[source]]
site = "s"
paths = [%q]
format = "combined"
`, filepath.Join(dir, "state"), deadMongo(t), addr, logPath)), 0o600)
	d, out := daemon(t, conf)
	deadline := time.Now().Add(20 * time.Second)
	var code int
	var body string
	for {
		code, body = httpGet(addr, "/healthz")
		if code != 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code != 503 || !strings.Contains(body, "waiting for MongoDB") {
		t.Errorf("/healthz while the start waits for MongoDB: %d %q, want 503 saying so\n%s", code, body, out)
	}
	if _, status := httpGet(addr, "/status"); !strings.Contains(status, `"health": "starting: waiting for MongoDB`) ||
		!strings.Contains(status, `"instance": "web-1"`) {
		t.Errorf("/status while the start waits for MongoDB:\n%s", status)
	}
	d.Process.Signal(syscall.SIGTERM)
	if c := exitWithin(t, d, 30*time.Second, out); c != 0 {
		t.Errorf("exit %d after SIGTERM:\n%s", c, out)
	}
}
