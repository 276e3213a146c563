package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/internal/testenv/testconfig"
)

// secretLines are log lines carrying secrets, as a symlink to /etc/shadow
// or a credential file would give the daemon: malformed ones (a shadow
// entry, a bad status, a password file) and well-formed ones (secrets in
// the query and the user agent). The secrets all contain "SECRETHASH".
var secretLines = []string{
	`root:$y$j9T$SECRETHASH1:19000:0:99999:7:::`,
	`10.0.0.1 - - [01/Feb/2026:10:00:01 +0000] "GET /SECRETHASH2 HTTP/1.1" 999 10 "-" "t"`,
	`mongodb-password=SECRETHASH3`,
	`10.0.0.1 - - [01/Feb/2026:10:00:02 +0000] "GET /reset?token=SECRETHASH4 HTTP/1.1" 200 10 "-" "SECRETHASH5"`,
	"\x00\x01SECRETHASH6\xff",
}

// The URI's secrets: the user-info password and credential options.
const (
	secretPassword = "s3cret-userpw"
	secretTLS      = "s3cret-tlspw"
	secretProxy    = "s3cret-proxypw"
)

// A daemon reading lines that carry secrets, with a MongoDB URI that
// carries a password and credential options, and http.listen on every
// interface: no secret shows in its log (at the default level), /status
// or /metrics, and the log warns that the endpoints are exposed.
func TestDaemonShowsNoSecret(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	appendCombined(t, logPath, 0, 5)
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range secretLines {
		fmt.Fprintln(f, l)
	}
	f.Close()
	_, port, _ := strings.Cut(testenv.FreeAddr(t), ":")
	dead := strings.TrimPrefix(deadMongo(t), "mongodb://")
	uri := fmt.Sprintf("mongodb://alice:%s@%s?tlsCertificateKeyFilePassword=%s&proxyPassword=%s&appName=x", secretPassword, dead, secretTLS, secretProxy)
	conf := fastConfig(t, dir, uri, config.DefaultDatabase, "s", logPath, listen("0.0.0.0:"+port), deadMongoTimings)
	earlierBuffer(t, filepath.Join(dir, "state"))
	d, out := daemon(t, conf)

	get := func(path string) (int, string) { return testenv.Get("127.0.0.1:"+port, path) }
	var metrics, status string
	if !testenv.Until(20*time.Second, func() bool {
		_, metrics = get("/metrics")
		_, status = get("/status")
		return strings.Contains(metrics, `logtally_hits_total{site="s"} 6`) && strings.Contains(status, "malformed line skipped") &&
			strings.Contains(status, `"pending_hits": 6`)
	}) {
		t.Fatalf("the 6 hits and a malformed line never showed:\n%s\n%s\nlog:\n%s", metrics, status, out)
	}
	failedFlushes(t, out, 2) // logged with their errors
	_, health := get("/healthz")
	d.Process.Signal(syscall.SIGTERM)
	d.Wait()
	log := out.String()
	for what, text := range map[string]string{"/metrics": metrics, "/healthz": health, "/status": status, "the log": log} {
		for _, s := range []string{"SECRETHASH", secretPassword, secretTLS, secretProxy} {
			if strings.Contains(text, s) {
				t.Errorf("%q shows in %s:\n%s", s, what, text)
			}
		}
	}
	for _, want := range []string{
		"alice:xxxxx@", "tlsCertificateKeyFilePassword=xxxxx", "proxyPassword=xxxxx",
		`msg="malformed line skipped"`, "component=aggregator path=" + logPath + " offset=",
		`level=WARN msg="http.listen \"0.0.0.0:`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not show %q:\n%s", want, log)
		}
	}
	if !strings.Contains(status, "tlsCertificateKeyFilePassword=xxxxx") {
		t.Errorf("/status does not show the redacted URI:\n%s", status)
	}
}

// `check` with the same URI and listen address: the URI shown redacted,
// a warning about the listen address, no secret.
func TestCheckShowsNoSecretAndWarnsOfListen(t *testing.T) {
	dir, logs := checkSetup(t)
	uri := fmt.Sprintf("mongodb://alice:%s@%s?tlsCertificateKeyFilePassword=%s&proxyPassword=%s",
		secretPassword, strings.TrimPrefix(deadMongo(t), "mongodb://"), secretTLS, secretProxy)
	conf := writeCheckConfig(t, dir, uri, []string{filepath.Join(logs, "*.log")})
	testconfig.Edit(t, conf, listen(":9464"))
	out, stderr, code := runCmd(t, "check", "-config", conf)
	if code == 0 {
		t.Errorf("check passed with MongoDB unreachable:\n%s", out)
	}
	for _, s := range []string{secretPassword, secretTLS, secretProxy} {
		if strings.Contains(out+stderr, s) {
			t.Errorf("%q shows in check's output:\n%s\n%s", s, out, stderr)
		}
	}
	if !strings.Contains(out, `warning: http.listen ":9464" is not a loopback address`) {
		t.Errorf("check does not warn of the listen address:\n%s", out)
	}
	if !strings.Contains(stderr, "alice:xxxxx@") || !strings.Contains(stderr, "tlsCertificateKeyFilePassword=xxxxx") {
		t.Errorf("check does not name the redacted URI:\n%s", stderr)
	}
}
