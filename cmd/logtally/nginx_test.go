package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
)

// nginxPages are the pages the test requests: few, so the embedded server's
// collections stay at tens of buckets. /api/ is proxied to a second server
// (a real $upstream_response_time, a list of two when the first upstream,
// a closed port, refuses), the others are served directly (upstream "-"),
// /missing.html is a 404.
var nginxPages = []struct {
	path   string
	status int
}{{"/", 200}, {"/about.html", 200}, {"/blog/", 200}, {"/api/", 200}, {"/missing.html", 404}}

// nginxAgents are the user agents the clients send, from loggen.Agents (so
// bucketcheck knows their classes): a browser, a search engine, an AI
// crawler, curl, and none at all (nginx logs "-").
var nginxAgents = []string{
	agentLike("Chrome/124.0.0.0 Safari/537.36"), agentLike("Googlebot/2.1; +http"),
	agentLike("GPTBot"), agentLike("curl/"), "",
}

// agentLike returns the user agent of loggen.Agents containing s.
func agentLike(s string) string {
	for _, a := range loggen.Agents {
		if strings.Contains(a.UA, s) {
			return a.UA
		}
	}
	panic("no agent like " + s)
}

// TestNginxLogrotate runs the real nginx and the real logrotate: a private
// nginx serves a few pages (static, proxied to a second server, a 404) to
// 4 client goroutines sending several user agents while logtally counts
// its access log, written with measuresLogFormat ($status,
// $body_bytes_sent, $http_user_agent, $request_time,
// $upstream_response_time); on the way logrotate rotates it twice, once with
// create + postrotate (nginx reopens its log on SIGUSR1, as Debian's
// /etc/logrotate.d/nginx does) and once with copytruncate, and logtally is
// killed with SIGKILL and restarted. At the end every counter and measure of
// every bucket and site document in MongoDB must equal the counts taken from
// all access.log* files.
//
// With copytruncate, lines nginx writes between logrotate's copy and its
// truncate are lost from the files themselves; the test compares MongoDB
// with the files. nginx also writes every line to a second, never rotated
// log, which must hold every request and bounds what logtally may have read
// of those lost lines.
func TestNginxLogrotate(t *testing.T) {
	if testing.Short() {
		t.Skip("nginx test skipped in -short mode")
	}
	nginxBin, logrotateBin := findBinary("nginx"), findBinary("logrotate")
	if nginxBin == "" || logrotateBin == "" {
		t.Skip("nginx or logrotate not installed: apt-get install nginx logrotate; .ci/run installs them")
	}
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	unrotated := filepath.Join(dir, "unrotated") // nginx's second access log
	for _, d := range []string{logs, unrotated, filepath.Join(dir, "html", "blog"), filepath.Join(dir, "html", "api"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{"index.html": "home", "about.html": "about", "blog/index.html": "blog", "api/index.html": "api"} {
		writeFile(t, filepath.Join(dir, "html", name), "<!doctype html><title>"+body+"</title><p>"+body+"\n")
	}
	access := filepath.Join(logs, "access.log")
	base, stopNginx := startNginx(t, nginxBin, dir)

	srv := mongotest.Start(t)
	db := srv.Database(t)
	conf := fastConfig(t, dir, srv.URI(), db.Name(), "nginx.test", access, nginxMeasures)

	// Two logrotate configs, each with its own state file, forced with -f.
	pidFile := filepath.Join(dir, "nginx.pid")
	createConf := filepath.Join(dir, "logrotate-create.conf")
	writeFile(t, createConf, fmt.Sprintf(`%s {
	rotate 10
	missingok
	create 0644
	postrotate
		kill -USR1 "$(cat '%s')"
	endscript
}
`, access, pidFile))
	copyConf := filepath.Join(dir, "logrotate-copytruncate.conf")
	writeFile(t, copyConf, fmt.Sprintf(`%s {
	rotate 10
	missingok
	copytruncate
}
`, access))
	logrotate := func(conf, state string) {
		t.Helper()
		out, err := exec.Command(logrotateBin, "-f", "-s", filepath.Join(dir, state), conf).CombinedOutput()
		if err != nil {
			t.Fatalf("logrotate %s: %v\n%s", filepath.Base(conf), err, out)
		}
	}

	d := &host{name: "daemon", conf: conf, outDir: dir}
	d.start(t)

	// The clients: 4 goroutines, 3,000 requests in about 10 s.
	const workers, perWorker = 4, 750
	var sent, failed atomic.Int64
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	defer client.CloseIdleConnections()
	ctx, stopSending := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait() // before the cleanups stop nginx, also when the test fails early
	defer stopSending()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWorker && ctx.Err() == nil; i++ {
				page := nginxPages[(w+i)%len(nginxPages)]
				url := base + page.path
				if i%5 == 0 {
					url += fmt.Sprintf("?w=%d&i=%d", w, i) // the query is not part of the page
				}
				if err := getAs(client, url, nginxAgents[(w+i/len(nginxPages))%len(nginxAgents)], page.status); err != nil {
					if failed.Add(1) <= 3 {
						t.Errorf("GET %s: %v", url, err)
					}
				}
				sent.Add(1)
				time.Sleep(12 * time.Millisecond) // pace: about 300 requests/s in all (time is the point)
			}
		}()
	}
	total := int64(workers * perWorker)
	waitSent := func(n int64) {
		t.Helper()
		testenv.Wait(t, 60*time.Second, fmt.Sprintf("%d requests sent", n), func() bool { return sent.Load() >= n })
	}

	// Rotation 1: rename + create, nginx reopens on SIGUSR1.
	waitSent(total / 4)
	logrotate(createConf, "logrotate-create.state")
	testenv.Wait(t, 10*time.Second, "nginx writing the new access.log after SIGUSR1", func() bool {
		fi, err := os.Stat(access)
		return err == nil && fi.Size() > 0
	})

	// SIGKILL logtally and start it again while requests go on.
	waitSent(total / 2)
	d.stop(t, syscall.SIGKILL)
	d.start(t)

	// Rotation 2: copytruncate.
	waitSent(3 * total / 4)
	logrotate(copyConf, "logrotate-copytruncate.state")

	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d of %d requests failed", n, total)
	}
	// nginx writes a request's log line after the response: stop it so
	// every line is in the files before they are counted.
	stopNginx()
	for _, f := range []string{"access.log.1", "access.log.2"} {
		if fi, err := os.Stat(filepath.Join(logs, f)); err != nil || fi.Size() == 0 {
			t.Fatalf("after two rotations %s is missing or empty (%v)", f, err)
		}
	}

	requests := total + 1 // and startNginx's readiness probe
	all := bucketcheck.CountFiles(t, filepath.Join(unrotated, "access.log*"), "nginx.test")
	if all.Hits != requests {
		t.Fatalf("nginx's unrotated log holds %d hits for %d requests", all.Hits, requests)
	}
	want := bucketcheck.CountFiles(t, filepath.Join(logs, "access.log*"), "nginx.test")
	lostToCopy := all.Hits - want.Hits
	if lostToCopy < 0 || lostToCopy > 100 {
		t.Fatalf("the rotated access logs hold %d hits, nginx's unrotated log %d", want.Hits, all.Hits)
	}
	start := time.Now()
	testenv.Wait(t, 60*time.Second, fmt.Sprintf("MongoDB's monthly total to reach the %d hits in the files", want.Hits), func() bool {
		return monthTotal(t, db) >= want.Hits
	})
	waited := time.Since(start)
	d.stop(t, syscall.SIGTERM)
	got := bucketcheck.Read(t, db)
	if keep := os.Getenv("LOGTALLY_NGINX_KEEP"); keep != "" {
		os.RemoveAll(keep)
		os.CopyFS(keep, os.DirFS(dir))
		t.Logf("test directory copied to %s", keep)
	}
	if lostToCopy > 0 {
		// logtally may have read some of the lines lost to copytruncate
		// before the truncate (rarely: it must poll between logrotate's
		// copy and truncate). Every counter must lie between the rotated
		// files' count and the unrotated log's.
		t.Logf("nginx test: %d requests, %d hits in %d files (%d lost to copytruncate), %d in MongoDB: "+
			"checking every counter between the files' count and nginx's unrotated log's",
			requests, want.Hits, want.Files, lostToCopy, got.MonthTotal)
		bucketcheck.Within(t, "minute", want.Minute, all.Minute, got)
		bucketcheck.Within(t, "daily", want.Daily, all.Daily, got)
		bucketcheck.Within(t, "monthly", want.Monthly, all.Monthly, got)
		bucketcheck.Within(t, "sites", want.Sites, all.Sites, got)
		// logtally verify over the files: exact, MongoDB's extra hits
		// (read before the truncate) said apart as more in MongoDB.
		nginxVerify(t, conf, filepath.Join(logs, "access.log*"), want.Hits, false)
		return
	}
	res := bucketcheck.CompareAll(t, want, got)
	t.Logf("nginx test: %d requests, %d hits in %d files, %d minute/%d daily/%d monthly buckets, "+
		"all in MongoDB %v after the last request; %v",
		requests, want.Hits, want.Files, len(want.Minute), len(want.Daily), len(want.Monthly),
		waited.Round(time.Millisecond), res)
	// logtally verify agrees: the files are all of nginx's log.
	nginxVerify(t, conf, filepath.Join(logs, "access.log*"), want.Hits, true)
}

