package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/internal/testenv/testconfig"
)

// checkSetup makes a logs directory holding the files a.log, b.log and
// c.txt and a directory old.log (which the tailer ignores).
func checkSetup(t *testing.T) (dir, logs string) {
	t.Helper()
	dir = t.TempDir()
	logs = filepath.Join(dir, "logs")
	if err := os.MkdirAll(filepath.Join(logs, "old.log"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.log", "b.log", "c.txt"} {
		if err := os.WriteFile(filepath.Join(logs, name), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, logs
}

// writeCheckConfig writes a config with mongo at uri and one [[source]] per
// glob list, named s0, s1, ...
func writeCheckConfig(t *testing.T, dir, uri string, sources ...[]string) string {
	t.Helper()
	c := testconfig.New(dir, testconfig.Mongo(uri, "checktest"), func(c *config.Config) { c.Mongo.Timeout = config.Duration(time.Second) })
	for i, paths := range sources {
		s := testconfig.Source(fmt.Sprintf("site%d.test", i), paths...)
		s.Name = fmt.Sprintf("s%d", i)
		c.Sources = append(c.Sources, s)
	}
	return testconfig.Write(t, filepath.Join(dir, "logtally.toml"), c)
}

func TestCheckListsFilesAndPingsMongo(t *testing.T) {
	srv := mongotest.Start(t)
	dir, logs := checkSetup(t)
	if err := os.WriteFile(filepath.Join(logs, "a.log.1.gz"), []byte("\x1f\x8b"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := writeCheckConfig(t, dir, srv.URI(),
		[]string{filepath.Join(logs, "*.log"), filepath.Join(logs, "*.gz")},
		[]string{filepath.Join(dir, "none", "*.log")})
	out, stderr, code := runCmd(t, "check", "-config", conf)
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	for _, want := range []string{
		"(2 sources)",
		"  " + filepath.Join(logs, "a.log") + "\n",
		"  " + filepath.Join(logs, "b.log") + "\n",
		"source \"s1\"",
		"(no file matches now",
		"reachable",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout does not contain %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, ".gz") {
		t.Errorf("stdout lists a compressed file the tailer would not follow:\n%s", out)
	}
	if strings.Contains(out, "old.log") {
		t.Errorf("stdout lists a directory the tailer would not follow:\n%s", out)
	}
}

func TestCheckMongoDownExits2(t *testing.T) {
	srv := mongotest.Start(t)
	srv.Stop()
	dir, logs := checkSetup(t)
	conf := writeCheckConfig(t, dir, srv.URI(), []string{filepath.Join(logs, "*.log")})
	out, stderr, code := runCmd(t, "check", "-config", conf)
	if code != 2 {
		t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if !strings.Contains(out, filepath.Join(logs, "a.log")) {
		t.Errorf("files not listed when mongo is down:\n%s", out)
	}
	if strings.Contains(out, "reachable") {
		t.Errorf("stdout says reachable:\n%s", out)
	}
	if !strings.Contains(stderr, "check failed") || !strings.Contains(stderr, "mongo "+srv.URI()) {
		t.Errorf("stderr does not name the mongo problem:\n%s", stderr)
	}
}

func TestCheckFileOfTwoSourcesExits2(t *testing.T) {
	srv := mongotest.Start(t)
	dir, logs := checkSetup(t)
	a, b, c := filepath.Join(logs, "a.log"), filepath.Join(logs, "b.log"), filepath.Join(logs, "c.txt")
	// b.log reached through a symlinked directory, c.txt by a hard link
	// and a symlink beside it: each is one file to the tailer. (A symlink
	// out of its glob's directory is not read: not listed.)
	if err := os.Symlink(logs, filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(c, filepath.Join(dir, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(c, filepath.Join(logs, "sym.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(c, filepath.Join(dir, "out.txt")); err != nil {
		t.Fatal(err)
	}
	conf := writeCheckConfig(t, dir, srv.URI(),
		[]string{filepath.Join(logs, "*.log"), filepath.Join(logs, "*.txt"), a}, // a twice in one source: fine
		[]string{a, filepath.Join(dir, "linkdir", "b.log"), filepath.Join(dir, "hard.txt")},
		[]string{filepath.Join(logs, "sym.txt"), filepath.Join(dir, "out.txt")},
	)
	out, stderr, code := runCmd(t, "check", "-config", conf)
	if code != 2 {
		t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if n := strings.Count(out, "  "+a+"\n"); n != 2 {
		t.Errorf("a.log listed %d times, want once per source:\n%s", n, out)
	}
	for _, want := range []string{
		a + ` is matched by sources "s0" and "s1"`,
		"linkdir/b.log (also as " + b + `) is matched by sources "s0" and "s1"`,
		"hard.txt (also as " + c + `) is matched by sources "s0" and "s1"`,
		"sym.txt (also as " + c + `) is matched by sources "s0" and "s2"`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not contain %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(out, "out.txt") {
		t.Errorf("a symlink out of its glob's directory listed:\n%s", out)
	}
	if n := strings.Count(stderr, "counted twice"); n != 4 {
		t.Errorf("%d duplicates reported, want 4:\n%s", n, stderr)
	}
}

// TestCheckShowsUnreadableMatch: a match the tailer cannot examine (a
// symlink loop) is shown with its error, and is not a problem: the tailer
// follows it once it can be read.
func TestCheckShowsUnreadableMatch(t *testing.T) {
	srv := mongotest.Start(t)
	dir, logs := checkSetup(t)
	loop := filepath.Join(logs, "loop.log")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	conf := writeCheckConfig(t, dir, srv.URI(), []string{filepath.Join(logs, "*.log")})
	out, stderr, code := runCmd(t, "check", "-config", conf)
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	for _, want := range []string{
		"  " + filepath.Join(logs, "a.log") + "\n",
		"  " + loop + " (stat " + loop + ": ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout does not contain %q:\n%s", want, out)
		}
	}
}

// A state_dir that is a regular file is a problem of check and of run,
// named by its key; a buffer held by a running logtally is information.
func TestStateDirChecked(t *testing.T) {
	srv := mongotest.Start(t)
	dir, logs := checkSetup(t)
	conf := writeCheckConfig(t, dir, srv.URI(), []string{filepath.Join(logs, "*.log")})
	state := filepath.Join(dir, "state")
	if err := os.WriteFile(state, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"check", "run"} {
		out, stderr, code := runCmd(t, cmd, "-config", conf)
		if code != 2 || !strings.Contains(stderr, "state_dir: \""+state+"\" is not a directory") {
			t.Errorf("%s with state_dir a file: exit %d, want 2 naming state_dir\nstdout:\n%s\nstderr:\n%s", cmd, code, out, stderr)
		}
	}

	os.Remove(state)
	testenv.OpenBuffer(t, filepath.Join(state, config.BufferFile), buffer.Options{})
	out, stderr, code := runCmd(t, "check", "-config", conf)
	if code != 0 || !strings.Contains(out, "in use by a running logtally") {
		t.Errorf("check with the buffer locked: exit %d, want 0 and a note\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
}

// check lists the config files it read, the main file first, and the
// sources of the included ones.
func TestCheckListsConfigFiles(t *testing.T) {
	srv := mongotest.Start(t)
	dir, logs := checkSetup(t)
	conf := writeCheckConfig(t, dir, srv.URI(), []string{filepath.Join(logs, "a.log")})
	sites := filepath.Join(dir, "sites.d")
	if err := os.Mkdir(sites, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"b.toml", "a.toml"} {
		testconfig.WriteSources(t, filepath.Join(sites, name), testconfig.Source(name, filepath.Join(logs, strings.Replace(name, ".toml", ".log", 1))))
	}
	out, stderr, code := runCmd(t, "check", "-config", conf)
	if code != 2 || !strings.Contains(stderr, `is matched by sources "s0" and "a.toml"`) {
		t.Fatalf("exit %d, want 2 naming a.log matched twice\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	for _, want := range []string{
		"(3 sources)",
		"config files: " + conf + ", " + filepath.Join(sites, "a.toml") + ", " + filepath.Join(sites, "b.toml") + "\n",
		"source \"b.toml\"",
		"  " + filepath.Join(logs, "b.log") + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout does not contain %q:\n%s", want, out)
		}
	}
}

// check and run refuse a source path under /proc or /sys, naming the file,
// line and key: it was followed without a line ever read (size 0).
func TestKernelPathsExit2(t *testing.T) {
	dir := t.TempDir()
	// The line of the key is the point: the file is written by hand.
	conf := filepath.Join(dir, "logtally.toml")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "state_dir = %q\n[mongo]\nuri = \"mongodb://127.0.0.1:1\"\ndatabase = \"checktest\"\ntimeout = \"1s\"\n"+
		"[[source]]\nname = \"s0\"\nsite = \"site0.test\"\nformat = \"combined\"\npaths = [\"/proc/self/environ\"]\n", filepath.Join(dir, "state")), 0o600); err != nil {
		t.Fatal(err)
	}
	want := conf + `:10: source[0].paths: "/proc/self/environ": under /proc`
	out, stderr, code := runCmd(t, "check", "-config", conf)
	if code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("check: exit %d, want 2 and %q\nstdout:\n%s\nstderr:\n%s", code, want, out, stderr)
	}
	// run would count on (without the refusal): stopped after a minute.
	var errb strings.Builder
	cmd := command("run", "-config", conf)
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("run still running after a minute with a path under /proc:\n%s", errb.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(errb.String(), want) {
		t.Errorf("run: exit %d, want 2 and %q\nstderr:\n%s", code, want, errb.String())
	}
}

// A config without [[source]] is one for serve and query: check pings
// MongoDB with its user and tells whether the user reads what the page
// reads and not the salts (with them and the visitors registers a
// guessed address can be tested). The embedded server has no
// authorization: its user reads everything, the salts included.
func TestCheckReaderConfig(t *testing.T) {
	srv := mongotest.Start(t)
	dir := t.TempDir()
	conf := testconfig.Write(t, filepath.Join(dir, "dashboard.toml"), testconfig.New(dir, testconfig.Mongo(srv.URI(), "checktest"), func(c *config.Config) {
		c.Buckets.Minute = "m1"
	}))
	out, stderr, code := runCmd(t, "check", "-config", conf)
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	for _, want := range []string{
		"no [[source]]: a config for logtally serve and query",
		"reachable",
		"mongo user: reads m1, daily, monthly, sites, visitors\n",
		"warning: the mongo user can read the salts collection",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "state_dir") {
		t.Errorf("a reader config's state_dir checked:\n%s", out)
	}
}

// The hint shows in check's output for a source without rotated.
func TestCheckSuggestsRotated(t *testing.T) {
	dir, logs := checkSetup(t)
	root := filepath.Join(dir, "etc")
	os.MkdirAll(filepath.Join(root, "logrotate.d"), 0o755)
	os.WriteFile(filepath.Join(root, "logrotate.d", "nginx"), []byte(logs+"/*.log {\n  olddir old\n}\n"), 0o644)
	old := logrotateRoot
	logrotateRoot = root
	t.Cleanup(func() { logrotateRoot = old })
	conf := writeCheckConfig(t, dir, deadMongo(t), []string{filepath.Join(logs, "*.log")})
	var stdout, stderr strings.Builder
	cmdCheck([]string{"-config", conf}, &stdout, &stderr) // MongoDB is down: an error, after the files
	out := stdout.String()
	if !strings.Contains(out, "warning: ") || !strings.Contains(out, "olddir") || !strings.Contains(out, filepath.Join(logs, "old")) {
		t.Errorf("no olddir hint:\n%s", out)
	}
}

// TestCheckReadsGeoDatabases: check reads the [geo] files as the daemon
// will and prints each with its type, build date and attribution; a file
// that is no database fails the check (exit 2) naming its path, never
// its content.
func TestCheckReadsGeoDatabases(t *testing.T) {
	srv := mongotest.Start(t)
	dir, logs := checkSetup(t)
	tor := torGeoip(t)
	bad := filepath.Join(dir, "country.mmdb")
	if err := os.WriteFile(bad, []byte("secret-looking content 203.0.113.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, country string
		code          int
		want          []string
	}{
		{"tor", tor, 0, []string{"geo country: " + tor + ", " + tor + "6 (tor geoip, built ", "  attribution: ", "IPFire"}},
		{"not a database", bad, 2, []string{bad}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testconfig.New(dir, testconfig.Mongo(srv.URI(), "checktest"), func(c *config.Config) {
				c.Sources = append(c.Sources, testconfig.Source("site.test", filepath.Join(logs, "*.log")))
				c.Geo.CountryDB = tc.country
			})
			conf := testconfig.Write(t, filepath.Join(dir, tc.name+".toml"), c)
			out, stderr, code := runCmd(t, "check", "-config", conf)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, stderr)
			}
			all := out + stderr
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("output does not contain %q:\nstdout:\n%s\nstderr:\n%s", w, out, stderr)
				}
			}
			if strings.Contains(all, "secret-looking") || strings.Contains(all, "203.0.113.9") {
				t.Errorf("the file's content is shown:\n%s", all)
			}
		})
	}
}
