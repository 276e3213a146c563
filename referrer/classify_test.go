package referrer

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestClassify: real-shaped referrers, each with the host and channel a
// site owner should see.
func TestClassify(t *testing.T) {
	long := strings.Repeat("a", 60) + "." + strings.Repeat("b", 60) + "." + strings.Repeat("c", 60) + "." + strings.Repeat("d", 60) + "." + strings.Repeat("e", 50) + ".com" // 300 bytes
	fit := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 57) + ".com"                                  // 253 bytes
	c := New([]string{"example.com", "blog.Example.com.", "*.example.net", "192.0.2.7", "[2001:DB8::7]"})
	reader := New(nil)
	for _, tc := range []struct {
		ref  string
		host string
		ch   Channel
	}{
		// No referrer.
		{"", HostDirect, Direct},
		{"-", HostDirect, Direct},

		// Search, social, email, AI, from the lists.
		{"https://www.google.com/search?q=x", "google.com", Search},
		{"https://www.google.com/", "google.com", Search},
		{"https://www.google.de/", "google.de", Search},                   // google.{}
		{"https://www.google.co.uk/url?sa=t", "google.co.uk", Search},     // google.{}, two-label TLD
		{"https://news.google.com/articles/x", "news.google.com", Search}, // a parent domain listed
		{"https://duckduckgo.com/", "duckduckgo.com", Search},
		{"https://www.bing.com/search?q=x&form=QBLH", "bing.com", Search},
		{"https://yandex.ru/search/?text=x", "yandex.ru", Search},
		{"android-app://com.google.android.googlequicksearchbox/https/www.google.com", "android-app://com.google.android.googlequicksearchbox", Search},
		{"http://m.facebook.com/", "m.facebook.com", Social},
		{"https://l.facebook.com/l.php?u=https%3A%2F%2Fexample.org%2F&h=AT0", "l.facebook.com", Social},
		{"https://t.co/AbCdEf", "t.co", Social},
		{"https://out.reddit.com/t3_x?url=https%3A%2F%2Fexample.org", "out.reddit.com", Social},
		{"https://news.ycombinator.com/item?id=1", "news.ycombinator.com", Social},
		{"android-app://com.google.android.gm", "android-app://com.google.android.gm", Email},
		{"android-app://com.google.android.gm/", "android-app://com.google.android.gm", Email},
		{"https://mail.google.com/", "mail.google.com", Email}, // not google.com's search
		{"https://outlook.live.com/mail/0/", "outlook.live.com", Email},
		{"https://deref-gmx.net/mail/client/x/dereferrer/?redirectUrl=y", "deref-gmx.net", Email}, // deref-gmx.{}
		{"https://deref-gmx.co.uk/", "deref-gmx.co.uk", Email},
		{"https://email.ionos.de/", "email.ionos.de", Email},
		{"https://ionos.de/", "ionos.de", Referral},
		{"https://chatgpt.com/", "chatgpt.com", AI},
		{"https://chat.openai.com/c/x", "chat.openai.com", AI},
		{"https://www.perplexity.ai/search/x", "perplexity.ai", AI},
		{"https://gemini.google.com/app", "gemini.google.com", AI}, // ours before google.com's search
		{"https://copilot.microsoft.com/", "copilot.microsoft.com", AI},
		{"https://claude.ai/chat/x", "claude.ai", AI},

		// Other sites and apps.
		{"https://blog.example.org/post?utm_source=x", "blog.example.org", Referral},
		{"https://www.example.org/", "example.org", Referral}, // www. folded
		{"https://example.org/", "example.org", Referral},
		{"http://www.localhost/", "www.localhost", Referral},          // no dot after www.: kept
		{"https://www.www.example.org/", "www.example.org", Referral}, // one www. folded
		{"https://www.www.google.com/", "www.google.com", Search},
		{"android-app://org.example.reader/", "android-app://org.example.reader", Referral},
		{"android-app://Com.Example.APP", "android-app://com.example.app", Referral},

		// Self.
		{"https://example.com/page", HostSelf, Internal},
		{"https://www.example.com:8443/page", HostSelf, Internal},
		{"HTTP://WWW.EXAMPLE.COM./", HostSelf, Internal},
		{"https://user:pw@example.com/", HostSelf, Internal},
		{"https://blog.example.com/", HostSelf, Internal},
		{"https://shop.example.com/", "shop.example.com", Referral}, // example.com names no subdomain
		{"https://example.net/", HostSelf, Internal},                // *.example.net: the domain
		{"https://a.b.example.net/", HostSelf, Internal},            // and its subdomains
		{"http://192.0.2.7:8080/", HostSelf, Internal},
		{"http://[2001:db8::7]:8080/", HostSelf, Internal},

		// Spam: a listed host, a subdomain of one.
		{"http://0-0.fr/", HostSpam, Spam},
		{"https://www.0-0.fr/x", HostSpam, Spam},
		{"https://deep.sub.0-0.fr/", HostSpam, Spam},
		{"http://qiwi.xyz/", HostSpam, Spam}, // listed as QIWI.xyz

		// Upper case and %-encoding.
		{"HTTPS://WWW.Example.ORG/Path", "example.org", Referral},
		{"https://%65xample.org/", "example.org", Referral},
		{"https://www.%47oogle.com/", "google.com", Search},
		{"https://exa%2Emple.org/", "exa.mple.org", Referral},

		// IP literals.
		{"http://[2001:DB8::1]/", "[2001:db8::1]", Referral},
		{"http://[2001:db8::1]:8080/x", "[2001:db8::1]", Referral},
		{"http://[::ffff:192.0.2.1]/", "[::ffff:192.0.2.1]", Referral},
		{"http://192.0.2.1/", "192.0.2.1", Referral},
		{"http://192.0.2.1:80", "192.0.2.1", Referral},

		// Lengths.
		{"https://" + fit + "/", fit, Referral},
		{"https://" + fit + "./", fit, Referral},
		{"https://" + long + "/", HostInvalid, Other},
		{"https://" + strings.Repeat("a", 64) + ".com/", HostInvalid, Other}, // a label over 63

		// Not a URL with a host.
		{"garbage", HostInvalid, Other},
		{" ", HostInvalid, Other},
		{"--", HostInvalid, Other},
		{"www.google.com", HostInvalid, Other}, // no scheme
		{"//www.google.com/", HostInvalid, Other},
		{"about:blank", HostInvalid, Other},
		{"ftp://example.org/", HostInvalid, Other},
		{"chrome-extension://abcdef/", HostInvalid, Other},
		{"https://", HostInvalid, Other},
		{"https:///path", HostInvalid, Other},
		{"https://exa mple.org/", HostInvalid, Other},
		{"https://ex\"ample.org/", HostInvalid, Other},
		{"https://example..org/", HostInvalid, Other},
		{"https://.example.org/", HostInvalid, Other},
		{"https://example.org:80a/", HostInvalid, Other},
		{"https://example.org:123456/", HostInvalid, Other},
		{"https://%zzexample.org/", HostInvalid, Other},
		{"https://ex%00ample.org/", HostInvalid, Other},
		{"https://ex%C3%A9mple.org/", HostInvalid, Other}, // UTF-8, not punycode
		{"https://exémple.org/", HostInvalid, Other},
		{"https://xn--exmple-cua.org/", "xn--exmple-cua.org", Referral}, // punycode, as sent
		{"http://[2001:db8::1%25eth0]/", HostInvalid, Other},
		{"http://[2001:db8::1/", HostInvalid, Other},
		{"http://[]/", HostInvalid, Other},
		{"http://[1.2.3.4]/", HostInvalid, Other},
		{"http://[::1]x/", HostInvalid, Other},
		{"android-app://", HostInvalid, Other},
		{"android-app://com..x", HostInvalid, Other},
		{"android-app://com-x.y", HostInvalid, Other},
	} {
		got := c.Classify([]byte(tc.ref))
		if got.Host != tc.host || got.Channel != tc.ch {
			t.Errorf("Classify(%q) = %q %v, want %q %v", tc.ref, got.Host, got.Channel, tc.host, tc.ch)
		}
		// Again: from the cache when remembered.
		if again := c.Classify([]byte(tc.ref)); again != got {
			t.Errorf("Classify(%q) again = %v, first %v", tc.ref, again, got)
		}
		// The host read back (a reader without the site's names) has the
		// channel counted.
		if ch, ok := reader.HostChannel(got.Host); !ok || ch != got.Channel {
			t.Errorf("HostChannel(%q) = %v %v, want %v (Classify(%q))", got.Host, ch, ok, got.Channel, tc.ref)
		}
	}
	for _, v := range []string{"(other)", "(unknown)", "Example.org", "example.org.", "example.org/x", "", "http://example.org/"} {
		if ch, ok := reader.HostChannel(v); ok {
			t.Errorf("HostChannel(%q) = %v, want none: not a host as Classify writes one", v, ch)
		}
	}
}