// nginxVerify runs logtally verify over the rotated logs glob and wants it
// exact, with hits hits (-all-hosts: MongoDB holds nothing more).
func nginxVerify(t *testing.T, conf, glob string, hits int64, allHosts bool) {
	t.Helper()
	args := []string{"-config", conf, glob}
	if allHosts {
		args = append([]string{"-all-hosts"}, args...)
	}
	out, _, code := verifyRun(t, args...)
	if n, _ := exactLine(t, out); code != 0 || int64(n) != hits {
		t.Errorf("verify: exit %d, %d hits; want 0 and %d hits", code, n, hits)
	}
}

// findBinary looks name up in PATH, then in /usr/sbin and /sbin (not in a
// non-root user's PATH on Debian).
func findBinary(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range []string{"/usr/sbin", "/sbin"} {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// startNginx starts a private nginx with its prefix, config, logs, pid file
// and temp paths in dir, serving dir/html on a free port of 127.0.0.1 (and
// /api/ through a proxy to a second server block on another port, behind a
// closed port tried first every other time), logging measuresLogFormat,
// waits
// until it has answered one request (a line in the access log) and returns
// its base URL and a func that stops it gracefully (also called at cleanup).
func startNginx(t *testing.T, bin, dir string) (base string, stop func()) {
	t.Helper()
	addr, backend, closed := testenv.FreeAddr(t), testenv.FreeAddr(t), testenv.FreeAddr(t)
	// As root without a user directive the workers run as nobody, who
	// cannot enter the test's 0700 temporary directory.
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	tmp := filepath.Join(dir, "tmp")
	conf := filepath.Join(dir, "nginx.conf")
	writeFile(t, conf, fmt.Sprintf(`%s
worker_processes 1;
pid %s;
error_log %s notice;
events { worker_connections 64; }
http {
	types { text/html html; }
	default_type application/octet-stream;
	log_format measures '%s';
	access_log %s measures;
	access_log %s measures;
	client_body_temp_path %s;
	proxy_temp_path %s;
	fastcgi_temp_path %s;
	uwsgi_temp_path %s;
	scgi_temp_path %s;
	upstream backend {
		server %s max_fails=0;
		server %s max_fails=0;
	}
	server {
		listen %s;
		root %s;
		index index.html;
		location /api/ {
			proxy_pass http://backend;
		}
	}
	server {
		listen %[13]s;
		root %[15]s;
		index index.html;
		access_log off;
	}
}
`, user, filepath.Join(dir, "nginx.pid"), filepath.Join(dir, "error.log"), measuresLogFormat,
		filepath.Join(dir, "logs", "access.log"), filepath.Join(dir, "unrotated", "access.log"),
		filepath.Join(tmp, "body"), filepath.Join(tmp, "proxy"), filepath.Join(tmp, "fastcgi"), filepath.Join(tmp, "uwsgi"), filepath.Join(tmp, "scgi"),
		closed, backend, addr, filepath.Join(dir, "html")))

	cmd := exec.Command(bin, "-p", dir, "-c", conf, "-g", "daemon off;")
	out, err := os.Create(filepath.Join(dir, "nginx.out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop = sync.OnceFunc(func() {
		cmd.Process.Signal(syscall.SIGQUIT) // graceful: the workers finish and exit with the master
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("nginx did not stop within 10 s of SIGQUIT")
		}
	})
	t.Cleanup(stop)

	base = "http://" + addr
	if !testenv.Until(20*time.Second, func() bool {
		select {
		case err := <-exited:
			exited <- err // for stop
			b, _ := os.ReadFile(filepath.Join(dir, "nginx.out"))
			e, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx exited: %v\n%s%s", err, b, e)
		default:
		}
		err = get(http.DefaultClient, base+"/")
		return err == nil
	}) {
		t.Fatalf("nginx not answering on %s: %v", addr, err)
	}
	return base, stop
}

// get requests url and wants 200 OK.
func get(c *http.Client, url string) error { return getAs(c, url, "Go-http-client/1.1", http.StatusOK) }

// getAs requests url with user agent ua (none if empty) and wants status.
func getAs(c *http.Client, url, ua string, status int) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", ua) // empty: no User-Agent header
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != status {
		return fmt.Errorf("status %s, want %d", resp.Status, status)
	}
	return nil
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
