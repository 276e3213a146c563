package config

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

// The keys of the operations issue: [http] listen, [log] format and level.

const opsSource = "[[source]]\nsite = \"s\"\npaths = [\"/x\"]\nformat = \"combined\"\n"

func TestOpsDefaults(t *testing.T) {
	c, err := Parse("t.toml", []byte(opsSource))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTP.Listen != DefaultHTTPListen || DefaultHTTPListen != "127.0.0.1:9464" {
		t.Errorf("http.listen = %q, want %q", c.HTTP.Listen, "127.0.0.1:9464")
	}
	if c.Log.Format != "text" || c.Log.Level != "info" {
		t.Errorf("log = %+v, want text, info", c.Log)
	}
	// Every accepted level is one slog reads.
	for _, l := range LogLevels {
		var lvl slog.Level
		if err := lvl.UnmarshalText([]byte(l)); err != nil {
			t.Errorf("level %q: %v", l, err)
		}
	}
}

func TestOpsKeys(t *testing.T) {
	for _, tc := range []struct {
		src                   string
		listen, format, level string
	}{
		{"[http]\nlisten = \"0.0.0.0:9100\"\n[log]\nformat = \"json\"\nlevel = \"debug\"\n", "0.0.0.0:9100", "json", "debug"},
		{"[http]\nlisten = \"\"\n", "", "text", "info"}, // disabled
		{"[http]\nlisten = \":9464\"\n[log]\nlevel = \"error\"\n", ":9464", "text", "error"},
		{"[http]\nlisten = \"[::1]:9464\"\n[log]\nlevel = \"warn\"\n", "[::1]:9464", "text", "warn"},
		{"[http]\nlisten = \"localhost:1\"\n", "localhost:1", "text", "info"},
	} {
		c, err := Parse("t.toml", []byte(tc.src+opsSource))
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		if c.HTTP.Listen != tc.listen || c.Log.Format != tc.format || c.Log.Level != tc.level {
			t.Errorf("%q: got %q %q %q", tc.src, c.HTTP.Listen, c.Log.Format, c.Log.Level)
		}
	}
}

func TestOpsErrorsNameKeyAndLine(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"[http]\nlisten = \"9464\"\n", `t.toml:2: http.listen: "9464": must be host:port`},
		{"[http]\nlisten = \"127.0.0.1:0\"\n", `t.toml:2: http.listen: "127.0.0.1:0": port "0" must be a number from 1 to 65535`},
		{"[http]\nlisten = \"127.0.0.1:http\"\n", `t.toml:2: http.listen: "127.0.0.1:http": port "http"`},
		{"[http]\nlisten = \"127.0.0.1:70000\"\n", `http.listen: "127.0.0.1:70000": port "70000"`},
		{"[http]\nlisten = \"http://x:1\"\n", `http.listen: "http://x:1"`},
		{"[log]\nformat = \"logfmt\"\n", `t.toml:2: log.format: "logfmt": must be one of text, json`},
		{"\n[log]\nlevel = \"verbose\"\n", `t.toml:3: log.level: "verbose": must be one of debug, info, warn, error`},
		{"[log]\nlevel = \"INFO\"\n", `log.level: "INFO": must be one of`},
		{"[log]\nlevel = \"\"\n", `log.level: "": must be one of`},
		{"[http]\nport = 1\n", `t.toml:2: http.port: unknown key`},
		{"[log]\nlevel = 3\n", `t.toml:2: log.level: incompatible types`},
	} {
		_, err := Parse("t.toml", []byte(tc.src+opsSource))
		if err == nil {
			t.Errorf("%q: no error", tc.src)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %q\ndoes not contain %q", tc.src, err, tc.want)
		}
	}
}

// [http] unhealthy_after: zero by default (the pipeline's default, from
// flush.interval), a duration of at least two flush intervals when set.
func TestUnhealthyAfter(t *testing.T) {
	c, err := Parse("t.toml", []byte(opsSource))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTP.UnhealthyAfter != 0 {
		t.Errorf("default http.unhealthy_after = %s, want 0 (the pipeline's default)", c.HTTP.UnhealthyAfter)
	}
	for src, want := range map[string]time.Duration{
		"[http]\nunhealthy_after = \"90s\"\n":                            90 * time.Second,
		"[flush]\ninterval = \"1s\"\n[http]\nunhealthy_after = \"2s\"\n": 2 * time.Second,
		"[http]\nunhealthy_after = \"0\"\n":                              0,
	} {
		c, err := Parse("t.toml", []byte(src+opsSource))
		if err != nil {
			t.Errorf("%q: %v", src, err)
			continue
		}
		if c.HTTP.UnhealthyAfter.D() != want {
			t.Errorf("%q: http.unhealthy_after = %s, want %s", src, c.HTTP.UnhealthyAfter, want)
		}
	}
}

// Paths and rotated globs that can reach /proc or /sys are refused
// naming the file, line and key: the files there are no logs, report a
// size of 0 and would be followed without a line ever read.
func TestKernelPathsRefused(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"paths = [\"/proc/self/environ\"]", `t.toml:3: source[0].paths: "/proc/self/environ": under /proc, whose files are not logs`},
		{"paths = [\"/var/log/a.log\", \"/sys/kernel/x\"]", `t.toml:3: source[0].paths: "/sys/kernel/x": under /sys, whose files are not logs`},
		{"paths = [\"/var/../proc/1/fd/*\"]", `source[0].paths: "/var/../proc/1/fd/*": under /proc`},
		{"paths = [\"//proc/x\"]", `source[0].paths: "//proc/x": under /proc`},
		{"paths = [\"/pr?c/x\"]", `source[0].paths: "/pr?c/x": under /proc`},
		{"paths = [\"/*/self/environ\"]", `source[0].paths: "/*/self/environ": under /proc`},
		{"paths = [\"/proc\"]", `source[0].paths: "/proc": under /proc`},
		{"paths = [\"/x\"]\nrotated = [\"/sys/x*\"]", `t.toml:4: source[0].rotated: "/sys/x*": under /sys`},
	} {
		src := "[[source]]\nsite = \"s\"\n" + tc.src + "\nformat = \"combined\"\n"
		_, err := Parse("t.toml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.src, err, tc.want)
		}
	}
	for _, p := range []string{"/var/log/proc/access.log", "/system/access.log", "/srv/sys/access.log", "/dev/shm/access.log", "/procs/a.log"} {
		if _, err := Parse("t.toml", []byte("[[source]]\nsite = \"s\"\npaths = [\""+p+"\"]\nformat = \"combined\"\n")); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
