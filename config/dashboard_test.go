package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDashboardKeys(t *testing.T) {
	c, err := Parse("t.toml", []byte(opsSource))
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Dashboard; d.Listen != DefaultDashboardListen || d.Daemon || d.Auth() || d.Top != DefaultDashboardTop {
		t.Errorf("defaults: %+v", d)
	}
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("s3cret-pass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := "[http]\nlisten = \"0.0.0.0:9464\"\nhosts = [\"metrics.example.org\"]\n[dashboard]\nlisten = \"0.0.0.0:9465\"\ndaemon = true\nuser = \"ops\"\npassword_file = \"" + pw + "\"\nhosts = [\"stats.example.org\"]\ntop = 100\n"
	c, err = Parse("t.toml", []byte(src+opsSource))
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Dashboard; d.Listen != "0.0.0.0:9465" || !d.Daemon || d.User != "ops" || d.Password != "s3cret-pass" || d.Hosts[0] != "stats.example.org" || d.Top != 100 {
		t.Errorf("decoded: %+v", d)
	}
	if h := c.HTTP.Hosts; len(h) != 1 || h[0] != "metrics.example.org" {
		t.Errorf("http.hosts: %q", h)
	}
}

// A bad [dashboard] exits 2 naming the file, the line and the key; a
// listen beyond loopback needs authentication.
func TestDashboardErrors(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("abc\n"), 0o600)
	for _, tc := range []struct{ src, want string }{
		{"[dashboard]\nlisten = \"0.0.0.0:9465\"\n", `t.toml:2: dashboard.listen: "0.0.0.0:9465" is not a loopback address`},
		{"[dashboard]\nlisten = \":9465\"\n", `t.toml:2: dashboard.listen: ":9465" is not a loopback address`},
		{"[dashboard]\nlisten = \"9465\"\n", `t.toml:2: dashboard.listen: "9465": must be host:port`},
		{"[http]\nlisten = \"0.0.0.0:9464\"\n[dashboard]\ndaemon = true\n", `t.toml:4: dashboard.daemon: true with http.listen "0.0.0.0:9464", not a loopback address`},
		{"[http]\nlisten = \"\"\n[dashboard]\ndaemon = true\n", `t.toml:4: dashboard.daemon: true with http.listen empty`},
		{"[dashboard]\nuser = \"ops\"\n", `t.toml:1: dashboard.password_file: must be set with dashboard.user`},
		{"[dashboard]\nuser = \"a:b\"\npassword_file = \"" + short + "\"\n", `dashboard.user: must not contain ':'`},
		{"[dashboard]\nuser = \"ops\"\npassword_file = \"" + short + "\"\n", `t.toml:3: dashboard.password_file: "` + short + `": the password must be at least 8 characters`},
		{"[dashboard]\nuser = \"ops\"\npassword_file = \"" + filepath.Join(dir, "none") + "\"\n", `t.toml:3: dashboard.password_file: "` + filepath.Join(dir, "none") + `": open`},
		{"[dashboard]\nhosts = [\"a.example:80\"]\n", `t.toml:2: dashboard.hosts: "a.example:80": must be a host name or an IP address, without port`},
		{"[http]\nhosts = [\"ok.example\", \"\"]\n", `t.toml:2: http.hosts: "": must be a host name or an IP address, without port`},
		{"[dashboard]\ntop = 0\n", `t.toml:2: dashboard.top: 0: must be from 1 to 200`},
		{"[dashboard]\ntop = 201\n", `t.toml:2: dashboard.top: 201: must be from 1 to 200`},
	} {
		_, err := Parse("t.toml", []byte(tc.src+opsSource))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.src, err, tc.want)
		}
	}
}

// LoadReader (query, serve) takes a file without [[source]]; Load does
// not.
func TestLoadReaderNeedsNoSource(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dash.toml")
	os.WriteFile(path, []byte("[mongo]\nuri = \"mongodb://db.example:27017\"\n[dashboard]\ntop = 20\n"), 0o600)
	c, err := LoadReader(path)
	if err != nil || c.Dashboard.Top != 20 {
		t.Errorf("LoadReader: %+v, %v", c.Dashboard, err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "source: at least one [[source]] is needed") {
		t.Errorf("Load: %v", err)
	}
}
