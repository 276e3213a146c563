package config

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/logtally/logtally/internal/httpserve"
)

// Dashboard is the [dashboard] table: the web page of the buckets
// (package dashboard), served by `logtally serve` and, with Daemon, by
// the daemon on its [http] listener.
type Dashboard struct {
	// Listen is the host:port `logtally serve` listens on. Default
	// DefaultDashboardListen (loopback). A listen that is not loopback
	// needs User and PasswordFile.
	Listen string `toml:"listen"`
	// Daemon serves the page at /dashboard/ on the daemon's [http]
	// listener too. Default false.
	Daemon bool `toml:"daemon"`
	// User and PasswordFile, when set, ask for HTTP basic authentication
	// (the file holds the password alone; Load reads it into Password).
	// Over plain HTTP the password crosses the network readable: put TLS
	// in front (the web server already on the host) beyond loopback.
	User         string `toml:"user"`
	PasswordFile string `toml:"password_file"`
	// Password is read from PasswordFile; it is never shown.
	Password string `toml:"-"`
	// Hosts are the names the page may be asked by (the Host header)
	// beside IP addresses, localhost and the listen address's own name,
	// when there is no authentication: a guard against DNS rebinding,
	// where a web page in the operator's browser reads a loopback
	// service under its own name.
	Hosts []string `toml:"hosts"`
	// Top is the number of pages of the top pages table, at most. Default
	// DefaultDashboardTop, at most MaxDashboardTop.
	Top int `toml:"top"`
}

const (
	// DefaultDashboardListen is dashboard.listen.
	DefaultDashboardListen = "127.0.0.1:9465"
	// DefaultDashboardTop is dashboard.top.
	DefaultDashboardTop = 50
	// MaxDashboardTop bounds dashboard.top.
	MaxDashboardTop = 200
)

// Auth reports whether the page asks for basic authentication.
func (d Dashboard) Auth() bool { return d.User != "" }

// readPassword reads dashboard.password_file into Password.
func (cfg *Config) readPassword(name string, data []byte) error {
	d := &cfg.Dashboard
	if d.PasswordFile == "" {
		return nil
	}
	b, err := os.ReadFile(d.PasswordFile)
	if err != nil {
		return problem(name, data, toml.Key{"dashboard", "password_file"},
			&FieldError{Field: "dashboard.password_file", Problem: fmt.Sprintf("%q: %v", d.PasswordFile, err), Err: err})
	}
	d.Password = strings.TrimRight(string(b), "\r\n")
	return nil
}

// validateDashboard checks the [dashboard] table, calling bad for each
// problem.
func (c *Config) validateDashboard(bad func(field, format string, args ...any)) {
	d := c.Dashboard
	if err := checkListen(d.Listen); err != nil {
		bad("dashboard.listen", "%q: %v", d.Listen, err)
	} else if !d.Auth() && !isLoopback(d.Listen) {
		bad("dashboard.listen", "%q is not a loopback address: the page would show every site's traffic to whoever reaches it; "+
			"set dashboard.user and dashboard.password_file, or listen on 127.0.0.1 behind the web server", d.Listen)
	}
	if d.Daemon && !d.Auth() && c.HTTP.Listen != "" && !isLoopback(c.HTTP.Listen) {
		bad("dashboard.daemon", "true with http.listen %q, not a loopback address: set dashboard.user and dashboard.password_file, "+
			"or listen on 127.0.0.1", c.HTTP.Listen)
	}
	if d.Daemon && c.HTTP.Listen == "" {
		bad("dashboard.daemon", "true with http.listen empty: the daemon has no listener to serve the page on")
	}
	switch {
	case d.User != "" && d.PasswordFile == "":
		bad("dashboard.password_file", "must be set with dashboard.user")
	case d.User == "" && d.PasswordFile != "":
		bad("dashboard.user", "must be set with dashboard.password_file")
	case strings.Contains(d.User, ":"):
		bad("dashboard.user", "must not contain ':'")
	case d.PasswordFile != "" && len(d.Password) < 8:
		bad("dashboard.password_file", "%q: the password must be at least 8 characters", d.PasswordFile)
	}
	checkHosts("dashboard.hosts", d.Hosts, bad)
	if d.Top < 1 || d.Top > MaxDashboardTop {
		bad("dashboard.top", "%d: must be from 1 to %d", d.Top, MaxDashboardTop)
	}
}

// checkHosts checks a list of Host header names (http.hosts,
// dashboard.hosts).
func checkHosts(field string, hosts []string, bad func(field, format string, args ...any)) {
	for _, h := range hosts {
		if h == "" || strings.ContainsAny(h, " /:") {
			bad(field, "%q: must be a host name or an IP address, without port", h)
		}
	}
}

// isLoopback reports whether addr (host:port) listens on loopback only:
// localhost, a *.localhost name or a loopback IP; all interfaces (an
// empty host), a routable IP or another name (which may resolve to
// anything) are not.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return httpserve.LoopbackHost(host)
}
