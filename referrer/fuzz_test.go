package referrer

import (
	"strings"
	"testing"
)

// validHost reports whether h is a value Classify may return as a host:
// a normalised domain name (lower case, labels of 1 to 63 bytes of
// [a-z0-9_-], at most 253 bytes, no leading "www." before a name with a
// dot, unless IPv4-looking), an IPv4-looking name (its last label all
// digits), a bracketed IPv6 literal, or
// android-app:// and a package name. Written apart from host.go.
func validHost(h string) bool {
	if pkg, ok := strings.CutPrefix(h, appPrefix); ok {
		return labels(pkg, "abcdefghijklmnopqrstuvwxyz0123456789_")
	}
	if strings.HasPrefix(h, "[") {
		in, ok := strings.CutSuffix(h[1:], "]")
		return ok && len(in) <= 45 && strings.Count(in, ":") >= 2 && strings.Trim(in, "0123456789abcdef:.") == ""
	}
	if len(h) > 253 || !labels(h, "abcdefghijklmnopqrstuvwxyz0123456789_-") {
		return false
	}
	// www. is folded before a name with a dot, not before an
	// IPv4-looking one (its last label all digits).
	rest, www := strings.CutPrefix(h, "www.")
	last := h[strings.LastIndexByte(h, '.')+1:]
	return !www || !strings.Contains(rest, ".") || strings.Trim(last, "0123456789") == ""
}

// labels: dot-separated labels of 1 to 63 bytes of allowed.
func labels(s, allowed string) bool {
	if s == "" {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 || strings.Trim(l, allowed) != "" {
			return false
		}
	}
	return true
}

// FuzzClassify: Classify never panics; Host is a marker with its channel
// or a valid host with a list's channel or Referral; the same referrer
// gives the same result from a fresh Classifier and from the cache; a
// referrer whose host is changed in case and given a port, userinfo and
// a path gives the same result.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		"", "-", "https://www.google.com/search?q=x", "android-app://com.google.android.gm",
		"http://m.facebook.com/", "https://l.facebook.com/l.php?u=x", "https://chatgpt.com/",
		"http://0-0.fr/", "https://www.example.com:8443/", "http://[2001:db8::1]:80/",
		"https://%65xample.org/", "HTTP://WWW.EXAMPLE.ORG./", "garbage", "https://u:p@x.y.z/#f",
		"https://" + strings.Repeat("a.", 130) + "com/",
	} {
		f.Add(s)
	}
	warm := New([]string{"example.com", "*.example.net"})
	f.Fuzz(func(t *testing.T, ref string) {
		checkFastHost(t, ref)
		got := warm.Classify([]byte(ref))
		switch got.Host {
		case HostDirect:
			if got.Channel != Direct || ref != "" && ref != "-" {
				t.Fatalf("%q: %v", ref, got)
			}
		case HostSelf:
			if got.Channel != Internal {
				t.Fatalf("%q: %v", ref, got)
			}
		case HostSpam:
			if got.Channel != Spam {
				t.Fatalf("%q: %v", ref, got)
			}
		case HostInvalid:
			if got.Channel != Other {
				t.Fatalf("%q: %v", ref, got)
			}
		default:
			if !validHost(got.Host) {
				t.Fatalf("%q: host %q is not a valid host", ref, got.Host)
			}
			switch got.Channel {
			case Search, Social, Email, AI, Referral:
			default:
				t.Fatalf("%q: %v", ref, got)
			}
		}
		if fresh := New([]string{"example.com", "*.example.net"}).Classify([]byte(ref)); fresh != got {
			t.Fatalf("%q: %v fresh, %v warm", ref, fresh, got)
		}
		if again := warm.Classify([]byte(ref)); again != got {
			t.Fatalf("%q: %v again, %v first", ref, again, got)
		}
		// The same host written otherwise.
		scheme, rest, ok := strings.Cut(ref, "://")
		if !ok || got.Host == HostDirect || got.Host == HostInvalid || strings.EqualFold(scheme, "android-app") || strings.HasPrefix(got.Host, "[") {
			return
		}
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		auth := rest[:end]
		if i := strings.LastIndexByte(auth, '@'); i >= 0 {
			auth = auth[i+1:]
		}
		host, _, _ := strings.Cut(auth, ":")
		other := strings.ToUpper(scheme) + "://someone@" + strings.ToUpper(host) + ":8080/a/b?c#d"
		if o := warm.Classify([]byte(other)); o != got {
			t.Fatalf("%q: %v, but %q: %v", ref, got, other, o)
		}
	})
}

// checkFastHost: for an http(s) referrer, parseHost (which tries
// fastHost first) and webHost alone give the same host and kind.
func checkFastHost(t *testing.T, ref string) {
	rest, ok := strings.CutPrefix(ref, "http://")
	if !ok {
		if rest, ok = strings.CutPrefix(ref, "https://"); !ok {
			return
		}
	}
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	var b1, b2 [keyMax]byte
	s1, e1, k1 := parseHost([]byte(ref), &b1)
	s2, e2, k2 := webHost([]byte(rest), &b2)
	if k1 != k2 || string(b1[s1:e1]) != string(b2[s2:e2]) {
		t.Fatalf("%q: parseHost %q %v, webHost %q %v", ref, b1[s1:e1], k1, b2[s2:e2], k2)
	}
}

// TestFastHost: fastHost agrees with webHost on the edge cases it takes
// or leaves.
func TestFastHost(t *testing.T) {
	for _, ref := range []string{
		"http://a.b/", "https://a.b.", "http://a..b/", "http://.a/", "http://a./", "http://./", "http://../",
		"http://1.2.3.4:80/", "http://1.2.3.4.:80", "http://1.2.3.x/", "http://x.1/", "http://a:/", "http://a:123456/",
		"http://u@a/", "http://u:p@a:1/", "http://A%2eB/", "http://www.a.b/", "http://www.a/", "http://[::1]/",
		"https://" + strings.Repeat("a", 63) + "/", "https://" + strings.Repeat("a", 64) + "/",
		"https://" + strings.Repeat("a.", 126) + "a/", "https://" + strings.Repeat("a.", 127) + "/", "https://" + strings.Repeat("a.", 127) + "a/",
	} {
		checkFastHost(t, ref)
	}
}