// TestChannel: the set is closed and names round-trip.
func TestChannel(t *testing.T) {
	seen := map[string]bool{}
	for ch := range NumChannels {
		s := ch.String()
		if seen[s] || strings.HasPrefix(s, "channel(") {
			t.Errorf("channel %d: name %q", ch, s)
		}
		seen[s] = true
		if back, ok := ParseChannel(s); !ok || back != ch {
			t.Errorf("ParseChannel(%q) = %v %v", s, back, ok)
		}
	}
	if s := Channel(42).String(); s != "channel(42)" {
		t.Errorf("Channel(42) = %q", s)
	}
	if _, ok := ParseChannel("Search"); ok {
		t.Error(`ParseChannel("Search") ok`)
	}
	if NumChannels != 9 {
		t.Errorf("%d channels: update doc.go and docs/referrers.md", NumChannels)
	}
}

func TestCheckSelf(t *testing.T) {
	for _, ok := range []string{"example.com", "www.Example.com.", "*.example.com", "192.0.2.1", "[2001:db8::1]", "localhost"} {
		if err := CheckSelf(ok); err != nil {
			t.Errorf("CheckSelf(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "*.", "*.192.0.2.1", "https://example.com", "example.com:80", "exa mple.com", "example.com/x", "android-app://com.x", "*", "a..b", "*.com"} {
		if err := CheckSelf(bad); err == nil {
			t.Errorf("CheckSelf(%q): no error", bad)
		} else if len(bad) > 3 && strings.Contains(err.Error(), bad) {
			t.Errorf("CheckSelf(%q): the error echoes the name: %v", bad, err)
		}
	}
	// A refused name is ignored by New.
	c := New([]string{"exa mple.com", "example.com"})
	if r := c.Classify([]byte("https://example.com/")); r.Channel != Internal {
		t.Errorf("self with a bad name beside: %v", r)
	}
}

// TestZeroAllocs: a host seen before allocates nothing, whatever its
// kind; no referrer and invalid ones never do.
func TestZeroAllocs(t *testing.T) {
	c := New([]string{"example.com"})
	refs := []string{
		"https://www.google.com/search?q=x",
		"https://news.google.com/x",
		"https://blog.example.org/post",
		"https://www.example.com/",
		"http://0-0.fr/",
		"android-app://com.google.android.gm",
		"http://[2001:db8::1]:8080/",
		"-",
		"garbage",
	}
	for i, ref := range refs {
		// The same referrer again (the last one), and after another
		// (from the cache).
		b, other := []byte(ref), []byte(refs[(i+1)%len(refs)])
		c.Classify(b)
		c.Classify(other)
		if n := testing.AllocsPerRun(100, func() { c.Classify(b) }); n != 0 {
			t.Errorf("Classify(%q) again: %v allocs, want 0", ref, n)
		}
		if n := testing.AllocsPerRun(100, func() { c.Classify(b); c.Classify(other) }); n != 0 {
			t.Errorf("Classify(%q) warm: %v allocs, want 0", ref, n)
		}
	}
	// A new referrer of a remembered host: a path or query never seen.
	n := 0
	ref := make([]byte, 0, 64)
	if a := testing.AllocsPerRun(100, func() {
		n++
		ref = strconv.AppendInt(append(ref[:0], "https://www.google.com/search?q="...), int64(n), 10)
		c.Classify(ref)
	}); a != 0 {
		t.Errorf("new referrers of google.com: %v allocs, want 0", a)
	}
	// A host moved back from the previous generation allocates nothing
	// either.
	c = New(nil)
	first := []byte("https://first.example.org/")
	c.Classify(first)
	for i := range DefaultCacheSize / 2 { // the last retires first's generation
		c.Classify(fmt.Appendf(nil, "https://h%d.example.org/", i))
	}
	c.recent.Clear() // first's referrer is looked up by its host
	h0, m0 := c.Stats()
	runs := 0 // AllocsPerRun's warm-up run does nothing: the run measured moves first
	if n := testing.AllocsPerRun(1, func() {
		if runs++; runs == 2 {
			c.Classify(first)
		}
	}); n != 0 {
		t.Errorf("a host from the previous generation: %v allocs, want 0", n)
	}
	if h, m := c.Stats(); h-h0 != 1 || m != m0 {
		t.Errorf("first.example.org again: %d hits, %d misses, want 1, 0", h-h0, m-m0)
	}
}

// TestCacheBounded: a flood of new hosts keeps the cache at its size, and
// results stay right after hosts are dropped.
func TestCacheBounded(t *testing.T) {
	c := New([]string{"example.com"})
	for i := range 10 * DefaultCacheSize {
		r := c.Classify(fmt.Appendf(nil, "https://x%d.spam-%d.example.org:%d/p?%d", i, i%97, i%65536, i))
		if r.Channel != Referral || !strings.HasPrefix(r.Host, "x") {
			t.Fatalf("host %d: %v", i, r)
		}
		if c.Len() > DefaultCacheSize {
			t.Fatalf("after %d hosts the cache holds %d, over %d", i+1, c.Len(), DefaultCacheSize)
		}
	}
	if c.Len() < DefaultCacheSize/2 {
		t.Errorf("cache holds %d after the flood", c.Len())
	}
	hits, misses := c.Stats()
	if hits != 0 || misses != 10*DefaultCacheSize {
		t.Errorf("stats %d hits %d misses", hits, misses)
	}
	if r := c.Classify([]byte("https://www.google.com/")); r != (Result{"google.com", Search}) {
		t.Errorf("after the flood: %v", r)
	}
	if r := c.Classify([]byte("https://example.com/")); r != (Result{HostSelf, Internal}) {
		t.Errorf("after the flood: %v", r)
	}
}

// TestListedHostInterned: a listed host's Host is the table's string.
func TestListedHostInterned(t *testing.T) {
	c := New(nil)
	r := c.Classify([]byte("https://www.google.com/search?q=1"))
	e := defaultTables().exact["google.com"]
	if r.Host != e.host || strings.Clone(r.Host) == "" || unsafeData(r.Host) != unsafeData(e.host) {
		t.Errorf("google.com's Host is not the table's string")
	}
}

// TestUpstreamOverlaps: the hosts Matomo lists as search engines and as
// something else get the something else.
func TestUpstreamOverlaps(t *testing.T) {
	c := New(nil)
	for ref, want := range map[string]Channel{
		"https://www.facebook.com/search/?q=x": Social,
		"https://you.com/search?q=x":           AI,
		"https://www.perplexity.ai/search?q=x": AI,
	} {
		if got := c.Classify([]byte(ref)); got.Channel != want {
			t.Errorf("%s: %v, want %v", ref, got, want)
		}
	}
}

// TestApacheLog classifies the referrer of every line of the real Apache
// log and checks each against net/url's reading of it: "-" is direct,
// the site's own host internal, any other host the Result's host; the
// channels' counts sum to the lines.
func TestApacheLog(t *testing.T) {
	refs, _ := apacheFields(t)
	c := New([]string{"semicomplete.com"})
	var per [NumChannels]int
	for _, ref := range refs {
		r := c.Classify(ref)
		per[r.Channel]++
		want := Result{HostDirect, Direct}
		if string(ref) != "-" {
			u, err := url.Parse(string(ref))
			h := ""
			if err == nil {
				h = strings.TrimPrefix(strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")), "www.")
			}
			switch {
			case err != nil || u.Scheme != "http" && u.Scheme != "https" || h == "":
				want = Result{HostInvalid, Other}
			case h == "semicomplete.com":
				want = Result{HostSelf, Internal}
			default:
				want = Result{h, r.Channel}
				if r.Channel == Direct || r.Channel == Internal || r.Channel == Other {
					want.Channel = Referral
				}
			}
		}
		if r != want && r.Channel != Spam {
			t.Errorf("%q: %v, want %v", ref, r, want)
		}
	}
	sum := 0
	for _, n := range per {
		sum += n
	}
	if sum != len(refs) {
		t.Errorf("channels sum to %d of %d lines", sum, len(refs))
	}
	if per[Direct] < 4000 || per[Internal] < 4000 || per[Search] < 100 {
		t.Errorf("per channel %v", per)
	}
	for ch, n := range per {
		t.Logf("%-8v %5d", Channel(ch), n)
	}
}

// TestStatsLeaveOutInvalid: as Stats says, no referrer and invalid ones
// are neither hits nor misses, seen again or not.
func TestStatsLeaveOutInvalid(t *testing.T) {
	c := New(nil)
	for _, ref := range []string{"garbage", "-", "https://a.example/", "garbage", "", "-", "about:blank", "https://b.example/", "about:blank"} {
		c.Classify([]byte(ref))
	}
	if h, m := c.Stats(); h != 0 || m != 2 {
		t.Errorf("stats %d hits %d misses, want 0, 2", h, m)
	}
}
