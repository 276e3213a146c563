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

// While the first start waits for MongoDB (no buffer.db: it is rebuilt
// from the instance's progress record), the HTTP endpoints already answer,
// and /healthz and /status say what it waits for.
func TestHealthzWhileWaitingForMongo(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	appendCombined(t, logPath, 0, 3)
	addr := testenv.FreeAddr(t)
	conf := fastConfig(t, dir, deadMongo(t), config.DefaultDatabase, "s", logPath, instance("web-1"), listen(addr), deadMongoTimings)
	d, out := daemon(t, conf)
	var code int
	var body string
	testenv.Until(20*time.Second, func() bool { // the endpoints answer
		code, body = testenv.Get(addr, "/healthz")
		return code != 0
	})
	if code != 503 || !strings.Contains(body, "waiting for MongoDB") {
		t.Errorf("/healthz while the start waits for MongoDB: %d %q, want 503 saying so\n%s", code, body, out)
	}
	if _, status := testenv.Get(addr, "/status"); !strings.Contains(status, `"health": "starting: waiting for MongoDB`) ||
		!strings.Contains(status, `"instance": "web-1"`) {
		t.Errorf("/status while the start waits for MongoDB:\n%s", status)
	}
	d.Process.Signal(syscall.SIGTERM)
	if c := exitWithin(t, d, 30*time.Second, out); c != 0 {
		t.Errorf("exit %d after SIGTERM:\n%s", c, out)
	}
}
