package httpserve

import (
	"context"
	"net"
	"strings"
	"testing"
)

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST.": true, "a.localhost": true, "127.0.0.1": true, "127.1.2.3": true,
		"::1": true, "[::1]": true, "": false, "0.0.0.0": false, "example.com": false, "localhost.example": false,
		"10.0.0.1": false, "[::]": false, "evil.localhost.example": false,
	} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// A listen name taken for loopback (localhost, *.localhost) is resolved,
// and listened on only when every address it resolves to is loopback: a
// line "192.0.2.2 dash.localhost" in /etc/hosts must not put a page
// without a password on the network.
func TestListenResolvesLoopbackNames(t *testing.T) {
	for _, tc := range []struct {
		addr  string
		addrs []string
		want  string // the host listened on, or the error
	}{
		{"dash.localhost:0", []string{"192.0.2.2"}, `listen on dash.localhost:0: dash.localhost resolves to 192.0.2.2, not a loopback address`},
		{"dash.localhost:0", []string{"127.0.0.1", "192.0.2.2"}, "resolves to 192.0.2.2, not a loopback address"},
		{"localhost:0", []string{"::1", "10.1.2.3"}, "resolves to 10.1.2.3, not a loopback address"},
		{"dash.localhost:0", nil, "dash.localhost resolves to no address"},
		{"dash.localhost:0", []string{"::1", "127.0.0.1"}, "127.0.0.1"},
		{"localhost:0", []string{"127.0.0.1", "::1"}, "127.0.0.1"},
	} {
		s := New(tc.addr, "test", nil, nil)
		asked := ""
		s.LookupHost = func(_ context.Context, host string) ([]string, error) {
			asked = host
			return tc.addrs, nil
		}
		err := s.Listen()
		if asked != strings.Split(tc.addr, ":")[0] {
			t.Errorf("%s: asked %q", tc.addr, asked)
		}
		if err != nil {
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %q: %v, want %q", tc.addr, tc.addrs, err, tc.want)
			}
			continue
		}
		host, _, _ := net.SplitHostPort(s.Addr().String())
		s.ln.Close()
		if host != tc.want {
			t.Errorf("%s %q: listened on %s, want %s", tc.addr, tc.addrs, s.Addr(), tc.want)
		}
	}
}

// localhost still works with the system's resolver, on a loopback
// address; an address is not resolved.
func TestListenLocalhost(t *testing.T) {
	for _, addr := range []string{"localhost:0", "127.0.0.1:0"} {
		s := New(addr, "test", nil, nil)
		if err := s.Listen(); err != nil {
			t.Fatal(err)
		}
		ip := s.Addr().(*net.TCPAddr).IP
		s.ln.Close()
		if !ip.IsLoopback() {
			t.Errorf("%s: listened on %s", addr, s.Addr())
		}
	}
}

func TestDialAddr(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:9464": "127.0.0.1:9464",
		":9464":          "127.0.0.1:9464",
		"0.0.0.0:1":      "127.0.0.1:1",
		"[::]:1":         "[::1]:1",
		"localhost:2":    "localhost:2",
		"[::1]:3":        "[::1]:3",
	} {
		if got := DialAddr(in); got != want {
			t.Errorf("DialAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
