// Package hostcheck decides which Host headers logtally's HTTP endpoints
// answer: the guard against DNS rebinding, where a web page open in the
// operator's browser has its own name resolve to 127.0.0.1 (or to a
// host of the network) and reads a service there as its own origin. The
// daemon's endpoints (package observe) and the dashboard (package
// dashboard) apply the one rule, Allowed.
//
// A request is answered when its Host is an IP address in its usual form
// (a rebinding page's requests carry the page's own name, never an
// address: a page whose origin is an address is served by that address),
// localhost, or a configured name (Names: the listen address's own name
// and the configured hosts). Everything else is a name that may resolve
// anywhere, including the forms some resolvers read as an address
// (0x7f000001, 127.1, 2130706433), names that resolve to loopback on
// purpose (127.0.0.1.nip.io) and *.localhost, which browsers keep on
// loopback but other resolvers ask the network for.
package hostcheck

import (
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// Names returns the names a listener on listen (host:port) answers beside
// IP addresses and localhost: hosts, and listen's host when it is a name.
func Names(listen string, hosts []string) []string {
	names := slices.Clone(hosts)
	if h, _, err := net.SplitHostPort(listen); err == nil && h != "" && !isAddr(h) {
		names = append(names, h)
	}
	return names
}

// Allowed reports whether a request with the Host header host (with or
// without port) is answered: host is an IP address in its usual form
// (dotted quad, or IPv6 in brackets), localhost, or one of names (any
// case; a trailing dot is ignored on both).
func Allowed(host string, names []string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if isAddr(host) {
		return true
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	return slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(strings.TrimSuffix(n, "."), host) })
}

// isAddr reports whether h is an IP address in its usual form: netip
// refuses the forms of inet_aton (127.1, 0x7f000001, 017700000001).
func isAddr(h string) bool {
	_, err := netip.ParseAddr(h)
	return err == nil
}

// Message is the body of a refusal.
const Message = "host not allowed: this endpoint answers IP addresses, localhost and its configured names " +
	"(a guard against DNS rebinding)\n"

// Guard answers 403 (Message, as text) to a request whose Host is not
// Allowed, and passes the others to h.
func Guard(h http.Handler, names []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !Allowed(r.Host, names) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(Message))
			return
		}
		h.ServeHTTP(w, r)
	})
}
