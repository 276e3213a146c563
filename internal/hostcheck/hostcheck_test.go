package hostcheck

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

func TestAllowed(t *testing.T) {
	names := []string{"stats.example.org", "logs.internal."}
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.1:9464": true, "127.0.0.2": true, "[::1]:9464": true, "[::1]": true,
		"localhost": true, "LocalHost:1": true, "localhost.": true, "10.0.0.5:9464": true, "[2001:db8::1]:80": true,
		"stats.example.org": true, "STATS.EXAMPLE.ORG.:443": true, "logs.internal": true,
		"": false, ":9464": false, "attacker.example": false, "attacker.example:9464": false,
		"127.0.0.1.nip.io": false, "127.0.0.1.nip.io:9464": false, "0x7f000001": false, "0x7f000001:9464": false,
		"127.1": false, "127.1:9464": false, "2130706433": false, "017700000001": false, "127.000.000.001": false,
		"a.localhost": false, "dash.localhost:9465": false, "localhost.attacker.example": false,
		"evil.stats.example.org": false, "stats.example.org.attacker.example": false,
	} {
		if got := Allowed(host, names); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		listen string
		want   []string
	}{
		{"127.0.0.1:9464", []string{"a"}},
		{":9464", []string{"a"}},
		{"[::1]:9464", []string{"a"}},
		{"dash.localhost:9465", []string{"a", "dash.localhost"}},
		{"logs.internal:9464", []string{"a", "logs.internal"}},
	} {
		if got := Names(tc.listen, []string{"a"}); !slices.Equal(got, tc.want) {
			t.Errorf("Names(%q) = %q, want %q", tc.listen, got, tc.want)
		}
	}
}

func TestGuard(t *testing.T) {
	h := Guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("secret")) }), nil)
	for host, want := range map[string]int{"127.0.0.1:9464": 200, "attacker.example": 403} {
		req := httptest.NewRequest("GET", "/status", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want || (want == 403 && rec.Body.String() != Message) {
			t.Errorf("Host %q: %d %q", host, rec.Code, rec.Body)
		}
	}
}
